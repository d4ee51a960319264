"""Looking orders up by client order id: does the exchange have this order, and under which ordId?

Used after an ambiguous send and by reconcile. Looks in open orders, then order history, then
fills, and trusts only records whose ``clOrdId`` matches exactly (a filter the exchange ignored
must not make a match). Read errors are retried by the caller's policy.
"""

from __future__ import annotations

from botkit.exchange.port import OrderLookup
from botkit.exchange.queries import FillQuery, OrderQuery

__all__ = ["find_order"]


def find_order(port: OrderLookup, symbol: str, cl_ord_id: str) -> str | None:
    """The exchange's ``ordId`` of the order with this client order id, or ``None``.

    An order found with an empty ``ordId`` is reported as ``"?"`` (it exists; id unknown).
    """
    for order in port.open_orders(symbol, cl_ord_id=cl_ord_id):
        if order.clOrdId == cl_ord_id:
            return order.ordId or "?"
    for closed in port.order_history(OrderQuery(symbol=symbol, cl_ord_id=cl_ord_id)):
        if closed.clOrdId == cl_ord_id:
            return closed.ordId or "?"
    for fill in port.fills(FillQuery(symbol=symbol, cl_ord_id=cl_ord_id)):
        if fill.clOrdId == cl_ord_id:
            return fill.ordId or "?"
    return None
