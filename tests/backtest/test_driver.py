"""The driver: the event order inside a candle, the fill rules at candle boundaries, the cycle at
each candle close at the strategy's period, and what the result holds."""

from __future__ import annotations

import textwrap
from decimal import Decimal

import pytest

from botkit.app.backtest import run_backtest
from botkit.backtest.bars import Bar, CandleSeries
from botkit.backtest.driver import BacktestRun, price_points
from botkit.backtest.metrics import compute_figures
from botkit.backtest.setup import backtest_sim_config
from botkit.errors import UsageError
from botkit.rules.loader import loads
from botkit.sim.config import load_sim_config

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
M = 60_000
SYMBOL = "BTC_USDT_PERP"
D = Decimal


def bar(i: int, o: str, h: str, lo: str, c: str) -> Bar:
    return Bar(T0 + i * M, D(o), D(h), D(lo), D(c), D(1))


FLAT = ("60000", "60010", "59990", "60000")


def series(*rows: tuple[str, str, str, str]) -> CandleSeries:
    return CandleSeries([bar(i, *r) for i, r in enumerate(rows)], M, "<test>")


def one_order(side: str, px: str, every: str = "1m") -> str:
    """A strategy that rests one limit order at ``px`` at its first cycle and never again."""
    return textwrap.dedent(f"""\
        strategy: probe
        symbol: {SYMBOL}
        every: {every}
        rules:
          - name: rest
            when: position.qty == 0
            place:
              order: {{side: {side}, type: LIMIT, px: {px}, sz: 1}}
            max_fires: {{count: 1, per: 1d}}
        """)


def backtest(data: CandleSeries, *texts: str) -> BacktestRun:
    config = backtest_sim_config(load_sim_config(None), symbol=SYMBOL,
                                 first_price=data.bars[0].open)  # fmt: skip
    strategies = [loads(t, f"<probe {i}>") for i, t in enumerate(texts)]
    return run_backtest(data, strategies, config, symbol=SYMBOL)


@pytest.mark.parametrize(
    ("side", "px", "fills"),
    [
        ("BUY", "59950", True),  # exactly the next candle's low: the mark touches it
        ("BUY", "59949.9", False),  # one tick below the low
        ("SELL", "60050", True),  # exactly the next candle's high
        ("SELL", "60050.1", False),  # one tick above the high
    ],
)
def test_resting_order_at_the_extreme_fills_and_a_tick_beyond_does_not(
    side: str, px: str, fills: bool
) -> None:
    run = backtest(series(FLAT, ("60000", "60050", "59950", "60000"), FLAT), one_order(side, px))
    result = run.result
    assert [o.outcome for o in result.orders] == ["accepted"]
    assert [(f.side, f.px) for f in result.fills] == ([(side, D(px))] if fills else [])
    if fills:  # at the path point of that extreme inside the second candle
        extreme_at = {"BUY": T0 + M + 15_000, "SELL": T0 + M + 30_000}[side]
        assert result.fills[0].time_ms == extreme_at


def test_order_placed_at_a_close_fills_on_the_next_candles_path_not_the_current() -> None:
    # the first candle dips to 59900, below the order price, before the order exists
    first = ("60000", "60010", "59900", "60000")
    run = backtest(series(first, ("60000", "60030", "59985", "60000")), one_order("BUY", "59990"))
    fills = run.result.fills
    assert len(fills) == 1
    assert fills[0].time_ms == T0 + M + 15_000  # the second candle's low, first quarter
    assert fills[0].px == D("59990")


def test_next_candle_opening_through_a_resting_order_fills_it_at_that_open() -> None:
    gap_down = ("59980", "59985", "59970", "59975")  # opens under the BUY at 59990
    run = backtest(series(FLAT, gap_down), one_order("BUY", "59990"))
    assert [(f.time_ms, f.px) for f in run.result.fills] == [(T0 + M, D("59990"))]


def test_cycle_runs_at_the_candle_close_with_the_mark_at_the_close() -> None:
    data = series(("60000", "60100", "59900", "60040"), FLAT)
    run = backtest(data, one_order("BUY", "price.mark - 100"))
    (order,) = run.result.orders
    assert order.time_ms == T0 + M  # the first candle's close
    assert order.px == D("59940")  # its close 60040 - 100


def test_each_strategy_runs_at_its_own_period() -> None:
    data = series(*[FLAT] * 10)
    run = backtest(data, one_order("BUY", "50000", every="5m"))
    # the first close (as the service runs a strategy at start-up), then each 5-minute boundary
    assert run.cycles == 3  # closes at minutes 1, 5 and 10
    assert run.result.orders[0].time_ms == T0 + M


def test_equity_curve_has_one_point_per_candle_close_with_the_gross_exposure() -> None:
    data = series(FLAT, ("60000", "60050", "59950", "59960"), ("59960", "59970", "59900", "59900"))
    run = backtest(data, one_order("BUY", "59950"))
    points = run.result.equity
    assert [p.time_ms for p in points] == [T0 + M, T0 + 2 * M, T0 + 3 * M]
    assert [p.exposure for p in points] == [0, 1, 1]
    assert points[0].equity == D(10000)
    # long 1 contract (0.001 BTC) from 59950, marked at 59900: -0.05, less the maker fee
    fee = D("59950") * D("0.001") * D("0.0002")
    assert points[-1].equity == D(10000) - D("0.05") - fee


def test_result_holds_fills_fees_positions_and_pnl_from_the_simulator() -> None:
    data = series(FLAT, ("60000", "60050", "59950", "60020"))
    run = backtest(data, one_order("BUY", "59950"))
    result = run.result
    (position,) = result.final_positions
    assert (position.symbol, position.qty, position.avg_px) == (SYMBOL, D(1), D("59950"))
    assert result.unrealized_pnl == D("0.07")  # (60020 - 59950) × 0.001
    assert result.fees == result.fills[0].fee > 0
    assert result.realized_pnl == 0
    figures = compute_figures(result)
    assert figures.traded_notional == D("59.95")  # px × qty × contract value
    assert (result.start_ms, result.end_ms, result.candles) == (T0, T0 + 2 * M, 2)


def test_local_refusals_are_counted_by_reason() -> None:
    far = one_order("BUY", "40000")  # 33 % under the mark: outside the exchange's price band
    run = backtest(series(FLAT, FLAT), far)
    assert [o.outcome for o in run.result.orders] == ["rejected_local"]
    assert sum(run.result.refused_by_reason.values()) == 1
    assert run.result.fills == []


def test_price_points_keep_every_point_when_short_and_the_extremes_when_long() -> None:
    short = [bar(i, *FLAT) for i in range(3)]
    assert len(price_points(short, M)) == 12
    long = [bar(i, *FLAT) for i in range(1000)]
    long[500] = bar(500, "60000", "60010", "50000", "60000")  # a spike down
    points = price_points(long, M, limit=100)
    assert len(points) <= 100
    assert (T0 + 500 * M + 30_000, D(50000)) in points  # its low, after the high
    assert points == sorted(points)


def test_sim_config_for_a_replay_is_static_with_the_symbol_at_the_first_open() -> None:
    base = load_sim_config(None)
    config = backtest_sim_config(base, symbol=SYMBOL, first_price=D("42000.5"),
                                 balance=D(500), fees=(D(0), D("0.001")), seed=3)  # fmt: skip
    assert config.prices.model == "static"
    assert [(i.symbol, i.start_px) for i in config.instruments] == [(SYMBOL, D("42000.5"))]
    money = (config.balance.amount, config.fees.maker, config.fees.taker)
    assert (money, config.seed) == ((D(500), D(0), D("0.001")), 3)
    with pytest.raises(UsageError, match="DOGE_USDT_PERP is not an instrument"):
        backtest_sim_config(base, symbol="DOGE_USDT_PERP", first_price=D(1))
    with pytest.raises(UsageError, match="outside BTC_USDT_PERP's price range"):
        backtest_sim_config(base, symbol=SYMBOL, first_price=D(2_000_000))


def test_rule_errors_are_counted_by_rule_with_the_first_message() -> None:
    broken = textwrap.dedent(f"""\
        strategy: probe
        symbol: {SYMBOL}
        every: 1m
        rules:
          - name: divide
            when: 1 / position.qty > 0
            place:
              order: {{side: BUY, type: LIMIT, px: 50000, sz: 1}}
        """)
    run = backtest(series(FLAT, FLAT, FLAT), broken)
    assert run.problems == {"probe/divide": 3}
    (line,) = run.problem_lines()
    assert line.startswith("probe/divide: 3× — ")
    assert run.result.orders == []


def test_the_garbage_collector_settings_are_restored_after_a_replay() -> None:
    import gc

    # a test run earlier in this process may have frozen its heap (the runner's start-up
    # freeze): thaw it, so this checks the usual case, nothing frozen before the replay
    gc.unfreeze()
    before = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    data = series(("60000", "60050", "59950", "60000"), ("60000", "60050", "59950", "60000"))
    backtest(data, one_order("BUY", "59950"))
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


def test_a_replay_never_thaws_what_its_caller_had_frozen() -> None:
    import gc

    gc.unfreeze()
    kept = [[n] for n in range(1000)]  # container objects the caller freezes
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen >= len(kept)
    try:
        data = series(("60000", "60050", "59950", "60000"), ("60000", "60050", "59950", "60000"))
        backtest(data, one_order("BUY", "59950"))
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
