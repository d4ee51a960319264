"""What an order that passed the account rules is placed with (margin mode, position side,
closing, leverage, the margin it reserves) reaches the placed order and the account figures as
the rules decided it: :func:`~botkit.sim.placing.account_rules` hands the five values back as a
tuple the engine unpacks (issue 20: no object built per order placed)."""

from __future__ import annotations

from decimal import Decimal

from botkit.exchange.models import MarginMode, OrderSide, OrderType, PosSide
from botkit.sim.accounts import order_margin
from botkit.sim.orders import OrderInput
from tests.sim.conftest import BTC, Sim


def test_a_placed_order_holds_what_the_account_rules_decided(sim: Sim) -> None:
    """A resting order: the margin mode and leg asked, not closing, the leverage set for
    them, and its initial margin reserved. Fails if the values are unpacked in
    another order (the leverage and the margin are both amounts)."""
    engine = sim.engine
    engine.set_leverage(BTC, Decimal(7), MarginMode.ISOLATED)
    mark = engine.prices[BTC].mark
    px = (mark * Decimal("0.99")).quantize(Decimal(1))
    before = engine.balance().avail
    order = engine.place(
        OrderInput(
            BTC, OrderSide.BUY, OrderType.LIMIT, Decimal(3), px, MarginMode.ISOLATED, PosSide.BOTH
        )
    )
    assert (order.mgn_mode, order.pos_side, order.closing) == (
        MarginMode.ISOLATED,
        PosSide.BOTH,
        False,
    )
    assert order.lever == Decimal(7)
    inst = engine.instrument(BTC)
    need = order_margin(
        Decimal(3), px, is_buy=True, closing=False, pos_qty=Decimal(0), ct_val=inst.ctVal,
        lever=Decimal(7),
    )  # fmt: skip
    assert need > 0
    assert before - engine.balance().avail == need


def test_a_closing_order_is_placed_closing(sim: Sim) -> None:
    """A reduce-only order against an open position is placed closing; one leaving margin
    mode and leg blank takes the position's mode and BOTH."""
    engine = sim.engine
    engine.place(OrderInput(BTC, OrderSide.BUY, OrderType.MARKET, Decimal(2)))
    order = engine.place(
        OrderInput(BTC, OrderSide.SELL, OrderType.MARKET, Decimal(1), reduce_only=True)
    )
    assert order.closing is True
    assert (order.mgn_mode, order.pos_side) == (MarginMode.CROSS, PosSide.BOTH)
