"""Which inputs can change a rule's outcome (botkit.rules.deps), with plain values.

``input_of`` names each context value's input; ``dependencies`` lists a rule's; ``quiet_until``
says until when a status provably stays — checked here on real evaluations of the examples'
conditions (the property test in tests/runner/test_quiet_property.py checks it end to end)."""

from __future__ import annotations

from typing import Any

import pytest

from botkit.intents import RuleActivity
from botkit.rules import RuleStatus, evaluate
from botkit.rules.deps import (
    FOREVER,
    Input,
    Quiet,
    dependencies,
    input_of,
    quiet_until,
    reads_orders,
    rechecked,
)
from botkit.rules.model import Rule, Strategy
from tests.rules.helpers import NOW, position, snapshot, strategy

DIP = """\
  - name: dip
    when: position.qty == 0 and account.availMgn > 200 and price.mark < price.high_24h * 0.996
    place: {order: {side: BUY, px: price.mark * 0.999, sz: 1}}
"""


@pytest.mark.parametrize(
    ("key", "kind", "intervals"),
    [
        ("position.qty@BOTH", Input.BOOK, ()),
        ("position.openAvgPx@LONG", Input.BOOK, ()),
        ("positions.net.size", Input.BOOK, ()),
        ("positions.count", Input.BOOK, ()),
        ("strategy.open_orders", Input.BOOK, ()),
        ("rule.open_orders@grid", Input.BOOK, ()),
        ("instrument.tSz", Input.CONSTANT, ()),
        ("position.upl@BOTH", Input.MARKET, ()),
        ("positions.upl", Input.MARKET, ()),
        ("price.mark", Input.MARKET, ()),
        ("account.ccy.USDT.avail", Input.MARKET, ()),
        ("position.age@BOTH", Input.MARKET, ()),  # an age moves with the clock: unbounded
        ("now", Input.TIME, ()),
        ("rule.fires('1h')@grid", Input.TIME, ()),
        ("history.fills.count('1h')", Input.TIME, ()),
        ("strategy.oldest_open_ago", Input.TIME, ()),
        ("symbols.ETH_USDT_PERP.price.mark", Input.TIME, ()),
        ("close('15m')", Input.CANDLES, ("15m",)),
        ("crosses_above(ema(close('5m'), 20), ema(close('5m'), 50))", Input.CANDLES, ("5m",)),
        ("atr('1h', 14)", Input.CANDLES, ("1h",)),
        ("something.new", Input.TIME, ()),  # unknown: never assumed to stand still
    ],
)
def test_each_context_value_has_its_input(key: str, kind: Input, intervals: tuple[str]) -> None:
    assert input_of(key) == (kind, frozenset(intervals))
    assert kind.bounded is (kind in (Input.CONSTANT, Input.BOOK, Input.CANDLES))


def test_dependencies_list_the_conditions_inputs_and_the_gates() -> None:
    rules = DIP + (
        "  - name: calm\n    when: rsi(close('5m'), 14) < 30 and position.qty == 0\n"
        "    close: {}\n    cooldown: 5m\n    max_fires: {count: 2, per: 1h}\n"
        "  - name: off\n    when: false\n    cancel: {}\n    enabled: false\n"
    )
    dip, calm, off = dependencies(strategy(rules))
    assert dict(dip.inputs) == {
        "position.qty@BOTH": Input.BOOK,
        "account.availMgn": Input.MARKET,
        "price.mark": Input.MARKET,
        "price.high_24h": Input.MARKET,
    }
    assert not dip.bounded
    assert (dip.gates, dip.intervals) == ((), frozenset())
    assert calm.bounded
    assert (calm.gates, calm.intervals) == (("cooldown", "max_fires"), frozenset({"5m"}))
    assert off.bounded
    assert (off.inputs, off.gates) == ({}, ("enabled",))


def _last(strat: Strategy, **snap: Any) -> tuple[Rule, RuleStatus, dict[str, Any]]:
    """The first rule, its status and the values it read (by environment key) at NOW."""
    result = evaluate(strat, snapshot(**snap), {}, NOW).results[0]
    rule = strat.rules[0]
    shown = dict(result.values)
    values = {key: shown[display] for key, display in rule.input_names if display in shown}
    return rule, result.status, values


def test_a_condition_decided_by_the_position_stays_false_until_the_book_changes() -> None:
    rule, status, values = _last(strategy(DIP), positions=[position("2")])
    assert status is RuleStatus.CONDITION_FALSE
    assert set(values) == {"position.qty@BOTH"}  # the first operand decided
    assert quiet_until(rule, status, values) == Quiet(book=True)


@pytest.mark.parametrize(
    ("key", "orders"),
    [
        ("position.qty@BOTH", False),
        ("positions.count", False),
        ("position.lever@BOTH", False),
        ("position.availQty@BOTH", True),  # closing orders resting hold it back
        ("positions.long.availQty", True),
        ("strategy.open_orders", True),
        ("strategy.open_buys", True),
        ("rule.open_orders@grid", True),
    ],
)
def test_which_book_values_move_with_the_resting_orders(key: str, orders: bool) -> None:
    assert reads_orders(key) is orders


def test_a_condition_on_an_order_count_waits_for_the_orders_not_only_the_fills() -> None:
    rule = strategy(
        "  - name: r\n    when: position.qty == 0 and strategy.open_orders > 0\n    cancel: {}\n"
    ).rules[0]
    flat = {"position.qty@BOTH": 0, "strategy.open_orders": 0}
    assert quiet_until(rule, RuleStatus.CONDITION_FALSE, flat) == Quiet(book=True, orders=True)
    held = {"position.qty@BOTH": 1}  # the position decided: the orders may come and go
    assert quiet_until(rule, RuleStatus.CONDITION_FALSE, held) == Quiet(book=True)


def test_the_market_figures_rechecked_are_named_without_their_scope() -> None:
    for key in ("position.upl@BOTH", "positions.short.im", "account.availMgn", "price.high_24h"):
        assert rechecked(key), key
    for key in ("position.age@BOTH", "account.ccy.USDT.avail", "position.qty@BOTH"):
        assert not rechecked(key), key


def test_a_condition_decided_by_the_price_is_evaluated_every_time() -> None:
    rule, status, values = _last(strategy(DIP), mark="60000")  # flat; mark == 24h high
    assert status is RuleStatus.CONDITION_FALSE
    assert quiet_until(rule, status, values) is None


def test_a_false_condition_on_candles_waits_for_the_next_candle_of_its_interval() -> None:
    rule = strategy(
        "  - name: r\n    when: position.qty > 0 or close('15m') > 1000000\n    close: {}\n"
    ).rules[0]
    values = {"position.qty@BOTH": 0, "close('15m')": 60000}
    assert quiet_until(rule, RuleStatus.CONDITION_FALSE, values) == Quiet(True, frozenset({900000}))
    assert quiet_until(rule, RuleStatus.CONDITION_FALSE, {"position.qty@BOTH": 0}) is None


def test_gated_and_constant_statuses() -> None:
    dip = strategy(DIP).rules[0]
    assert quiet_until(dip, RuleStatus.DISABLED, {}) is FOREVER
    assert quiet_until(dip, RuleStatus.KEEP_OPEN, {}) == Quiet(book=True, orders=True)
    for status in (RuleStatus.FIRED, RuleStatus.COOLDOWN, RuleStatus.MAX_FIRES,
                   RuleStatus.SAME_SLOT, RuleStatus.ERROR, RuleStatus.WARMING_UP,
                   RuleStatus.NOTHING_TO_DO, RuleStatus.DECLARED):  # fmt: skip
        # (a cooldown or max_fires without the rule's activity cannot say when it opens)
        assert quiet_until(dip, status, {"position.qty@BOTH": 1}) is None
    never = strategy("  - name: r\n    when: 1 > 2\n    cancel: {}\n").rules[0]
    assert quiet_until(never, RuleStatus.CONDITION_FALSE, {}) is FOREVER


def test_a_failing_condition_is_never_quiet() -> None:
    rule = strategy("  - name: r\n    when: 1 / position.qty > 0\n    close: {}\n").rules[0]
    assert quiet_until(rule, RuleStatus.CONDITION_FALSE, {"position.qty@BOTH": 0}) is None


def test_a_cooldown_or_max_fires_holds_until_its_gate_opens() -> None:
    rule = strategy(
        "  - name: r\n    when: price.mark > 0\n    close: {}\n    cooldown: 5m\n"
        "    max_fires: {count: 2, per: 1h}\n"
    ).rules[0]
    m = 60_000
    fired = RuleActivity(fire_times_ms=(NOW - 50 * m, NOW - 20 * m, NOW - 2 * m))
    assert quiet_until(rule, RuleStatus.COOLDOWN, {}, fired, NOW) == Quiet(until_ms=NOW + 3 * m)
    # two of the last hour's three fires must stay in the window: the second oldest leaves at
    # NOW - 20m + 1h
    assert quiet_until(rule, RuleStatus.MAX_FIRES, {}, fired, NOW) == Quiet(until_ms=NOW + 40 * m)
    assert quiet_until(rule, RuleStatus.COOLDOWN, {}, RuleActivity(), NOW) is None
    assert quiet_until(rule, RuleStatus.MAX_FIRES, {}, RuleActivity((NOW - m,)), NOW) is None
