"""The simulator's wire view: one call per REST request, the answer's payload out.

:meth:`SimApi.call` maps ``(method, path, query, body)`` to the engine and returns JSON-ready
values (amounts as decimal strings, ids as strings, times typed as the spec types them). A
non-200 code is raised as :class:`SimError` (unknown path: 404 at HTTP 404; a bad parameter: 400
``Param error: ...`` at HTTP 400). The HTTP layer (``botkit.sim.http``) sends the payload bare
for the reference-data paths of spec 4.1 (:func:`is_reference`) and inside the v3 envelope for
every other path, checks signatures and injects faults; this module knows none of that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from botkit.exchange.models import MarginMode, OrderSide, OrderType, PositionMode, PosSide
from botkit.sim import codes, reference
from botkit.sim.codes import SimError
from botkit.sim.engine import MAX_BATCH, SimEngine
from botkit.sim.history import Window
from botkit.sim.params import (
    cancel_items,
    decimal_param,
    enum_param,
    flag_param,
    id_int_param,
    id_param,
    int_param,
    merged,
    parse_order,
    str_param,
    symbol_param,
)
from botkit.sim.prices import INTERVALS, candle_row, interval_ms
from botkit.sim.views import (
    balance_view,
    fill_view,
    funding_view,
    instrument_view,
    jsonify,
    limit_price_view,
    open_position_view,
    order_book_view,
    order_view,
    position_record_view,
    risk_limit_view,
    ticker_view,
)

__all__ = ["PUBLIC_PATHS", "REFERENCE_PATHS", "SimApi", "SimError", "is_reference"]

REFERENCE_PATHS: frozenset[str] = frozenset(
    {"/timestamp", "/markets", "/currencies", "/v2/currencies"}
)
"""Spec 4.1's reference data (with the ``/{symbol}`` / ``/{currency}`` paths below them): the
exchange answers these bare — an array or an object, no ``code`` / ``msg`` / ``data``."""
_REFERENCE_PREFIXES = ("/markets/", "/currencies/", "/v2/currencies/")

PUBLIC_PATHS: frozenset[str] = REFERENCE_PATHS | frozenset(
    {
        "/v3/market/allInstruments",
        "/v3/market/riskLimit",
        "/v3/market/tickers",
        "/v3/market/markPrice",
        "/v3/market/indexPrice",
        "/v3/market/fundingRate",
        "/v3/market/candles",
        "/v3/market/limitPrice",
        "/v3/market/orderBook",
    }
)


def is_reference(path: str) -> bool:
    """A reference-data path of spec 4.1, answered bare (its errors as ``{code, msg}``); every
    other path answers inside the v3 envelope (spec section 1)."""
    return path in REFERENCE_PATHS or path.startswith(_REFERENCE_PREFIXES)


_BOOK_LEVELS = (5, 10, 20, 100, 150)
_HISTORY_STATES = frozenset({"FILLED", "PARTIALLY_CANCELED", "CANCELED"})

Params = Mapping[str, Any]
Handler = Callable[[Params, Any], Any]


class SimApi:
    """Routes REST requests to the engine; returns the answer's payload."""

    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine
        e = self
        self._routes: dict[tuple[str, str], Handler] = {
            ("GET", "/timestamp"): lambda q, b: {"serverTime": e.engine.clock.now_ms()},
            ("GET", "/markets"): lambda q, b: reference.markets(),
            ("GET", "/currencies"): e._currencies,
            ("GET", "/v2/currencies"): lambda q, b: reference.currencies_v2(),
            ("GET", "/v3/market/allInstruments"): e._instruments,
            ("GET", "/v3/market/riskLimit"): e._risk_limit,
            ("GET", "/v3/market/tickers"): e._tickers,
            ("GET", "/v3/market/markPrice"): e._mark_price,
            ("GET", "/v3/market/indexPrice"): e._index_price,
            ("GET", "/v3/market/fundingRate"): e._funding_rate,
            ("GET", "/v3/market/candles"): e._candles,
            ("GET", "/v3/market/limitPrice"): e._limit_price,
            ("GET", "/v3/market/orderBook"): e._order_book,
            ("GET", "/v3/account/balance"): lambda q, b: jsonify(balance_view(e.engine.balance())),
            ("POST", "/v3/trade/orders"): e._place_batch,
            ("POST", "/v3/trade/order"): e._place_one,
            ("DELETE", "/v3/trade/order"): e._cancel_one,
            ("DELETE", "/v3/trade/batchOrders"): e._cancel_batch,
            ("DELETE", "/v3/trade/allOrders"): e._cancel_all,
            ("GET", "/v3/trade/order/opens"): e._open_orders,
            ("GET", "/v3/trade/order/details"): e._order_details,
            ("GET", "/v3/trade/order/history"): e._order_history,
            ("GET", "/v3/trade/order/trades"): e._trades,
            ("GET", "/v3/trade/position/opens"): e._positions,
            ("GET", "/v3/trade/position/history"): e._position_history,
            ("GET", "/v3/position/mode"): lambda q, b: {"posMode": e.engine.position_mode.value},
            ("POST", "/v3/position/mode"): e._set_mode,
            ("GET", "/v3/position/leverages"): e._leverages,
            ("POST", "/v3/position/leverage"): e._set_leverage,
            ("POST", "/api/v1/position/margin/auto-deposit-status"): e._auto_deposit,
        }

    @property
    def routes(self) -> list[tuple[str, str]]:
        """Every ``(method, path)`` answered, the reference paths with their ``{symbol}`` /
        ``{currency}`` placeholders (docs/simulator-http.md has one row for each)."""
        templates = [
            ("GET", "/markets/{symbol}"),
            ("GET", "/currencies/{currency}"),
            ("GET", "/v2/currencies/{currency}"),
        ]
        return sorted([*self._routes, *templates], key=lambda r: (r[1], r[0]))

    def is_public(self, method: str, path: str) -> bool:
        """Reference-data and market-data paths need no signature."""
        return path in PUBLIC_PATHS or path.startswith(_REFERENCE_PREFIXES)

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        """Answer one request: the payload (bare or the envelope's ``data``), or
        :class:`SimError`."""
        if self.engine.drift:  # a mark that moves between two reads (prices.drift_per_request)
            self.engine.apply_drift()
        verb = method.upper()
        handler = self._routes.get((verb, path))
        if handler is not None:
            return handler(query, body)
        if verb == "GET":
            for prefix, view in (
                ("/markets/", self._market),
                ("/currencies/", self._currency),
                ("/v2/currencies/", self._currency_v2),
            ):
                if (
                    path.startswith(prefix)
                    and len(path) > len(prefix)
                    and "/" not in path[len(prefix) :]
                ):
                    return view(path[len(prefix) :], query)
        raise SimError(codes.NOT_FOUND, "Not Found", http_status=404)

    # --- reference data ------------------------------------------------------------------
    def _market(self, symbol: str, query: Params) -> Any:
        found = reference.markets(symbol)
        if not found:
            raise SimError(codes.INVALID_SYMBOL, f"Invalid symbol: {symbol}", http_status=400)
        return found[0]

    def _currencies(self, query: Params, body: Any) -> Any:
        return reference.currencies_v1(multi_chain=flag_param(query, "includeMultiChainCurrencies"))

    def _currency(self, name: str, query: Params) -> Any:
        multi = flag_param(query, "includeMultiChainCurrencies")
        found = reference.currencies_v1(name, multi_chain=multi)
        if not found:
            raise SimError.param(f"unknown currency {name}")
        return found[0]

    def _currency_v2(self, name: str, query: Params) -> Any:
        found = reference.currencies_v2(name)
        if not found:
            raise SimError.param(f"unknown currency {name}")
        return found[0]

    # --- market data ---------------------------------------------------------------------
    def _symbols(self, query: Params, *, required: bool = False) -> list[str]:
        symbol = str_param(query, "symbol", required=required)
        if symbol is None:
            return list(self.engine.instruments)
        return [self.engine.instrument(symbol.upper()).symbol]

    def _instruments(self, query: Params, body: Any) -> Any:
        e = self.engine
        return [jsonify(instrument_view(e.instruments[s], e)) for s in self._symbols(query)]

    def _risk_limit(self, query: Params, body: Any) -> Any:
        (symbol,) = self._symbols(query, required=True)
        mode = enum_param(query, "mgnMode", MarginMode)
        tier = str_param(query, "tier")
        modes = [mode] if mode is not None else [MarginMode.CROSS, MarginMode.ISOLATED]
        rows = [
            row
            for m in modes
            for row in risk_limit_view(self.engine.instruments[symbol], m.value)
            if tier is None or row["tier"] == tier
        ]
        return jsonify(rows)

    def _tickers(self, query: Params, body: Any) -> Any:
        now = self.engine.clock.now_ms()
        return [jsonify(ticker_view(self.engine, s, now)) for s in self._symbols(query)]

    def _one_or_list(self, query: Params, make: Callable[[str], dict[str, Any]]) -> Any:
        rows = [jsonify(make(s)) for s in self._symbols(query)]
        return rows[0] if query.get("symbol") else rows

    def _mark_price(self, query: Params, body: Any) -> Any:
        return self._one_or_list(query, lambda s: {"s": s, "mPx": self.engine.prices[s].mark})

    def _index_price(self, query: Params, body: Any) -> Any:
        return self._one_or_list(query, lambda s: {"s": s, "iPx": self.engine.prices[s].mark})

    def _funding_rate(self, query: Params, body: Any) -> Any:
        now = self.engine.clock.now_ms()
        return self._one_or_list(query, lambda s: funding_view(s, now))

    def _candles(self, query: Params, body: Any) -> Any:
        (symbol,) = self._symbols(query, required=True)
        interval = str_param(query, "interval", required=True) or ""
        width = interval_ms(interval)
        if width is None:
            raise SimError(
                codes.BAD_INTERVAL,
                f"Invalid candle interval {interval!r}: use one of {', '.join(INTERVALS)}",
                http_status=400,
            )
        limit = int_param(query, "limit") or 100
        if not 1 <= limit <= 500:
            raise SimError.param(f"limit must be between 1 and 500, got {limit}")
        start, end = int_param(query, "sTime"), int_param(query, "eTime")
        candles = self.engine.prices[symbol].candles(width, start, end, limit)
        return [candle_row(c, width) for c in candles]

    def _limit_price(self, query: Params, body: Any) -> Any:
        return [jsonify(limit_price_view(self.engine, s)) for s in self._symbols(query)]

    def _order_book(self, query: Params, body: Any) -> Any:
        (symbol,) = self._symbols(query, required=True)
        levels = int_param(query, "limit") or 5
        if levels not in _BOOK_LEVELS:
            raise SimError.param(f"limit must be one of 5, 10, 20, 100, 150, got {levels}")
        now = self.engine.clock.now_ms()
        return jsonify(order_book_view(self.engine, symbol, levels, now))

    # --- trading -------------------------------------------------------------------------
    def _place_batch(self, query: Params, body: Any) -> Any:
        if not isinstance(body, list):
            raise SimError.param("the body must be a JSON array of at most 10 orders")
        results = self.engine.place_batch([parse_order(raw) for raw in body])
        return [
            {"clOrdId": r.cl_ord_id, "ordId": r.ord_id, "code": r.code, "msg": r.msg}
            for r in results
        ]

    def _place_one(self, query: Params, body: Any) -> Any:
        if not isinstance(body, dict):
            raise SimError.param("the body must be a JSON object (one order)")
        (result,) = self.engine.place_batch([parse_order(body)])
        if result.code != codes.SUCCESS:
            status = 400 if result.code == codes.BAD_PARAM else 200
            raise SimError(result.code, result.msg, http_status=status)
        return {"ordId": result.ord_id, "clOrdId": result.cl_ord_id}

    def _cancel_one(self, query: Params, body: Any) -> Any:
        args = merged(query, body)
        symbol = (str_param(args, "symbol", required=True) or "").upper()
        self.engine.instrument(symbol)
        order = self.engine.cancel(
            symbol, ord_id=id_param(args, "ordId"), cl_ord_id=str_param(args, "clOrdId")
        )
        return {"ordId": str(order.ord_id), "clOrdId": order.cl_ord_id}

    def _cancel_batch(self, query: Params, body: Any) -> Any:
        items = cancel_items(query, body)
        if len(items) > MAX_BATCH:
            raise SimError(
                codes.BATCH_CANCEL_TOO_LARGE,
                f"Batch cancel size over limit: {len(items)} orders, at most {MAX_BATCH}",
            )
        out = []
        for symbol, ord_id, cl_ord_id in items:
            try:
                self.engine.instrument(symbol)
                order = self.engine.cancel(symbol, ord_id=ord_id, cl_ord_id=cl_ord_id)
            except SimError as exc:
                out.append(
                    {
                        "ordId": ord_id or "",
                        "clOrdId": cl_ord_id or "",
                        "code": exc.code,
                        "msg": exc.msg,
                    }
                )
            else:
                out.append(_ok(str(order.ord_id), order.cl_ord_id))
        return out

    def _cancel_all(self, query: Params, body: Any) -> Any:
        args = merged(query, body)
        symbol = str_param(args, "symbol")
        side = enum_param(args, "side", OrderSide)
        cancelled = self.engine.cancel_all(symbol.upper() if symbol else None, side)
        return [_ok(str(o.ord_id), o.cl_ord_id) for o in cancelled]

    # --- account queries -----------------------------------------------------------------
    def _window(self, query: Params) -> Window:
        return self.engine.window(
            start=int_param(query, "sTime"),
            end=int_param(query, "eTime"),
            from_id=int_param(query, "from"),
            limit=int_param(query, "limit"),
            direct=str_param(query, "direct"),
        )

    def _open_orders(self, query: Params, body: Any) -> Any:
        e = self.engine
        orders = e.open_orders(
            self._window(query),
            symbol=symbol_param(query),
            side=enum_param(query, "side", OrderSide),
            ord_id=id_int_param(query, "ordId"),
            cl_ord_id=str_param(query, "clOrdId"),
        )
        return [jsonify(order_view(o, e)) for o in orders]

    def _order_details(self, query: Params, body: Any) -> Any:
        ord_id, cl = id_param(query, "ordId"), str_param(query, "clOrdId")
        if not ord_id and not cl:
            raise SimError.param("ordId or clOrdId is required")
        order = self.engine.find(ord_id=ord_id, cl_ord_id=cl)
        if order is None:
            which = f"ordId {ord_id}" if ord_id else f"clOrdId {cl}"
            raise SimError(codes.ORDER_NOT_FOUND, f"Order does not exist: {which}")
        return jsonify(order_view(order, self.engine))

    def _order_history(self, query: Params, body: Any) -> Any:
        e = self.engine
        state = str_param(query, "state")
        if state is not None and state.upper() not in _HISTORY_STATES:
            raise SimError.param(
                f"state must be one of FILLED, PARTIALLY_CANCELED, CANCELED, got {state!r}"
            )
        orders = e.history.order_history(
            e.clock.now_ms(),
            self._window(query),
            symbol=symbol_param(query),
            side=enum_param(query, "side", OrderSide),
            ord_id=id_int_param(query, "ordId"),
            cl_ord_id=str_param(query, "clOrdId"),
            state=state.upper() if state else None,
            type=enum_param(query, "type", OrderType),
        )
        return [jsonify(order_view(o, e)) for o in orders]

    def _trades(self, query: Params, body: Any) -> Any:
        e = self.engine
        fills = e.history.trades(
            self._window(query),
            symbol=symbol_param(query),
            side=enum_param(query, "side", OrderSide),
            ord_id=id_int_param(query, "ordId"),
            cl_ord_id=str_param(query, "clOrdId"),
        )
        return [jsonify(fill_view(f, e)) for f in fills]

    def _positions(self, query: Params, body: Any) -> Any:
        e = self.engine
        return [
            jsonify(open_position_view(p, e.position_mode))
            for p in e.positions(symbol_param(query))
        ]

    def _position_history(self, query: Params, body: Any) -> Any:
        records = self.engine.history.position_history(
            self._window(query),
            symbol=symbol_param(query),
            mgn_mode=enum_param(query, "mgnMode", MarginMode),
            pos_side=enum_param(query, "posSide", PosSide),
        )
        return [jsonify(position_record_view(p)) for p in records]

    # --- position settings ---------------------------------------------------------------
    def _set_mode(self, query: Params, body: Any) -> Any:
        args = merged(query, body)
        mode = enum_param(args, "posMode", PositionMode)
        if mode is None:
            raise SimError.param("posMode is required (ONE_WAY or HEDGE)")
        self.engine.set_position_mode(mode)
        return {"posMode": mode.value}

    def _leverages(self, query: Params, body: Any) -> Any:
        mode = enum_param(query, "mgnMode", MarginMode)
        rows = [r for s in self._symbols(query) for r in self.engine.leverages(s, mode)]
        return [_lever_row(*r) for r in rows]

    def _set_leverage(self, query: Params, body: Any) -> Any:
        args = merged(query, body)
        symbol = (str_param(args, "symbol", required=True) or "").upper()
        lever = decimal_param(args, "lever")
        if lever is None:
            raise SimError.param("lever is required")
        mode = enum_param(args, "mgnMode", MarginMode) or MarginMode.CROSS
        pos_side = enum_param(args, "posSide", PosSide)
        rows = self.engine.set_leverage(symbol, lever, mode, pos_side)
        return _lever_row(*rows[0]) if len(rows) == 1 else [_lever_row(*r) for r in rows]

    def _auto_deposit(self, query: Params, body: Any) -> Any:
        args = merged(query, body)
        symbol = str_param(args, "symbol", required=True) or ""
        self.engine.instrument(symbol.upper())
        return {"symbol": symbol.upper(), "status": flag_param(args, "status")}


def _ok(ord_id: str, cl_ord_id: str) -> dict[str, Any]:
    return {"ordId": ord_id, "clOrdId": cl_ord_id, "code": codes.SUCCESS, "msg": "Success"}


def _lever_row(symbol: str, lever: Any, mode: MarginMode, side: PosSide) -> dict[str, Any]:
    return {"symbol": symbol, "lever": str(lever), "mgnMode": mode.value, "posSide": side.value}
