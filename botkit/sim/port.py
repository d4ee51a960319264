"""``SimPort``: the simulator as an :class:`~botkit.exchange.port.ExchangePort`, in process.

No HTTP, no signing, no JSON: calls go straight to the :class:`~botkit.sim.engine.SimEngine`
and answers are the typed models of :mod:`botkit.exchange.models`, built without validation
(:class:`~botkit.sim.fastmodel.Build`) from the same views the wire API serialises, and cached
as far as the engine's state did not move (:mod:`botkit.sim.readmodels`), so the backtest pays
microseconds per call. Errors are those
the HTTP client raises for the same answer: a caller mistake the client refuses before sending
(batch over 10, page size over 100, a start after its end) is
:class:`~botkit.errors.RequestValidationError`; a refusal by the exchange is
:class:`~botkit.errors.ExchangeRejected` (:class:`~botkit.errors.NotFoundError` for 11008 / 404).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from botkit.errors import RequestValidationError
from botkit.exchange.models import (
    CancelResult,
    Candle,
    Fill,
    Instrument,
    MarginMode,
    OpenOrder,
    Order,
    OrderHistoryState,
    OrderRequest,
    OrderSide,
    OrderType,
    PlaceResult,
    PositionHistory,
    PositionMode,
    PosSide,
)
from botkit.exchange.queries import FillQuery, HistoryQuery, OrderQuery, PositionQuery
from botkit.sim import codes
from botkit.sim.codes import SimError
from botkit.sim.engine import MAX_BATCH, SimEngine
from botkit.sim.fastmodel import Build
from botkit.sim.history import Window
from botkit.sim.orders import OrderInput
from botkit.sim.placing import Rejected
from botkit.sim.prices import interval_ms
from botkit.sim.readmodels import PortReads, reject
from botkit.sim.views import (
    fill_view,
    instrument_view,
    order_parts,
    order_view,
    position_record_view,
)

__all__ = ["SimPort"]

_OPEN_ORDER = Build(OpenOrder)
_ORDER = Build(Order)
_FILL = Build(Fill)
_POSITION_HISTORY = Build(PositionHistory)
_INSTRUMENT = Build(Instrument)
_PLACE = Build(PlaceResult)
_CANCEL = Build(CancelResult)


class SimPort(PortReads):
    """The embedded simulator behind the same interface as the live HTTP client.

    The reads a trading cycle makes (balance, open positions, tickers, limit prices) and the
    error mapping are in :class:`~botkit.sim.readmodels.PortReads`.
    """

    def __init__(self, engine: SimEngine) -> None:
        super().__init__(engine)
        self._instruments: dict[str, Instrument] = {}
        self._instrument_status: dict[str, Any] = {}
        self._order_models: dict[int, tuple[int, OpenOrder]] = {}
        self._open_lists: dict[Any, list[OpenOrder]] = {}
        self._open_rev = -1

    def _window(self, query: HistoryQuery) -> Window:
        from_id = query.from_id
        if from_id is not None and not from_id.isdigit():
            raise RequestValidationError(f"from_id must be a numeric id, got {from_id!r}")
        try:
            return self.engine.window(
                start=query.start,
                end=query.end,
                from_id=int(from_id) if from_id else None,
                limit=query.limit,
                direct=query.direct,
            )
        except SimError as exc:
            raise RequestValidationError(exc.msg) from None

    # --- time and reference data ---------------------------------------------------------
    def server_time(self) -> int:
        return self.engine.clock.now_ms()

    def instruments(self, symbol: str | None = None) -> list[Instrument]:
        e = self.engine
        symbols = [symbol] if symbol is not None else list(e.instruments)
        out = []
        for s in symbols:
            try:
                inst = e.instrument(s)
            except SimError as exc:
                reject(exc, "GET", "/v3/market/allInstruments")
            cached = self._instruments.get(s)
            if cached is None or self._instrument_status.get(s) is not e.status[s]:
                cached = _INSTRUMENT(instrument_view(inst, e))
                self._instruments[s] = cached
                self._instrument_status[s] = e.status[s]
            out.append(cached)
        return out

    # --- market data ---------------------------------------------------------------------
    def candles(
        self,
        symbol: str,
        interval: str,
        *,
        start: int | None = None,
        end: int | None = None,
        limit: int | None = None,
    ) -> list[Candle]:
        (s,) = self._symbols(symbol, "/v3/market/candles")
        width = interval_ms(interval)
        if width is None:
            raise RequestValidationError(f"unknown candle interval {interval!r}")
        size = 100 if limit is None else limit
        if not 1 <= size <= 500:
            raise RequestValidationError(f"limit must be between 1 and 500, got {size}")
        return [
            Candle.model_construct(
                low=c.l,
                high=c.h,
                open=c.o,
                close=c.c,
                amt=c.amt,
                qty=c.qty,
                tC=c.tc,
                sT=c.sT,
                cT=c.sT + width - 1,
            )
            for c in self.engine.prices[s].candles(width, start, end, size)
        ]

    # --- account -------------------------------------------------------------------------
    def open_orders(
        self,
        symbol: str | None = None,
        *,
        side: OrderSide | None = None,
        ord_id: str | None = None,
        cl_ord_id: str | None = None,
    ) -> list[OpenOrder]:
        e = self.engine
        if ord_id is not None and not ord_id.isdigit():
            return []
        if self._open_rev != e.matcher.rev:
            self._open_rev = e.matcher.rev
            self._open_lists.clear()
            live = e.matcher.open
            self._order_models = {k: v for k, v in self._order_models.items() if k in live}
        key = (symbol, side, ord_id, cl_ord_id)
        cached = self._open_lists.get(key)
        if cached is None:
            window = Window(start=0, end=0, limit=2**31)  # every page at once; no time window
            orders = e.open_orders(
                window,
                symbol=symbol,
                side=side,
                ord_id=int(ord_id) if ord_id else None,
                cl_ord_id=cl_ord_id,
            )
            cached = [self._open_order(o) for o in orders]
            self._open_lists[key] = cached
        return list(cached)

    def _open_order(self, order: Any) -> OpenOrder:
        known = self._order_models.get(order.ord_id)
        if known is not None and known[0] == order.rev:
            return known[1]
        model = _OPEN_ORDER.parts(*order_parts(order, self.engine))  # the view, split
        self._order_models[order.ord_id] = (order.rev, model)
        return model

    def order_history(self, query: OrderQuery = OrderQuery()) -> list[Order]:
        e = self.engine
        window = self._window(query)
        ord_id, side, state, type_ = query.ord_id, query.side, query.state, query.type
        if ord_id is not None and not ord_id.isdigit():
            return []
        word = OrderHistoryState(state) if state is not None else None
        orders = e.history.order_history(
            e.clock.now_ms(),
            window,
            symbol=query.symbol,
            side=OrderSide(side) if side is not None else None,
            ord_id=int(ord_id) if ord_id else None,
            cl_ord_id=query.cl_ord_id,
            state=word.value if word is not None else None,
            type=OrderType(type_) if type_ is not None else None,
        )
        out = []
        for o in orders:
            fields = order_view(o, e)
            fields["state"] = OrderHistoryState(fields["state"])
            out.append(_ORDER(fields))
        return out

    def fills(self, query: FillQuery = FillQuery()) -> list[Fill]:
        e = self.engine
        window = self._window(query)
        ord_id, side = query.ord_id, query.side
        if ord_id is not None and not ord_id.isdigit():
            return []
        records = e.history.trades(
            window,
            symbol=query.symbol,
            side=OrderSide(side) if side is not None else None,
            ord_id=int(ord_id) if ord_id else None,
            cl_ord_id=query.cl_ord_id,
        )
        return [_FILL(fill_view(f, e)) for f in records]

    def position_history(self, query: PositionQuery = PositionQuery()) -> list[PositionHistory]:
        window = self._window(query)
        mgn_mode, pos_side = query.mgn_mode, query.pos_side
        records = self.engine.history.position_history(
            window,
            symbol=query.symbol,
            mgn_mode=MarginMode(mgn_mode) if mgn_mode is not None else None,
            pos_side=PosSide(pos_side) if pos_side is not None else None,
        )
        return [_POSITION_HISTORY(position_record_view(p)) for p in records]

    def position_mode(self) -> PositionMode:
        return self.engine.position_mode

    # --- trading -------------------------------------------------------------------------
    def place_orders(self, orders: Sequence[OrderRequest]) -> list[PlaceResult]:
        if not orders or len(orders) > MAX_BATCH:
            raise RequestValidationError(
                f"place_orders takes 1 to {MAX_BATCH} orders, got {len(orders)}"
            )
        items: list[OrderInput | Rejected] = [_order_input(o) for o in orders]
        try:
            results = self.engine.place_batch(items)
        except SimError as exc:  # the ids of the refusal's context, only when refused
            reject(exc, "POST", "/v3/trade/orders", [o.clOrdId for o in orders if o.clOrdId])
        exact = _PLACE.exact  # every field of the model, each of its type: nothing to sort
        return [
            exact({"clOrdId": r.cl_ord_id, "ordId": r.ord_id, "code": r.code, "msg": r.msg})
            for r in results
        ]

    def cancel_order(
        self, symbol: str, *, ord_id: str | None = None, cl_ord_id: str | None = None
    ) -> CancelResult:
        if not ord_id and not cl_ord_id:
            raise RequestValidationError("cancel_order needs ord_id or cl_ord_id")
        ids = (cl_ord_id,) if cl_ord_id else ()

        def cancel() -> CancelResult:
            self.engine.instrument(symbol)
            order = self.engine.cancel(symbol, ord_id=ord_id, cl_ord_id=cl_ord_id)
            return _cancelled(str(order.ord_id), order.cl_ord_id)

        return self._call("DELETE", "/v3/trade/order", cancel, ids)

    def cancel_orders(
        self, symbol: str, *, ord_ids: Sequence[str] = (), cl_ord_ids: Sequence[str] = ()
    ) -> list[CancelResult]:
        count = len(ord_ids) + len(cl_ord_ids)
        if not 1 <= count <= MAX_BATCH:
            raise RequestValidationError(f"cancel_orders takes 1 to {MAX_BATCH} ids, got {count}")
        self._call("DELETE", "/v3/trade/batchOrders", lambda: self.engine.instrument(symbol))
        out = []
        wanted = [(i, None) for i in ord_ids] + [(None, c) for c in cl_ord_ids]
        for oid, cid in wanted:
            try:
                order = self.engine.cancel(symbol, ord_id=oid, cl_ord_id=cid)
            except SimError as exc:
                out.append(
                    _CANCEL(
                        {"ordId": oid or "", "clOrdId": cid or "", "code": exc.code, "msg": exc.msg}
                    )
                )
            else:
                out.append(_cancelled(str(order.ord_id), order.cl_ord_id))
        return out

    def cancel_all(
        self, symbol: str | None = None, side: OrderSide | None = None
    ) -> list[CancelResult]:
        chosen = self._call(
            "DELETE",
            "/v3/trade/allOrders",
            lambda: self.engine.cancel_all(symbol, OrderSide(side) if side else None),
        )
        return [_cancelled(str(o.ord_id), o.cl_ord_id) for o in chosen]

    def set_position_mode(self, mode: PositionMode) -> None:
        self._call(
            "POST",
            "/v3/position/mode",
            lambda: self.engine.set_position_mode(PositionMode(mode)),
        )

    def set_leverage(
        self, symbol: str, lever: int, *, mgn_mode: MarginMode, pos_side: PosSide = PosSide.BOTH
    ) -> None:
        self._call(
            "POST",
            "/v3/position/leverage",
            lambda: self.engine.set_leverage(
                symbol, Decimal(lever), MarginMode(mgn_mode), PosSide(pos_side)
            ),
        )


def _order_input(order: OrderRequest) -> OrderInput:
    """The order as the engine judges it, with the amounts' texts the HTTP client would send:
    those of its wire body (``OrderRequest.amount_texts``, made with the body's texts once per
    request and kept: the executor's journal row made them already; no body built), the same
    as ``sz_text`` and ``px_text``. Positional, in OrderInput's field order (keywords cost a
    fifth of the construction)."""
    sz_text, px_text = order.amount_texts()
    return OrderInput(
        order.symbol,  # symbol
        order.side,  # side
        order.type,  # type
        order.sz,  # sz
        order.px,  # px
        order.mgnMode,  # mgn_mode
        order.posSide,  # pos_side
        order.clOrdId,  # cl_ord_id
        order.reduceOnly,  # reduce_only
        order.timeInForce,  # tif
        order.stpMode,  # stp
        sz_text,  # sz_text
        px_text,  # px_text
    )


def _cancelled(ord_id: str, cl_ord_id: str) -> CancelResult:
    # exactly the model's fields, each of its type: what ``_CANCEL(...)`` finds, unchecked
    return _CANCEL.exact(
        {"ordId": ord_id, "clOrdId": cl_ord_id, "code": codes.SUCCESS, "msg": "Success"}
    )
