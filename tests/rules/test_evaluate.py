"""Pure evaluation: gates, conditions and actions → intents, by tables of cases."""

# ruff: noqa: E501  (the tables hold one YAML snippet and its message per line, unwrapped)

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.exchange.models import (
    MarginMode,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    TimeInForce,
)
from botkit.intents import (
    Activity,
    CancelIntent,
    LeverageIntent,
    OrderIntent,
    PositionModeIntent,
    RuleActivity,
)
from botkit.rules import RuleStatus, client_order_id, evaluate
from tests.rules.helpers import HEAD_RULES, NOW, open_order, position, snapshot, strategy

D = Decimal
MIN = 60_000
SLOT = NOW // MIN

LADDER = (
    "  - name: dip\n"
    "    when: position.qty == 0 and price.mark < 61000\n"
    "    place:\n"
    "      ladder: {side: BUY, count: 3, from_px: price.mark * 0.99, step_px: 100, sz: 1 + i}\n"
)


def orders(intents: tuple[object, ...]) -> list[OrderIntent]:
    out = [i for i in intents if isinstance(i, OrderIntent)]
    assert len(out) == len(intents)
    return out


# --- gates -------------------------------------------------------------------------------------

GATE_CASES: list[tuple[str, str, Activity, int, RuleStatus, str]] = [
    ("fires", "", {}, 0, RuleStatus.FIRED, ""),
    ("disabled", "    enabled: false\n", {}, 0, RuleStatus.DISABLED,
     "the rule is disabled (enabled: false)"),
    ("keep-open-with-orders", "    keep_open: true\n", {}, 2, RuleStatus.KEEP_OPEN,
     "keep_open: 2 of its orders still rest"),
    ("keep-open-without-orders", "    keep_open: true\n", {}, 0, RuleStatus.FIRED, ""),
    ("orders-rest-but-no-keep-open", "", {}, 2, RuleStatus.FIRED, ""),
    ("cooldown-running", "    cooldown: 10m\n",
     {"dip": RuleActivity(fire_times_ms=(NOW - 3 * MIN,))}, 0, RuleStatus.COOLDOWN,
     "cooldown: fired 3m ago, cooldown 10m"),
    ("cooldown-over", "    cooldown: 10m\n",
     {"dip": RuleActivity(fire_times_ms=(NOW - 10 * MIN,))}, 0, RuleStatus.FIRED, ""),
    ("same-slot", "", {"dip": RuleActivity(fire_times_ms=(SLOT * MIN,))}, 0,
     RuleStatus.SAME_SLOT, "already fired in this evaluation slot"),
    ("max-fires-reached", "    max_fires: {count: 2, per: 1h}\n",
     {"dip": RuleActivity(fire_times_ms=(NOW - 50 * MIN, NOW - 5 * MIN))}, 0,
     RuleStatus.MAX_FIRES, "max_fires: fired 2 times in the last 1h (limit 2)"),
    ("max-fires-window-passed", "    max_fires: {count: 2, per: 1h}\n",
     {"dip": RuleActivity(fire_times_ms=(NOW - 60 * MIN, NOW - 5 * MIN))}, 0,
     RuleStatus.FIRED, ""),
    ("other-rule-activity-ignored", "    cooldown: 10m\n",
     {"other": RuleActivity(fire_times_ms=(NOW - MIN,))}, 0, RuleStatus.FIRED, ""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "activity", "resting", "status", "reason"),
    [c[1:] for c in GATE_CASES],
    ids=[c[0] for c in GATE_CASES],
)
def test_gates_decide_whether_the_rule_may_fire(
    extra: str, activity: Activity, resting: int, status: RuleStatus, reason: str
) -> None:
    s = strategy(LADDER + extra)
    resting_orders = [
        open_order(client_order_id("test", "dip", SLOT - 5, leg)) for leg in range(resting)
    ]
    result = evaluate(s, snapshot(open_orders=resting_orders), activity, NOW).result("dip")
    assert (result.status, result.reason) == (status, reason)
    assert bool(result.intents) is (status is RuleStatus.FIRED)


def test_strategy_disabled_blocks_every_rule() -> None:
    s = strategy(LADDER, header=HEAD_RULES.replace("rules:", "enabled: false\nrules:"))
    assert evaluate(s, snapshot(), {}, NOW).result("dip").status is RuleStatus.DISABLED


def test_keep_open_counts_only_this_rules_orders() -> None:
    s = strategy(LADDER + "    keep_open: true\n")
    others = [
        open_order(client_order_id("test", "other-rule", SLOT, 0)),
        open_order(client_order_id("other-strategy", "dip", SLOT, 0)),
        open_order("manual-1"),
    ]
    assert evaluate(s, snapshot(open_orders=others), {}, NOW).result("dip").fired


@pytest.mark.parametrize(
    ("mark", "qty", "status"),
    [
        ("60000", None, RuleStatus.FIRED),
        ("61000", None, RuleStatus.CONDITION_FALSE),  # boundary: < is strict
        ("60999.9", None, RuleStatus.FIRED),
        ("60000", "1", RuleStatus.CONDITION_FALSE),
    ],
)
def test_condition_decides(mark: str, qty: str | None, status: RuleStatus) -> None:
    positions = [position(qty)] if qty else []
    result = evaluate(strategy(LADDER), snapshot(mark=mark, positions=positions), {}, NOW)
    assert result.result("dip").status is status


# --- actions -----------------------------------------------------------------------------------


def test_ladder_steps_away_from_the_market_and_sizes_by_rung() -> None:
    ev = evaluate(strategy(LADDER), snapshot(), {}, NOW)
    legs = orders(ev.intents)
    assert [(o.side, o.px, o.sz) for o in legs] == [
        (OrderSide.BUY, D("59400.00"), D(1)),
        (OrderSide.BUY, D("59300.00"), D(2)),
        (OrderSide.BUY, D("59200.00"), D(3)),
    ]
    assert [o.leg for o in legs] == [0, 1, 2]
    assert [o.cl_ord_id for o in legs] == [
        client_order_id("test", "dip", SLOT, k) for k in range(3)
    ]
    assert all(o.type is OrderType.LIMIT and o.slot == SLOT for o in legs)


def test_sell_ladder_steps_up_and_to_px_spreads_evenly() -> None:
    s = strategy(
        "  - name: up\n    place:\n      ladder: {side: SELL, count: 3, from_px: 100, step_px: 5, sz: 1}\n"
        "  - name: even\n    place:\n      ladder: {side: BUY, count: 5, from_px: 100, to_px: 90, sz: 1}\n"
    )
    ev = evaluate(s, snapshot(), {}, NOW)
    assert [o.px for o in orders(ev.result("up").intents)] == [D(100), D(105), D(110)]
    assert [o.px for o in orders(ev.result("even").intents)] == [
        D("100"), D("97.5"), D("95.0"), D("92.5"), D("90.0"),
    ]  # fmt: skip


def test_grid_places_buys_below_and_sells_above() -> None:
    s = strategy(
        "  - name: g\n    place:\n      grid: {center: 100, step_px: 2, levels: 2, sz: 1}\n"
    )
    legs = orders(evaluate(s, snapshot(), {}, NOW).intents)
    assert [(o.side.value, o.px, o.leg) for o in legs] == [
        ("BUY", D(98), 0), ("BUY", D(96), 1), ("SELL", D(102), 2), ("SELL", D(104), 3),
    ]  # fmt: skip


def test_a_ladder_of_more_than_ten_orders_is_one_decision() -> None:
    s = strategy(
        "  - name: big\n    place:\n      ladder: {side: BUY, count: 25, from_px: 100, step_px: 1, sz: 1}\n"
    )
    legs = orders(evaluate(s, snapshot(), {}, NOW).intents)
    assert len(legs) == 25
    assert len({o.cl_ord_id for o in legs}) == 25


def test_order_fields_come_from_the_order_then_the_defaults() -> None:
    header = HEAD_RULES.replace(
        "rules:",
        "margin: {mode: ISOLATED}\ndefaults: {time_in_force: IOC, stp_mode: EXPIRE_TAKER}\nrules:",
    )
    s = strategy(
        "  - name: a\n    place:\n      orders:\n"
        "        - {side: BUY, px: 10, sz: 1}\n"
        "        - {side: SELL, sz: 2, time_in_force: FOK, reduce_only: true}\n",
        header=header,
    )
    first, second = orders(evaluate(s, snapshot(), {}, NOW).intents)
    assert (first.type, first.time_in_force, first.stp_mode.value, first.mgn_mode) == (
        OrderType.LIMIT, TimeInForce.IOC, "EXPIRE_TAKER", MarginMode.ISOLATED,
    )  # fmt: skip
    assert (second.type, second.px, second.time_in_force, second.reduce_only) == (
        OrderType.MARKET, None, TimeInForce.FOK, True,
    )  # fmt: skip
    assert (first.leg, second.leg) == (0, 1)


@pytest.mark.parametrize(
    ("qty", "avail", "expected"),
    [
        ("3", "3", (OrderSide.SELL, D(3))),
        ("-2", "2", (OrderSide.BUY, D(2))),
        ("5", "4", (OrderSide.SELL, D(4))),  # what is not already locked by close orders
        ("0", "0", None),
    ],
)
def test_close_is_a_reduce_only_market_order_against_the_position(
    qty: str, avail: str, expected: tuple[OrderSide, Decimal] | None
) -> None:
    s = strategy("  - name: c\n    close: {}\n")
    snap = snapshot(positions=[position(qty, availQty=D(avail))])
    result = evaluate(s, snap, {}, NOW).result("c")
    if expected is None:
        assert result.status is RuleStatus.NOTHING_TO_DO
        return
    (order,) = orders(result.intents)
    assert (order.side, order.sz) == expected
    assert (order.type, order.px, order.reduce_only) == (OrderType.MARKET, None, True)


def test_partial_limit_close_is_capped_at_the_position() -> None:
    s = strategy("  - name: c\n    close: {sz: 10, px: position.openAvgPx * 1.01}\n")
    (order,) = orders(evaluate(s, snapshot(positions=[position("4")]), {}, NOW).intents)
    assert (order.type, order.sz, order.px) == (OrderType.LIMIT, D(4), D("60600.00"))


HEDGE = HEAD_RULES.replace("rules:", "margin: {position_mode: HEDGE}\nrules:")


def test_hedge_rules_see_their_own_leg() -> None:
    s = strategy(
        "  - name: long\n    pos_side: LONG\n    when: position.qty > 0\n    close: {}\n"
        "  - name: short\n    pos_side: SHORT\n    when: position.qty < 0\n    close: {}\n"
        "  - name: open-short\n    pos_side: SHORT\n    place: {order: {side: SELL, px: 61000, sz: 1}}\n",
        header=HEDGE,
    )
    snap = snapshot(
        mode=PositionMode.HEDGE,
        positions=[position("2", pos_side="LONG"), position("3", pos_side="SHORT", side="SELL")],
    )
    ev = evaluate(s, snap, {}, NOW)
    (close_long,) = orders(ev.result("long").intents)
    (close_short,) = orders(ev.result("short").intents)
    (open_short,) = orders(ev.result("open-short").intents)
    assert (close_long.side, close_long.pos_side, close_long.sz) == (
        OrderSide.SELL,
        PosSide.LONG,
        D(2),
    )
    assert (close_short.side, close_short.pos_side, close_short.sz) == (
        OrderSide.BUY,
        PosSide.SHORT,
        D(3),
    )
    assert (open_short.side, open_short.pos_side) == (OrderSide.SELL, PosSide.SHORT)
    assert ev.result("short").inputs == {"position.qty": "-3"}


def test_hedge_close_without_pos_side_closes_both_legs() -> None:
    s = strategy("  - name: flat\n    close: {}\n", header=HEDGE)
    snap = snapshot(
        positions=[position("2", pos_side="LONG"), position("3", pos_side="SHORT", side="SELL")]
    )
    legs = orders(evaluate(s, snap, {}, NOW).intents)
    assert [(o.side, o.pos_side, o.sz, o.leg) for o in legs] == [
        (OrderSide.SELL, PosSide.LONG, D(2), 0),
        (OrderSide.BUY, PosSide.SHORT, D(3), 1),
    ]


def test_cancel_leverage_and_position_mode_intents() -> None:
    s = strategy(
        "  - name: stop\n    cancel: {}\n"
        "  - name: stop-dip\n    cancel: {rule: stop}\n"
        "  - name: lever\n    set_leverage: {lever: 5}\n"
        "  - name: mode\n    set_position_mode: HEDGE\n"
    )
    ev = evaluate(s, snapshot(), {}, NOW)
    assert ev.intents == (
        CancelIntent("test", "stop", "BTC_USDT_PERP", None),
        CancelIntent("test", "stop-dip", "BTC_USDT_PERP", "stop"),
        LeverageIntent("test", "lever", "BTC_USDT_PERP", 5, MarginMode.CROSS, PosSide.BOTH),
        PositionModeIntent("test", "mode", PositionMode.HEDGE),
    )


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("sz: position.qty", "sz evaluated to 0, must be > 0 (position.qty)"),
        ("sz: 1, px: price.mark - 70000", "px evaluated to -10000, must be > 0"),
    ],
)
def test_an_impossible_order_is_an_error_not_an_intent(field: str, message: str) -> None:
    s = strategy(f"  - name: bad\n    place: {{order: {{side: BUY, {field}}}}}\n")
    result = evaluate(s, snapshot(), {}, NOW).result("bad")
    assert result.status is RuleStatus.ERROR
    assert message in result.reason


def test_ladder_count_must_be_whole() -> None:
    s = strategy(
        "  - name: l\n    place:\n      ladder: {side: BUY, count: price.mark / 7, from_px: 10, step_px: 1, sz: 1}\n"
    )
    result = evaluate(s, snapshot(), {}, NOW).result("l")
    assert result.status is RuleStatus.ERROR
    assert "ladder count evaluated to 8571.42" in result.reason


def test_one_failing_rule_does_not_stop_the_others() -> None:
    s = strategy(
        "  - name: broken\n    when: 1 / position.qty > 0\n    cancel: {}\n"
        "  - name: fine\n    cancel: {}\n"
    )
    ev = evaluate(s, snapshot(), {}, NOW)
    assert [r.status for r in ev.results] == [RuleStatus.ERROR, RuleStatus.FIRED]
    assert ev.errors[0].reason == "rule 'broken': division by zero in '1 / position.qty > 0'"
    assert ev.fired == ("fine",)


def test_same_decision_twice_gives_the_same_intents() -> None:
    s = strategy(LADDER)
    first = evaluate(s, snapshot(), {}, NOW)
    again = evaluate(s, snapshot(), {}, NOW + 39_999)  # NOW is 20 s into its minute
    later = evaluate(s, snapshot(), {}, NOW + MIN)
    assert first.intents == again.intents
    assert {o.cl_ord_id for o in orders(first.intents)}.isdisjoint(
        o.cl_ord_id for o in orders(later.intents)
    )


def test_inputs_record_what_the_rule_read_as_decimal_strings() -> None:
    ev = evaluate(strategy(LADDER), snapshot(mark="60000.50"), {}, NOW)
    result = ev.result("dip")
    assert result.inputs == {"position.qty": "0", "price.mark": "60000.50"}
    assert orders(result.intents)[0].inputs == result.inputs
    assert (ev.strategy, ev.slot, ev.now_ms) == ("test", SLOT, NOW)
    assert len(ev.version) == 64


def test_strategy_says_how_far_back_activity_and_history_must_reach() -> None:
    s = strategy(
        "  - name: a\n    when: rule.fires('2d') < 3 and history.fills.count('6h') == 0\n"
        "    cooldown: 3d\n    cancel: {}\n"
        "  - name: b\n    max_fires: {count: 1, per: 7d}\n    cancel: {}\n"
    )
    assert s.activity_window_ms == 7 * 86_400_000
    assert s.history_window_ms == 6 * 3_600_000
    quiet = strategy("  - name: a\n    cancel: {}\n")
    assert (quiet.activity_window_ms, quiet.history_window_ms) == (86_400_000, 0)
