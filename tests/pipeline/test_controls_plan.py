"""The pure side of the operator's controls: which orders the kill switch lets through, what a
hold does to a plan, and the close orders ``botkit flatten`` plans."""

from __future__ import annotations

import pytest

from botkit.exchange.models import (
    MarginMode,
    OrderSide,
    OrderType,
    Position,
    PositionMode,
    PosSide,
)
from botkit.pipeline import Reason, build_plan, reduces_only
from botkit.runner.manual import OPERATOR, close_intents
from tests.pipeline.helpers import SYMBOL, D, instrument, intent, snapshot

BUY, SELL = OrderSide.BUY, OrderSide.SELL
LONG, SHORT, BOTH = PosSide.LONG, PosSide.SHORT, PosSide.BOTH


@pytest.mark.parametrize(
    ("side", "pos_side", "reduce_only", "expected"),
    [
        (BUY, BOTH, False, False),
        (SELL, BOTH, False, False),
        (SELL, BOTH, True, True),
        (BUY, BOTH, True, True),
        (BUY, LONG, False, False),  # open long
        (SELL, SHORT, False, False),  # open short
        (SELL, LONG, False, True),  # close long
        (BUY, SHORT, False, True),  # close short
    ],
)
def test_which_orders_only_reduce_a_position(
    side: OrderSide, pos_side: PosSide, reduce_only: bool, expected: bool
) -> None:
    assert reduces_only(side, pos_side, reduce_only) is expected


def test_the_kill_switch_passes_reduce_only_and_hedge_closes_and_stops_the_rest() -> None:
    intents = [
        intent(0),
        intent(1, side=SELL, px="101", reduce_only=True),
        intent(2, side=SELL, px="101", pos_side=LONG),
        intent(3, side=SELL, px="101", pos_side=SHORT),
    ]
    long = [Position(symbol=SYMBOL, posSide=BOTH, qty=D("1"))]
    one_way = build_plan(intents[:2], snapshot(positions=long), kill_switch="STOP file exists")
    assert [o.intent.leg for o in one_way.accepted] == [1]
    assert [r.reasons[0].code for r in one_way.refused] == ["kill_switch"]
    legs = [Position(symbol=SYMBOL, posSide=LONG, qty=D("1"))]
    hedge = build_plan(
        intents[2:],
        snapshot(positions=legs, position_mode=PositionMode.HEDGE),
        kill_switch="STOP file exists",
    )
    assert [o.intent.leg for o in hedge.accepted] == [2]
    assert [r.intent.leg for r in hedge.refused] == [3]


def test_a_hold_refuses_every_order_even_reduce_only_and_is_one_trip() -> None:
    hold = Reason("halt", "halt file HALT exists — remove it to send again")
    plan = build_plan([intent(0), intent(1, side=SELL, reduce_only=True)], snapshot(), hold=hold)
    assert not plan.accepted
    assert [r.reasons for r in plan.refused] == [(hold,), (hold,)]
    assert [(t.guard, t.value) for t in plan.trips] == [("halt", D(2))]
    assert "NOTHING SENT (halt): halt file HALT exists" in plan.render()


def test_flatten_closes_each_leg_reduce_only_at_market_split_at_the_market_maximum() -> None:
    positions = [
        Position(symbol=SYMBOL, posSide=BOTH, qty=D("1203"), mgnMode=MarginMode.ISOLATED),
        Position(symbol="ETH_USDT_PERP", posSide=SHORT, qty=D("7")),
        Position(symbol="ETH_USDT_PERP", posSide=LONG, qty=D("2")),
        Position(symbol="SOL_USDT_PERP", posSide=BOTH, qty=D("0")),
    ]
    instruments = {
        SYMBOL: instrument(marketMaxQty=D("500")),
        "ETH_USDT_PERP": instrument(symbol="ETH_USDT_PERP", marketMaxQty=None),
    }
    out = close_intents(positions, instruments, slot=1_700_000_000_000)
    assert [(i.symbol, i.side, i.pos_side, i.sz) for i in out] == [
        (SYMBOL, SELL, BOTH, D(500)),
        (SYMBOL, SELL, BOTH, D(500)),
        (SYMBOL, SELL, BOTH, D(203)),
        ("ETH_USDT_PERP", SELL, LONG, D(2)),
        ("ETH_USDT_PERP", BUY, SHORT, D(7)),
    ]
    assert all(i.reduce_only and i.type is OrderType.MARKET and i.px is None for i in out)
    assert {i.strategy for i in out} == {OPERATOR}
    assert out[0].mgn_mode is MarginMode.ISOLATED
    assert len({i.cl_ord_id for i in out}) == len(out)


def test_a_one_way_short_is_closed_by_a_buy() -> None:
    short = Position(symbol=SYMBOL, posSide=BOTH, qty=D("-3"))
    (close,) = close_intents([short], {SYMBOL: instrument()}, slot=5)
    assert (close.side, close.sz) == (BUY, D(3))
    plan = build_plan([close], snapshot(positions=[short]), kill_switch="engaged")
    assert [o.request.sz for o in plan.accepted] == [D(3)]
