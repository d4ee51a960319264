"""A declared order's size is floored to its instrument's lot once for a run of checks with the
same size and lot (:func:`~botkit.pipeline.desired.drift` keeps its last answer by the two
amounts' identity, issue 20: a ladder's rungs share one size and the keep checks ask them
every candle): the same size on another lot, or another size on the same lot, is floored
afresh."""

from __future__ import annotations

from decimal import Decimal

from botkit.exchange.models import OrderSide, OrderType
from botkit.intents import DeclaredOrder, KeepPolicy
from botkit.pipeline.desired import drift
from botkit.rules.ids import kept_order_id
from tests.pipeline.helpers import instrument
from tests.rules.helpers import NOW, open_order

D = Decimal
SLOT = NOW // 60_000


def _declared(sz: Decimal) -> DeclaredOrder:
    return DeclaredOrder(rung=0, side=OrderSide.BUY, type=OrderType.LIMIT, sz=sz, px=D("59000"))


def test_one_size_on_two_lots_and_two_sizes_on_one_lot_are_each_floored_to_their_lot() -> None:
    """2.7 contracts rest as 2 on a lot of 1 (the same order), but on a lot of 0.5 it is 2.5
    (changed); then 3.2 on the lot of 1 is 3 (changed). Fails if the kept answer is found by
    the size alone or by the lot alone."""
    size = D("2.7")
    resting = open_order(kept_order_id("test", "r", SLOT, 0), sz=D("2"))
    policy = KeepPolicy()
    whole, halves = instrument(lotSz=D("1")), instrument(lotSz=D("0.5"), minSz=D("0.5"))
    declared = _declared(size)
    assert drift(declared, resting, policy, whole, explain=False) == (False, "")
    assert drift(declared, resting, policy, halves) == (True, "size changed: 2 → 2.5")
    assert drift(_declared(D("3.2")), resting, policy, whole) == (True, "size changed: 2 → 3")
    assert drift(declared, resting, policy, whole, explain=False) == (False, "")
