"""``ExchangeClient``: every endpoint of the spec and the notes, typed, over one httpx session.

Implements :class:`~botkit.exchange.port.ExchangePort` (and more: reference data, order book,
leverage). Parameters are checked before a request leaves (:mod:`botkit.exchange.params`);
answers are parsed into :mod:`botkit.exchange.models` with Decimal amounts; every failure is one
:mod:`botkit.errors` class (:mod:`botkit.live.http`). Public market-data and reference paths
go unsigned, account and trade paths are signed with the chosen scheme (``v3`` or ``pf``) and a
timestamp from :class:`~botkit.live.clock.ClockSync`. The client never retries.

The constructor takes an optional ``httpx`` transport: tests pass ``httpx.MockTransport``, the
embedded simulator passes its in-process transport, production uses the network.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from botkit.errors import NotFoundError, RequestContext
from botkit.exchange import params as p
from botkit.exchange.models import (
    ACCEPTED_CODE,
    Balance,
    CancelResult,
    Fill,
    Leverage,
    MarginMode,
    OpenOrder,
    Order,
    OrderHistoryState,
    OrderRequest,
    OrderSide,
    OrderType,
    PlaceResult,
    Position,
    PositionHistory,
    PositionMode,
    PosSide,
)
from botkit.exchange.paging import iter_pages
from botkit.exchange.queries import (
    Direction,
    FillQuery,
    HistoryQuery,
    OrderQuery,
    PositionQuery,
)
from botkit.live import http
from botkit.live.client_base import as_list, first
from botkit.live.market_data import MarketDataEndpoints

__all__ = ["ExchangeClient"]

_AUTO_DEPOSIT_PATH = "/api/v1/position/margin/auto-deposit-status"


class ExchangeClient(MarketDataEndpoints):
    """The live HTTP adapter of :class:`~botkit.exchange.port.ExchangePort`; see module doc.

    ``ExchangeClient(base_url, key=..., secret=..., passphrase=..., signing="v3" | "pf",
    clock=ClockSync(...), transport=None, timeout=10.0, recv_window=None, deadline=None,
    max_answer_bytes=8 MiB)``: ``deadline`` bounds each request as a whole (default: ``timeout``).
    """

    # --- account (signed) ----------------------------------------------------------------

    def balance(self) -> Balance:
        """``GET /v3/account/balance``."""
        data, ctx = self._call("GET", "/v3/account/balance", signed=True)
        return self._parse(Balance, first(data), ctx)

    def open_positions(self, symbol: str | None = None) -> list[Position]:
        """``GET /v3/trade/position/opens``."""
        sym = p.optional_text(symbol, "symbol")
        return self._get_list(Position, "/v3/trade/position/opens", signed=True, symbol=sym)

    def open_orders_page(
        self,
        symbol: str | None = None,
        *,
        side: OrderSide | str | None = None,
        ord_id: str | None = None,
        cl_ord_id: str | None = None,
        from_id: str | None = None,
        limit: int | None = None,
        direct: Direction | None = None,
    ) -> list[OpenOrder]:
        """``GET /v3/trade/order/opens``: one page of resting orders."""
        return self._get_list(
            OpenOrder,
            "/v3/trade/order/opens",
            signed=True,
            symbol=p.optional_text(symbol, "symbol"),
            side=p.enum_word(side, OrderSide, "side"),
            ordId=p.optional_text(ord_id, "ord_id"),
            clOrdId=p.optional_text(cl_ord_id, "cl_ord_id"),
            **{"from": p.optional_text(from_id, "from_id")},
            limit=p.page_limit(limit),
            direct=p.direction(direct),
        )

    def open_orders(
        self,
        symbol: str | None = None,
        *,
        side: OrderSide | str | None = None,
        ord_id: str | None = None,
        cl_ord_id: str | None = None,
    ) -> list[OpenOrder]:
        """``GET /v3/trade/order/opens``, every page (100 a page, paged by ``from``)."""

        def page(from_id: str | None, limit: int) -> list[OpenOrder]:
            return self.open_orders_page(
                symbol, side=side, ord_id=ord_id, cl_ord_id=cl_ord_id, from_id=from_id,
                limit=limit, direct="NEXT",
            )  # fmt: skip

        return list(iter_pages(page, limit=p.MAX_PAGE))

    def order_details(
        self, *, ord_id: str | None = None, cl_ord_id: str | None = None
    ) -> OpenOrder:
        """``GET /v3/trade/order/details``: one order in any state, by ``ordId`` or ``clOrdId``."""
        p.one_of_ids("order_details", ord_id, cl_ord_id)
        params = {
            "ordId": p.optional_text(ord_id, "ord_id"),
            "clOrdId": p.optional_text(cl_ord_id, "cl_ord_id"),
        }
        data, ctx = self._call("GET", "/v3/trade/order/details", signed=True, params=params)
        found = first(data)
        if found is None:
            raise NotFoundError(404, "order not found", context=ctx)
        return self._parse(OpenOrder, found, ctx)

    def order_history(self, query: OrderQuery = OrderQuery()) -> list[Order]:
        """``GET /v3/trade/order/history``: one page of closed orders."""
        return self._get_list(
            Order,
            "/v3/trade/order/history",
            signed=True,
            **_order_filter(query),
            state=p.enum_word(query.state, OrderHistoryState, "state"),
            type=p.enum_word(query.type, OrderType, "type"),
            **_paging(query),
        )

    def fills(self, query: FillQuery = FillQuery()) -> list[Fill]:
        """``GET /v3/trade/order/trades``: one page of executions."""
        return self._get_list(
            Fill, "/v3/trade/order/trades", signed=True, **_order_filter(query), **_paging(query)
        )

    def position_history(self, query: PositionQuery = PositionQuery()) -> list[PositionHistory]:
        """``GET /v3/trade/position/history``: one page of previous positions."""
        return self._get_list(
            PositionHistory,
            "/v3/trade/position/history",
            signed=True,
            symbol=p.optional_text(query.symbol, "symbol"),
            mgnMode=p.enum_word(query.mgn_mode, MarginMode, "mgn_mode"),
            posSide=p.enum_word(query.pos_side, PosSide, "pos_side"),
            **_paging(query),
        )

    def position_mode(self) -> PositionMode:
        """``GET /v3/position/mode``: ONE_WAY or HEDGE."""
        data, ctx = self._call("GET", "/v3/position/mode", signed=True)
        word = data.get("posMode") if isinstance(data, dict) else data
        return self._parse(PositionMode, word, ctx)

    def leverages(self, symbol: str, *, mgn_mode: MarginMode | str | None = None) -> list[Leverage]:
        """``GET /v3/position/leverages``: the leverage set per margin mode and leg."""
        return self._get_list(
            Leverage,
            "/v3/position/leverages",
            signed=True,
            symbol=p.symbol(symbol),
            mgnMode=p.enum_word(mgn_mode, MarginMode, "mgn_mode"),
        )

    # --- trading (signed writes) ---------------------------------------------------------

    def place_order(self, order: OrderRequest) -> PlaceResult:
        """``POST /v3/trade/order``: one order; a refusal raises ExchangeRejected."""
        ids = (order.clOrdId,) if order.clOrdId else ()
        data, ctx = self._call(
            "POST", "/v3/trade/order", signed=True, body=order.kept_wire(), ids=ids
        )
        result = self._parse(PlaceResult, first(data), ctx)
        if not result.clOrdId and order.clOrdId:
            result = result.model_copy(update={"clOrdId": order.clOrdId})
        _placed_with_ids([result], ctx)
        return result

    def place_orders(self, orders: Sequence[OrderRequest]) -> list[PlaceResult]:
        """``POST /v3/trade/orders``: 1..10 orders; one result per order, each with its code."""
        p.batch(orders, "place_orders")
        # the list's JSON as the encoder joins it, of each body's text (OrderRequest.wire_text)
        body = "[" + ",".join([o.wire_text() for o in orders]) + "]"
        ids = [o.clOrdId for o in orders if o.clOrdId]
        data, ctx = self._call("POST", "/v3/trade/orders", signed=True, body_text=body, ids=ids)
        results = self._parse(list[PlaceResult], as_list(data), ctx)
        _placed_with_ids(results, ctx)
        return results

    def cancel_order(
        self, symbol: str, *, ord_id: str | None = None, cl_ord_id: str | None = None
    ) -> CancelResult:
        """``DELETE /v3/trade/order`` by ``ordId`` or ``clOrdId`` (ordId wins if both)."""
        p.one_of_ids("cancel_order", ord_id, cl_ord_id)
        body: dict[str, str] = {"symbol": p.symbol(symbol)}
        if ord_id is not None:
            body["ordId"] = p.symbol(ord_id, "ord_id")
        if cl_ord_id is not None:
            body["clOrdId"] = p.symbol(cl_ord_id, "cl_ord_id")
        ids = (cl_ord_id,) if cl_ord_id else ()
        data, ctx = self._call("DELETE", "/v3/trade/order", signed=True, body=body, ids=ids)
        return self._parse(CancelResult, first(data), ctx)

    def cancel_orders(
        self, symbol: str, *, ord_ids: Sequence[str] = (), cl_ord_ids: Sequence[str] = ()
    ) -> list[CancelResult]:
        """``DELETE /v3/trade/batchOrders``: 1..10 orders by ``ordIds`` and / or ``clOrdIds``."""
        p.batch([*ord_ids, *cl_ord_ids], "cancel_orders")
        body: dict[str, Any] = {"symbol": p.symbol(symbol)}
        if ord_ids:
            body["ordIds"] = [p.symbol(i, "ord_ids item") for i in ord_ids]
        if cl_ord_ids:
            body["clOrdIds"] = [p.symbol(i, "cl_ord_ids item") for i in cl_ord_ids]
        data, ctx = self._call(
            "DELETE", "/v3/trade/batchOrders", signed=True, body=body, ids=list(cl_ord_ids)
        )
        return self._parse(list[CancelResult], as_list(data), ctx)

    def cancel_all(
        self, symbol: str | None = None, side: OrderSide | str | None = None
    ) -> list[CancelResult]:
        """``DELETE /v3/trade/allOrders``: every open order (of a symbol, of a side)."""
        body: dict[str, str] = {}
        if symbol is not None:
            body["symbol"] = p.symbol(symbol)
        word = p.enum_word(side, OrderSide, "side")
        if word is not None:
            body["side"] = word
        data, ctx = self._call("DELETE", "/v3/trade/allOrders", signed=True, body=body)
        return self._parse(list[CancelResult], as_list(data), ctx)

    def set_position_mode(self, mode: PositionMode | str) -> None:
        """``POST /v3/position/mode`` with ``posMode`` ONE_WAY or HEDGE."""
        word = p.enum_word(mode, PositionMode, "mode")
        self._call("POST", "/v3/position/mode", signed=True, body={"posMode": word})

    def set_leverage(
        self,
        symbol: str,
        lever: int,
        *,
        mgn_mode: MarginMode | str,
        pos_side: PosSide | str = PosSide.BOTH,
    ) -> None:
        """``POST /v3/position/leverage`` (lever sent as a decimal string)."""
        body = {
            "symbol": p.symbol(symbol),
            "lever": p.lever(lever),
            "mgnMode": p.enum_word(mgn_mode, MarginMode, "mgn_mode"),
            "posSide": p.enum_word(pos_side, PosSide, "pos_side"),
        }
        self._call("POST", "/v3/position/leverage", signed=True, body=body)

    def set_auto_deposit_status(self, symbol: str, status: bool) -> None:
        """Deprecated (spec 4.4, abandoned): the legacy v1 auto-deposit toggle, PF-signed."""
        warnings.warn(
            "POST /api/v1/position/margin/auto-deposit-status is abandoned by the exchange "
            "(legacy v1 futures); it will be removed",
            DeprecationWarning,
            stacklevel=2,
        )
        body = {"symbol": p.symbol(symbol), "status": bool(status)}
        self._call("POST", _AUTO_DEPOSIT_PATH, signed=True, body=body, scheme="pf")


def _order_filter(query: OrderQuery | FillQuery) -> dict[str, str | None]:
    """The filters closed orders and fills share, checked in this order."""
    return {
        "symbol": p.optional_text(query.symbol, "symbol"),
        "side": p.enum_word(query.side, OrderSide, "side"),
        "ordId": p.optional_text(query.ord_id, "ord_id"),
        "clOrdId": p.optional_text(query.cl_ord_id, "cl_ord_id"),
    }


def _paging(query: HistoryQuery) -> dict[str, str | None]:
    s_time, e_time = p.time_range(query.start, query.end)
    return {
        "sTime": s_time,
        "eTime": e_time,
        "from": p.optional_text(query.from_id, "from_id"),
        "limit": p.page_limit(query.limit),
        "direct": p.direction(query.direct),
    }


def _placed_with_ids(results: Sequence[PlaceResult], ctx: RequestContext) -> None:
    """An "accepted" result without an ``ordId`` says nothing sure: a malformed write answer
    (the orders are looked up), never an order journaled as placed with no id."""
    for index, result in enumerate(results):
        if result.code == ACCEPTED_CODE and not result.ordId.strip():  # result.accepted
            raise http.malformed(f"result {index} is accepted but has no ordId", ctx, write=True)
