"""A closing order with nothing left to close is refused in the plan, not sent for the exchange to
refuse with 10018: no position on its leg, the position on the order's own side, or closing
MARKET orders earlier in the same plan (another strategy's, say) that close all of it."""

from __future__ import annotations

from botkit.exchange.models import OrderSide, OrderType, Position, PositionMode, PosSide
from botkit.intents import OrderIntent
from botkit.pipeline import Plan, build_plan
from tests.pipeline.helpers import SYMBOL, D, instrument, intent, snapshot

BUY, SELL = OrderSide.BUY, OrderSide.SELL
LONG, SHORT, BOTH = PosSide.LONG, PosSide.SHORT, PosSide.BOTH
MARKET = OrderType.MARKET


def close(n: int, sz: str, *, side: OrderSide = SELL, strategy: str = "s1") -> OrderIntent:
    return intent(n, side=side, type=MARKET, px=None, sz=sz, strategy=strategy, reduce_only=True)


def held(qty: str, pos_side: PosSide = BOTH) -> list[Position]:
    return [Position(symbol=SYMBOL, posSide=pos_side, qty=D(qty))]


def codes(plan: Plan) -> dict[str, str]:
    out = {o.cl_ord_id: "sent" for o in plan.accepted}
    out.update({r.cl_ord_id: r.reasons[0].code for r in plan.refused})
    return out


def test_two_strategies_closing_one_position_send_one_close() -> None:
    plan = build_plan(
        [close(0, "2", strategy="exit-a"), close(1, "2", strategy="exit-b")],
        snapshot(positions=held("2")),
    )
    assert codes(plan) == {"exit-a-r1-0": "sent", "exit-b-r1-1": "no_position_to_close"}
    (refusal,) = plan.refused
    assert refusal.reasons[0].message == (
        f"the position on {SYMBOL} is closed in full by exit-a/r1 (exit-a-r1-0) earlier in this"
        " cycle — the exchange would refuse this one too (10018 no position to close); nothing"
        " to do when the rules closing it agree"
    )
    assert "no_position_to_close" in plan.render()
    assert f"refused exit-b-r1-1 exit-b/r1 SELL 2 {SYMBOL} MARKET reduce-only" in plan.render()


def test_closes_that_leave_some_of_the_position_all_go_out() -> None:
    plan = build_plan([close(0, "1"), close(1, "1"), close(2, "1")], snapshot(positions=held("3")))
    assert set(codes(plan).values()) == {"sent"}
    plan = build_plan([close(0, "2"), close(1, "2"), close(2, "2")], snapshot(positions=held("3")))
    assert list(codes(plan).values()) == ["sent", "sent", "no_position_to_close"]


def test_a_close_without_a_position_or_on_the_wrong_side_is_refused() -> None:
    flat = build_plan([close(0, "1")], snapshot())
    assert flat.refused[0].reasons[0].message == (
        f"no position on {SYMBOL} to close — the exchange would refuse this closing order"
        " (10018 no position to close); a closing order needs the position open when it is sent"
        " (reduce-only orders leave before the cycle's other orders, so one placed with its"
        " entry finds none): place it from a rule that fires once the position is open, e.g."
        " when: position.qty != 0"
    )
    short = build_plan([close(0, "1")], snapshot(positions=held("-1")))  # a SELL close of a short
    assert (
        short.refused[0]
        .reasons[0]
        .message.startswith(
            f"no position on {SYMBOL} to close (the position is -1, the same side as the order) —"
        )
    )
    assert codes(build_plan([close(0, "1", side=BUY)], snapshot(positions=held("-1")))) == {
        "s1-r1-0": "sent"
    }


def test_closing_limit_orders_close_nothing_until_they_fill() -> None:
    limit = intent(0, side=SELL, px="101", reduce_only=True)  # a take-profit resting above
    plan = build_plan([limit, close(1, "2")], snapshot(positions=held("2")))
    assert set(codes(plan).values()) == {"sent"}


def test_an_order_opening_the_leg_earlier_in_the_plan_lets_its_closes_through() -> None:
    # one strategy's entry at market and its take-profit in one cycle: the entry may fill first
    entry = intent(0, side=BUY, type=MARKET, px=None, sz="1", strategy="a", pos_side=LONG)
    stop = intent(1, side=SELL, px="101", sz="1", strategy="a", pos_side=LONG)
    hedge = snapshot(position_mode=PositionMode.HEDGE)
    assert set(codes(build_plan([entry, stop], hedge)).values()) == {"sent"}
    alone = build_plan([stop], hedge)
    assert (
        alone.refused[0].reasons[0].message.startswith(f"no LONG position on {SYMBOL} to close —")
    )


def test_hedge_legs_are_judged_apart() -> None:
    both_legs = [
        Position(symbol=SYMBOL, posSide=LONG, qty=D("2")),
        Position(symbol=SYMBOL, posSide=SHORT, qty=D("3")),
    ]
    intents = [
        intent(0, side=SELL, type=MARKET, px=None, sz="2", pos_side=LONG),
        intent(1, side=SELL, type=MARKET, px=None, sz="2", pos_side=LONG),
        intent(2, side=BUY, type=MARKET, px=None, sz="3", pos_side=SHORT),
    ]
    plan = build_plan(intents, snapshot(positions=both_legs, position_mode=PositionMode.HEDGE))
    assert codes(plan) == {
        "s1-r1-0": "sent",
        "s1-r1-1": "no_position_to_close",
        "s1-r1-2": "sent",
    }
    assert (
        plan.refused[0]
        .reasons[0]
        .message.startswith(f"the LONG position on {SYMBOL} is closed in full by s1/r1 (s1-r1-0)")
    )
    assert f"refused s1-r1-1 s1/r1 SELL 2 {SYMBOL} MARKET LONG\n" in plan.render()
    assert f"s1-r1-2 s1/r1 BUY 3 {SYMBOL} MARKET SHORT\n" in plan.render()


def test_a_close_of_a_strategy_whose_planning_fails_closes_nothing() -> None:
    """Strategy a's close is planned first, then a's other order fails to plan and takes a's
    orders out: b's close of the same position goes out (a's never does)."""
    broken = instrument(symbol="ETH_USDT_PERP").model_copy(update={"lotSz": "not a number"})
    plan = build_plan(
        [
            close(0, "2", strategy="a"),
            close(1, "2", strategy="b"),
            intent(2, strategy="a", symbol="ETH_USDT_PERP"),
        ],
        snapshot(positions=held("2"), instruments={SYMBOL: instrument(), "ETH_USDT_PERP": broken}),
    )
    assert codes(plan) == {
        "a-r1-0": "planning_failed",
        "b-r1-1": "sent",
        "a-r1-2": "planning_failed",
    }
