"""Passing at once the candles whose price rechecks are proven false over their closes' range.

Strategies whose exits recheck prices and figures at each close (``position.upl``,
``position.im``, ``account.availMgn``, ``price.mark`` …) are run three ways: without the skip
of quiet cycles, with the fast-forward stepping through such stretches a candle at a time
(``driver.BULK`` off), and with the stretches whose closes stay in a range of marks over which
every recheck is proven false passed at once (``driver.BULK`` on, ``MIN_BULK`` lowered so that
short stretches are passed too). Orders, fills, the equity curve, positions, money, counters
and every journal row are equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import event, given, settings
from hypothesis import strategies as st

from botkit.app.backtest import backtest_journal, execute
from botkit.backtest import driver
from botkit.backtest.setup import BacktestOptions, prepare
from botkit.clock import ManualClock
from tests.backtest.test_fast_forward import TAKE_PROFIT as HELD_TAKE_PROFIT
from tests.backtest.test_fast_forward import _flat_then, assert_same_runs
from tests.fuzz.profiles import FUZZ, examples
from tests.runner.test_quiet_property import _candles, _journal_rows

BULKED: list[int] = []
"""The candles each stretch proven quiet passed (``_Forward._bulk``), of every run."""


def _run(tmp: Path, data: Path, files: list[Path], *, skip: bool, bulk: bool) -> tuple[Any, ...]:
    prepared = prepare(BacktestOptions(data=data, strategies=tuple(files)))
    clock = ManualClock(prepared.series.start_ms)
    path = tmp / f"journal-{skip}-{bulk}.sqlite"
    journal = backtest_journal(path, clock)
    real = driver._Forward._bulk

    def counted(self: Any, start: int, envelope: Any) -> tuple[int, int | None]:
        done = real(self, start, envelope)
        BULKED.append(done[0])
        return done

    try:
        with (
            mock.patch.object(driver, "MIN_STRETCH", 1),
            mock.patch.object(driver, "MIN_BULK", 2),
            mock.patch.object(driver, "BULK", bulk),
            mock.patch.object(driver._Forward, "_bulk", counted),
        ):
            run = execute(prepared, journal=journal, clock=clock, skip_quiet=skip)
    finally:
        journal.close()
    rows, cycles = _journal_rows(path)
    return run, rows, cycles


def _same_three_ways(tmp: Path, texts: list[str], csv: str) -> tuple[Any, Any]:
    data = tmp / "candles.csv"
    data.write_text(csv)
    files = []
    for i, text in enumerate(texts):
        path = tmp / f"s{i}.yaml"
        path.write_text(text)
        files.append(path)
    plain, plain_rows, plain_cycles = _run(tmp, data, files, skip=False, bulk=False)
    step, step_rows, step_cycles = _run(tmp, data, files, skip=True, bulk=False)
    BULKED.clear()
    fast, fast_rows, fast_cycles = _run(tmp, data, files, skip=True, bulk=True)
    for other, rows, cycles in ((step, step_rows, step_cycles), (fast, fast_rows, fast_cycles)):
        assert_same_runs((plain, plain_rows, plain_cycles), (other, rows, cycles))
    assert fast_cycles == step_cycles  # the same cycles run, stepped or passed at once
    return plain, fast


FIGURES = [
    "position.upl",
    "position.im",
    "position.mm",
    "position.mgn",
    "position.markPx",
    "account.availMgn",
    "account.eq",
    "account.upl",
    "account.im",
    "price.mark",
    "price.last",
]
"""Rechecked figures the mark bounds."""
OTHERS = ["price.high_24h", "price.bid", "position.uplRatio", "account.mmr"]
"""Rechecked figures it does not (a recheck reading one is stepped through)."""


@st.composite
def figure_terms(draw: st.DrawFn) -> str:
    """A number of the figures: a figure, times a factor, plus or minus another."""
    name = draw(st.sampled_from(FIGURES + FIGURES + OTHERS))
    factor = draw(st.sampled_from(["", " * 0.05", " * 1.001", " / 2", " * -0.02"]))
    term = f"{name}{factor}"
    if draw(st.booleans()):
        other = draw(st.sampled_from(FIGURES))
        term = f"({term} {draw(st.sampled_from(['+', '-']))} {other})"
    return term


@st.composite
def exits(draw: st.DrawFn) -> str:
    """An exit condition on a held position over the figures (some comparing with a number
    near where they are, so that they turn true now and then)."""
    near = {
        "position.upl": ["0", "0.5", "-0.5", "3", "-3"],
        "position.im": ["2999", "3000", "3001"],
        "account.availMgn": ["6990", "7000", "9990"],
        "price.mark": ["59900", "60000", "60100"],
    }
    parts = []
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            name = draw(st.sampled_from(sorted(near)))
            value = draw(st.sampled_from(near[name]))
            parts.append(f"{name} {draw(st.sampled_from(['<', '>', '<=', '>=']))} {value}")
        else:
            left, right = draw(figure_terms()), draw(figure_terms())
            parts.append(f"{left} {draw(st.sampled_from(['<', '>', '==', '!=']))} {right}")
    joined = f" {draw(st.sampled_from(['and', 'or']))} ".join(f"({p})" for p in parts)
    if draw(st.booleans()):
        joined = f"not ({joined})"
    return f"position.qty != 0 and ({joined})"


@st.composite
def holders(draw: st.DrawFn) -> str:
    """Enter when flat (long or short, at once or resting a little under or over), exit on the
    random figures; maybe a cooldown on the entry."""
    side = draw(st.sampled_from(["BUY", "SELL"]))
    entry = draw(
        st.sampled_from(
            [
                f"{{order: {{side: {side}, type: MARKET, sz: 1}}}}",
                f"{{order: {{side: {side}, px: price.mark * "
                f"{'0.999' if side == 'BUY' else '1.001'}, sz: 1}}}}",
            ]
        )
    )
    gate = draw(st.sampled_from(["", "\n    cooldown: 5m"]))
    exit_ = draw(exits())
    return (
        "strategy: holder\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
        "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
        "rules:\n"
        f"  - name: enter\n    when: position.qty == 0 and strategy.open_orders == 0\n"
        f"    place: {entry}{gate}\n"
        f"  - name: leave\n    when: {exit_}\n    close: {{}}\n"
    )


@given(
    text=holders(),
    seed=st.integers(0, 10_000),
    count=st.integers(60, 240),
    swing=st.sampled_from([3, 10, 30]),
)
@settings(FUZZ, max_examples=examples(12))
def test_passing_proven_stretches_at_once_changes_no_order_fill_equity_or_journal_row(
    text: str, seed: int, count: int, swing: int, tmp_path_factory: Any
) -> None:
    tmp = tmp_path_factory.mktemp("bulk")
    _same_three_ways(tmp, [text], _candles(seed, count, swing))
    event(f"candles passed at once by proof: {'some' if sum(BULKED) else 'none'}")


TAKE_PROFIT = HELD_TAKE_PROFIT + (
    "  - name: stop\n    when: position.qty != 0 and account.availMgn < 6500\n    close: {}\n"
)
"""Enter twice, take the profit on the PnL against the margin, stop on the available margin."""


def test_a_take_profit_crossed_inside_a_long_stretch_fires_on_the_plain_replays_candle(
    tmp_path: Path,
) -> None:
    """A position is held while the price climbs a little each minute and stays a while on
    each side of the take profit's threshold (+0.25 %, where the PnL first exceeds 5 % of
    the margin at 20x): the stretches before it are passed at once, and the take profit fires
    on the candle where the plain replay's fires, the re-entry's too. A range of marks wider
    than proven (a bound flipped or the rounding inward) passes that candle and fails here."""
    special: dict[int, tuple[str, str, str, str]] = {}
    for i in range(100, 700):
        price = f"{60000 + (i - 99) // 3}.5"  # 0.33 a minute: about 450 minutes to +0.25 %
        special[i] = (price, price, price, price)
    csv = _flat_then(800, "60000.0", special)
    BULKED.clear()
    plain, fast = _same_three_ways(tmp_path, [TAKE_PROFIT], csv)
    rules = [o.rule for o in plain.result.orders]
    assert rules[:2] == ["enter", "take"]
    assert [o.rule for o in fast.result.orders] == rules
    assert sum(BULKED) > 500  # most candles in the position were passed at once


@st.composite
def dippers(draw: st.DrawFn) -> str:
    """Enter when flat and the mark is a little under (or over) the 24h high — a condition the
    24h high decides, passed at once where the stretch's tops and closes prove it false — and
    leave on the random figures."""
    side = draw(st.sampled_from(["BUY", "SELL"]))
    under = draw(st.sampled_from(["0.999", "0.998", "0.996", "0.99"]))
    compare = draw(
        st.sampled_from(
            [
                f"price.mark < price.high_24h * {under}",
                f"price.mark <= price.high_24h * {under}",
                f"price.high_24h * {under} > price.last",
                f"price.high_24h - price.mark > {draw(st.sampled_from(['30', '60', '120']))}",
                "price.mark >= price.high_24h",
            ]
        )
    )
    return (
        "strategy: dipper\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
        "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
        "rules:\n"
        f"  - name: enter\n    when: position.qty == 0 and {compare}\n"
        f"    place: {{order: {{side: {side}, type: MARKET, sz: 1}}}}\n"
        f"  - name: leave\n    when: {draw(exits())}\n    close: {{}}\n"
    )


@given(
    text=dippers(),
    seed=st.integers(0, 10_000),
    count=st.integers(60, 240),
    swing=st.sampled_from([3, 10, 30]),
)
@settings(FUZZ, max_examples=examples(12))
def test_passing_stretches_proven_under_the_24h_high_changes_no_order_fill_equity_or_row(
    text: str, seed: int, count: int, swing: int, tmp_path_factory: Any
) -> None:
    tmp = tmp_path_factory.mktemp("dip")
    _same_three_ways(tmp, [text], _candles(seed, count, swing))
    event(f"candles passed at once by proof: {'some' if sum(BULKED) else 'none'}")


DIP_ENTRY = (
    "strategy: dip\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: enter\n    when: position.qty == 0 and price.mark < price.high_24h * 0.996\n"
    "    place: {order: {side: BUY, type: MARKET, sz: 1}}\n"
)
"""Buy once the mark is 0.4 % under the 24h high (the dip ladder's condition)."""


def test_a_dip_under_a_high_made_inside_a_stretch_fires_on_the_plain_replays_candle(
    tmp_path: Path,
) -> None:
    """Flat at 60,000, then a climb of 10 a minute to 60,200 (a new 24h high), then a candle
    closing at 59,950: under 60,200 by more than 0.4 % but not under the 24h high when the
    stretch began (60,000). The flat minutes and the climb are passed at once; the dip fires
    on the candle where the plain replay's does. A 24h high bounded by its value at the
    stretch's start alone (not the stretch's tops) passes that candle and fails here."""
    special: dict[int, tuple[str, str, str, str]] = {}
    for i in range(100, 120):
        before, after = f"{60000 + (i - 100) * 10}.0", f"{60000 + (i - 99) * 10}.0"
        special[i] = (before, after, before, after)
    special[120] = ("60200.0", "60200.0", "59950.0", "59950.0")
    for i in range(121, 300):
        special[i] = ("59950.0", "59950.0", "59950.0", "59950.0")
    csv = _flat_then(300, "60000.0", special)
    BULKED.clear()
    plain, fast = _same_three_ways(tmp_path, [DIP_ENTRY], csv)
    fills = [o.time_ms for o in plain.result.orders]
    assert len(fills) == 1
    assert [o.time_ms for o in fast.result.orders] == fills
    assert sum(BULKED) > 100  # the flat minutes and the climb were passed at once


def test_a_wick_to_a_new_high_with_flat_closes_fires_on_the_plain_replays_candle(
    tmp_path: Path,
) -> None:
    """Flat at 60,000; one candle's wick reaches 60,300 and it closes at 60,000 again, inside
    the range of closes already proven: the 24h high is now 60,300 and the mark 0.5 % under
    it, so the entry fires at that close, as in the plain replay. Counting the candles whose
    closes stay in the proven range without their tops under the proof's 24h high passes it
    and fails here."""
    special = {30: ("60000.0", "60300.0", "60000.0", "60000.0")}
    csv = _flat_then(200, "60000.0", special)
    BULKED.clear()
    plain, fast = _same_three_ways(tmp_path, [DIP_ENTRY], csv)
    fills = [o.time_ms for o in plain.result.orders]
    assert len(fills) == 1
    assert [o.time_ms for o in fast.result.orders] == fills
    assert sum(BULKED) >= 20  # the flat minutes before the wick were passed at once
