"""A hand-written fake of the executor's port (:class:`~botkit.exchange.port.OrderSending`:
place, look up, read the price band) for the pipeline's unit tests, with scripted faults.

``script`` holds one entry per ``place_orders`` call: ``"ok"`` processes the batch; an exception
instance is raised *before* processing; ``("after", exc)`` processes the batch and then raises
``exc`` (the connection dropped after the exchange accepted it); a callable builds the results
itself. When the script runs out every call is ``"ok"``. The exchange refuses a client order id it
already has with code 250, like the real one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from botkit.exchange.models import (
    Fill,
    LimitPrice,
    OpenOrder,
    Order,
    OrderRequest,
    OrderSide,
    PlaceResult,
    Ticker,
)
from botkit.exchange.queries import FillQuery, OrderQuery

Step = Any


class FakeExchange:
    """Just enough of an exchange: placement with per-order rules, lookups, scripted faults."""

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        reject: Callable[[OrderRequest], tuple[int, str] | None] | None = None,
        lookup_errors: Sequence[Exception] = (),
        on_place: Callable[[Sequence[OrderRequest]], None] | None = None,
    ) -> None:
        self.script = list(script)
        self.reject = reject
        self.lookup_errors = list(lookup_errors)
        self.on_place = on_place
        self.orders: dict[str, OrderRequest] = {}
        self.ord_ids: dict[str, str] = {}
        self.received: Counter[str] = Counter()
        """How many times each client order id reached the exchange (processed)."""
        self.calls: list[tuple[str, ...]] = []
        self.lookups: list[str] = []
        self._next_id = 100000000000000000

    # --- trading -----------------------------------------------------------------------------
    def _process(self, orders: Sequence[OrderRequest]) -> list[PlaceResult]:
        results: list[PlaceResult] = []
        for order in orders:
            cid = order.clOrdId or ""
            self.received[cid] += 1
            if cid in self.orders:
                results.append(PlaceResult(clOrdId=cid, ordId="", code=250, msg="duplicate"))
                continue
            refused = self.reject(order) if self.reject else None
            if refused is not None:
                results.append(PlaceResult(clOrdId=cid, ordId="", code=refused[0], msg=refused[1]))
                continue
            self._next_id += 1
            self.orders[cid] = order
            self.ord_ids[cid] = str(self._next_id)
            results.append(PlaceResult(clOrdId=cid, ordId=str(self._next_id), code=200))
        return results

    def place_orders(self, orders: Sequence[OrderRequest]) -> list[PlaceResult]:
        self.calls.append(tuple(o.clOrdId or "" for o in orders))
        if self.on_place is not None:
            self.on_place(orders)
        step = self.script.pop(0) if self.script else "ok"
        if isinstance(step, Exception):
            raise step
        if isinstance(step, tuple) and step[0] == "after":
            self._process(orders)
            raise step[1]
        if callable(step):
            built: list[PlaceResult] = step(orders, self._process)
            return built
        return self._process(orders)

    # --- lookups -----------------------------------------------------------------------------
    def _maybe_fail(self) -> None:
        if self.lookup_errors:
            raise self.lookup_errors.pop(0)

    def open_orders(
        self,
        symbol: str | None = None,
        *,
        side: OrderSide | None = None,
        ord_id: str | None = None,
        cl_ord_id: str | None = None,
    ) -> list[OpenOrder]:
        self._maybe_fail()
        self.lookups.append(cl_ord_id or "")
        if cl_ord_id is None or cl_ord_id not in self.orders:
            return []
        o = self.orders[cl_ord_id]
        return [
            OpenOrder(
                symbol=o.symbol,
                side=o.side,
                type=o.type,
                ordId=self.ord_ids[cl_ord_id],
                clOrdId=cl_ord_id,
                px=o.px,
                sz=o.sz,
            )
        ]

    def order_history(self, query: OrderQuery = OrderQuery()) -> list[Order]:
        self._maybe_fail()
        return []

    def fills(self, query: FillQuery = FillQuery()) -> list[Fill]:
        self._maybe_fail()
        return []

    # --- the price band (read before each send) ----------------------------------------------
    def tickers(self, symbol: str | None = None) -> list[Ticker]:
        return []

    def limit_price(self, symbol: str) -> LimitPrice:
        return LimitPrice(symbol=symbol)
