"""Candles and indicators in rules, through the runner on the simulator: only closed candles,
warm-up reported as ``warming_up``, one read per (symbol, interval) for all strategies and only
the new candles afterwards, other symbols by name."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.rules.firing import RuleStatus
from tests.runner.conftest import T0, Rig

CANDLES = ("GET", "/v3/market/candles")
MINUTE = 60_000

WATCH = """\
    strategy: {name}
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: watch
        when: {when}
        place:
          order: {{side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}}
"""


def _minutes(rig: Rig, closes: list[int], symbol: str = "BTC_USDT_PERP") -> None:
    """One minute candle per close, from T0 on (the clock ends inside the last minute)."""
    for k, close in enumerate(closes):
        rig.clock.set(T0 + k * MINUTE + 1_000)
        rig.sim.engine.set_mark(symbol, Decimal(close))


def _result(rig: Rig, name: str = "s") -> tuple[RuleStatus, str, dict[str, str]]:
    report = rig.runner.run_cycle()
    assert report.ok, report.error
    (evaluation,) = [e for e in report.evaluations if e.strategy == name]
    (result,) = evaluation.results
    return result.status, result.reason, {k: str(v) for k, v in result.values}


def test_the_candle_in_progress_is_never_read(rig: Rig) -> None:
    rig.write("s.yaml", WATCH.format(name="s", when="close('1m') > 60100"))
    _minutes(rig, [60000, 60050, 60200])  # the third minute is still open
    rig.clock.set(T0 + 2 * MINUTE + 30_000)
    status, _reason, values = _result(rig)
    assert status is RuleStatus.CONDITION_FALSE
    assert values == {"close('1m')": "60050.0"}
    rig.clock.set(T0 + 3 * MINUTE)  # now it has closed
    status, _reason, values = _result(rig)
    assert status is RuleStatus.FIRED
    assert values["close('1m')"] == "60200.0"


def test_an_indicator_short_of_candles_reports_warming_up(rig: Rig) -> None:
    rig.write("s.yaml", WATCH.format(name="s", when="sma(close('1m'), 3) > 0"))
    _minutes(rig, [60000, 60010, 60020])
    rig.clock.set(T0 + 2 * MINUTE + 5_000)  # two closed candles of the three it needs
    status, reason, _values = _result(rig)
    assert status is RuleStatus.WARMING_UP
    assert "sma(close('1m', 'BTC_USDT_PERP'), 3) is warming up (2 of 3 closed 1m candles)" in reason
    rig.clock.set(T0 + 3 * MINUTE)
    status, _reason, values = _result(rig)
    assert status is RuleStatus.FIRED
    assert values["sma(close('1m'), 3)"] == "60010.0"


def test_candles_are_read_once_for_all_strategies_then_only_new_ones(rig: Rig) -> None:
    for name in ("a", "b"):
        rig.write(f"{name}.yaml", WATCH.format(name=name, when="ema(close('1m'), 2) > 10**9"))
    _minutes(rig, [60000, 60010, 60020, 60030])
    rig.clock.set(T0 + 4 * MINUTE)
    rig.runner.run_cycle()
    assert rig.transport.calls[CANDLES] == 1  # one warm-up read for both strategies
    rig.runner.run_cycle()  # same minute: nothing new has closed
    assert rig.transport.calls[CANDLES] == 1
    rig.clock.set(T0 + 4 * MINUTE + 1_000)
    rig.sim.engine.set_mark("BTC_USDT_PERP", Decimal(60040))
    rig.clock.set(T0 + 5 * MINUTE)
    rig.runner.run_cycle()
    assert rig.transport.calls[CANDLES] == 2  # only the candle closed since


def test_another_symbol_by_name(rig: Rig) -> None:
    when = "close('1m', 'ETH_USDT_PERP') > 2000 and crosses_above(close('1m'), 60005)"
    rig.write("s.yaml", WATCH.format(name="s", when=when))
    _minutes(rig, [2100, 2200, 2300], symbol="ETH_USDT_PERP")
    _minutes(rig, [60000, 60010, 60020])
    rig.clock.set(T0 + 2 * MINUTE + 5_000)  # closed BTC: 60000, 60010 — crossed 60005
    status, _reason, values = _result(rig)
    assert status is RuleStatus.FIRED, _reason
    assert values["close('1m', 'ETH_USDT_PERP')"] == "2200.0"


@pytest.mark.parametrize(
    "when", ["close('1m', 'ETH_USDT_PERPP') > 0", "symbols.ETH_USDT_PERPP.price.mark > 0"]
)
def test_an_unknown_symbol_is_a_load_error_with_did_you_mean(rig: Rig, when: str) -> None:
    rig.write("s.yaml", WATCH.format(name="s", when=when))
    report = rig.runner.run_cycle()
    text = str(report.reload) + str(report.strategy_errors)
    assert "unknown symbol 'ETH_USDT_PERPP'" in text
    assert "did you mean 'ETH_USDT_PERP'?" in text


def test_price_instrument_and_position_of_another_symbol(rig: Rig) -> None:
    when = (
        "symbols.ETH_USDT_PERP.price.mark > 2000 and symbols.ETH_USDT_PERP.instrument.tSz > 0"
        " and symbols.ETH_USDT_PERP.position.qty == 0"
    )
    rig.write("s.yaml", WATCH.format(name="s", when=when))
    rig.sim.engine.set_mark("ETH_USDT_PERP", Decimal(2500))
    status, reason, values = _result(rig)
    assert status is RuleStatus.FIRED, reason
    assert values["symbols.ETH_USDT_PERP.price.mark"] == "2500"


def test_a_long_warm_up_is_read_in_pages_then_one_candle_at_a_time(rig: Rig) -> None:
    rig.write("s.yaml", WATCH.format(name="s", when="sma(close('1m'), 150) > 10**9"))
    closes = [60000 + k for k in range(160)]
    _minutes(rig, closes)
    rig.clock.set(T0 + 160 * MINUTE)
    status, _reason, values = _result(rig)
    assert status is RuleStatus.CONDITION_FALSE
    assert rig.transport.calls[CANDLES] == 2  # 150 candles: two pages of at most 100
    assert Decimal(values["sma(close('1m'), 150)"]) == Decimal(sum(closes[-150:])) / 150
    rig.clock.set(T0 + 160 * MINUTE + 1_000)
    rig.sim.engine.set_mark("BTC_USDT_PERP", Decimal(61000))
    rig.clock.set(T0 + 161 * MINUTE)
    _status, _reason, values = _result(rig)
    assert rig.transport.calls[CANDLES] == 3
    expected = Decimal(sum(closes[-149:]) + 61000) / 150
    assert Decimal(values["sma(close('1m'), 150)"]) == expected


KEPT = """\
    strategy: s
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: watch
        when: {when}
        keep:
          order: {{side: BUY, type: LIMIT, px: 59000, sz: 1}}
"""


def test_a_kept_rule_warming_up_leaves_its_orders_resting(rig: Rig) -> None:
    _minutes(rig, [60000, 60010])
    rig.clock.set(T0 + 2 * MINUTE)
    rig.write("s.yaml", KEPT.format(when="price.mark > 0"))
    rig.runner.run_cycle()
    assert len(rig.client.open_orders("BTC_USDT_PERP")) == 1
    rig.write("s.yaml", KEPT.format(when="price.mark > 0 and sma(close('1m'), 5) > 0"))
    rig.clock.set(T0 + 3 * MINUTE)
    status, reason, _values = _result(rig)
    assert status is RuleStatus.WARMING_UP, reason
    assert len(rig.client.open_orders("BTC_USDT_PERP")) == 1  # not cancelled for want of data
