"""An order's journal text (:meth:`OrderRequest.journal_text`: the ``request`` column) is what
the journal wrote of the order's wire body before (``json.dumps`` with sorted keys, through
``writes._json``), written with its body text from the fields without the body's mapping; the
executor hands it to the journal, and the rows are those of the body given as a mapping
(issue 20)."""

from __future__ import annotations

import json
from decimal import Decimal

from hypothesis import given, settings

from botkit.exchange.models import OrderRequest, OrderSide, OrderType, TimeInForce
from botkit.intents import OrderIntent
from botkit.journal import writes
from botkit.ports.journal import NewOrder
from tests.exchange.test_order_wire_text import _orders


@settings(max_examples=500, deadline=None)
@given(order=_orders())
def test_an_orders_journal_text_is_its_bodys_json_with_sorted_keys(order: OrderRequest) -> None:
    """Fails if a key is written out of the sorted order, an optional one is missed, or a text
    needing an escape is written as it is; the body's text stays the encoder's too."""
    wire = order.to_wire()
    assert order.journal_text() == json.dumps(wire, separators=(",", ":"), sort_keys=True)
    assert order.journal_text() == writes._json(wire)
    assert order.wire_text() == json.dumps(wire, separators=(",", ":"))


def test_a_copy_with_an_update_writes_its_own_texts() -> None:
    """The texts are kept per request; a copy updated (``model_copy``) writes its own. Fails
    if a copy keeps the texts of the request it was copied from."""
    order = OrderRequest(
        symbol="BTC_USDT_PERP", side=OrderSide.BUY, type=OrderType.LIMIT, sz=Decimal("1"),
        px=Decimal("100.5"), clOrdId="a-1", timeInForce=TimeInForce.IOC,
    )  # fmt: skip
    assert '"px":"100.5"' in order.wire_text()
    assert '"px":"100.5"' in order.journal_text()
    copied = order.model_copy(update={"px": Decimal("99"), "reduceOnly": True})
    for text in (copied.wire_text(), copied.journal_text()):
        assert '"px":"99"' in text
        assert '"reduceOnly":true' in text
    assert copied.journal_text() == writes._json(copied.to_wire())
    assert order.journal_text() == writes._json(order.to_wire())


@settings(max_examples=200, deadline=None)
@given(order=_orders())
def test_an_orders_row_is_the_same_from_its_text_as_from_its_body(order: OrderRequest) -> None:
    """The rows and event lines the journal writes of an order given its text (the
    executor's) are those of the same order given its body as a mapping."""
    intent = OrderIntent(
        strategy="s", rule="r", slot=1, leg=0, cl_ord_id="s-r-1-0", symbol="BTC_USDT_PERP",
        side=OrderSide.BUY, type=OrderType.LIMIT, sz=Decimal("1"), px=Decimal("100"),
        inputs={"mark": "100"},
    )  # fmt: skip
    by_text = NewOrder(intent, order.px, order.sz, request=order.journal_text())
    by_body = NewOrder(intent, order.px, order.sz, wire=order.to_wire())
    for reserve in (None, 5_000):
        assert writes.order_rows(
            7, [by_text], dry=False, now=1_000, reserve_until=reserve
        ) == writes.order_rows(7, [by_body], dry=False, now=1_000, reserve_until=reserve)
