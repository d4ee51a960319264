"""The simulator's port hands the engine an order's amount texts (``sz_text``, ``px_text``) made
with the order's body texts (:meth:`OrderRequest.amount_texts`), without building the body's
mapping (issue 20: the mapping was built per order in a backtest only for its two amounts)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings

from botkit.exchange.models import OrderRequest
from botkit.sim.port import SimPort
from tests.exchange.test_order_wire_text import _orders
from tests.sim.conftest import BTC, Sim


@settings(max_examples=300, deadline=None)
@given(order=_orders())
def test_an_orders_amount_texts_are_its_bodys(order: OrderRequest) -> None:
    """Every shape of order (texts needing escapes, amounts with exponents, no price): the
    amounts kept with the texts are the body's. Fails if one is written another way (``str``
    of an exponent) or a missing price is not None."""
    wire = order.to_wire()
    assert order.amount_texts() == (wire["sz"], wire.get("px"))
    fresh = order.model_copy()  # nothing kept yet: the amounts first, then the texts
    assert fresh.amount_texts() == (wire["sz"], wire.get("px"))
    assert fresh.journal_text() == order.journal_text()


@pytest.mark.parametrize("px", ["60000.5", "6E+4", None])
def test_the_port_places_an_order_without_building_its_body(
    sim: Sim, monkeypatch: pytest.MonkeyPatch, px: str | None
) -> None:
    """As the executor does (its journal row made the texts first), the order goes through the
    port with the body's amounts and no body built. Fails if the port reads the amounts off
    the body (``kept_wire``) again."""
    built: list[Any] = []
    wire = OrderRequest._wire

    def counted(self: OrderRequest) -> dict[str, Any]:
        built.append(self)
        return wire(self)

    monkeypatch.setattr(OrderRequest, "_wire", counted)
    fields = {"type": "LIMIT", "px": px} if px is not None else {"type": "MARKET"}
    request = OrderRequest.model_validate(
        {"symbol": BTC, "side": "BUY", "sz": "1", "clOrdId": "amounts-1", **fields}
    )
    request.journal_text()
    (result,) = SimPort(sim.engine).place_orders([request])
    assert result.clOrdId == "amounts-1"
    assert built == []
    order = sim.engine.find(cl_ord_id="amounts-1")
    assert order is not None
    assert order.sz == Decimal(1)
