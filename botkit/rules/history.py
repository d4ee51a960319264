"""``history.*`` of the expression context: fills, closed orders and closed positions.

Each is a list of records of the strategy's symbol with window helpers (``count('1h')``,
``sum('qty', '1d')``, ``last``, ``last_ago``) and filters (``mine``, ``buys``, ``sells``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from botkit.exchange.models import (
    Fill,
    Order,
    OrderHistoryState,
    OrderSide,
    PositionHistory,
)
from botkit.rules.durations import parse_duration
from botkit.rules.ids import strategy_tag

if TYPE_CHECKING:
    from botkit.rules.context import Ctx
from botkit.rules.views import (
    BOOL,
    NEVER,
    NUM,
    ZERO,
    Field,
    Method,
    View,
    has_strategy_tag,
    numbers,
)

__all__ = ["ClosedPositionsView", "FillsView", "HistoryView", "OrdersView"]


class RecordView(View):
    """One history record; every field is zero when there is none (``exists`` false)."""

    NUMS: ClassVar[dict[str, str]] = {}
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_r",)

    def __init__(self, record: Any | None) -> None:
        self._r = record

    @staticmethod
    def number(record: Any, name: str) -> Decimal:
        """Field ``name`` of ``record`` as a number (0 when absent). Not ``value``: that is a
        field of a fill, read through the view's ``FIELDS`` like every other."""
        raw = getattr(record, name)
        if raw is None:
            return ZERO
        return raw if isinstance(raw, Decimal) else Decimal(raw)


def _record_num(name: str) -> Callable[[RecordView], Decimal]:
    def read(view: RecordView) -> Decimal:
        record = view._r
        return ZERO if record is None else RecordView.number(record, name)

    return read


def _record_fields(nums: Mapping[str, str]) -> dict[str, Field]:
    return {
        **numbers(_record_num, nums),
        "exists": Field(BOOL, "there is such a record", lambda view: view._r is not None),
        "is_buy": Field(
            BOOL,
            "the record's side is BUY",
            lambda view: view._r is not None and view._r.side is OrderSide.BUY,
        ),
    }


class FillRecord(RecordView):
    DOC = "one fill (spec 2.6)"
    NUMS: ClassVar[dict[str, str]] = {
        "px": "fill price",
        "qty": "filled contracts",
        "value": "filled value",
        "feeAmt": "fee",
        "feeRate": "fee rate",
        "cTime": "time (ms)",
    }
    FIELDS = _record_fields(NUMS)
    __slots__ = ()


class OrderRecord(RecordView):
    DOC = "one closed order (spec 2.5)"
    NUMS: ClassVar[dict[str, str]] = {
        "px": "limit price",
        "sz": "size",
        "avgPx": "average fill price",
        "execQty": "filled contracts",
        "execAmt": "filled amount",
        "feeAmt": "fee",
        "lever": "leverage",
        "cTime": "created (ms)",
        "uTime": "closed (ms)",
    }
    FIELDS = _record_fields(NUMS)
    __slots__ = ()


class ClosedPositionRecord(RecordView):
    DOC = "one closed position (spec 2.7)"
    NUMS: ClassVar[dict[str, str]] = {
        "openAvgPx": "average entry price",
        "closeAvgPx": "average exit price",
        "qty": "size",
        "closedQty": "closed size",
        "pnl": "realized PnL",
        "fee": "fees",
        "cTime": "opened (ms)",
        "uTime": "closed (ms)",
    }
    FIELDS = _record_fields(NUMS)
    __slots__ = ()


def _fill_time(r: Fill) -> int:
    return r.cTime or r.uTime or 0


def _closed_time(r: Order | PositionHistory) -> int:
    return r.uTime or r.cTime or 0


class RecordsView(View):
    """A list of history records of the strategy's symbol, newest last, with window helpers."""

    RECORD: ClassVar[type[RecordView]] = RecordView
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_items", "_now", "_strategy", "_time")

    def __init__(
        self, items: Sequence[Any], now_ms: int, time: Callable[[Any], int], strategy: str
    ) -> None:
        self._items = sorted(items, key=time)
        self._now = now_ms
        self._time = time
        self._strategy = strategy

    def sub(self, keep: Callable[[Any], bool]) -> RecordsView:
        """The records ``keep`` keeps, as a view of the same kind."""
        return type(self)(
            [r for r in self._items if keep(r)], self._now, self._time, self._strategy
        )

    def _window(self, window: str) -> list[Any]:
        since = self._now - parse_duration(window)
        return [r for r in self._items if self._time(r) >= since]

    def count(self, window: str) -> Decimal:
        return Decimal(len(self._window(window)))

    def sum(self, name: str, window: str) -> Decimal:
        return sum((self.RECORD.number(r, name) for r in self._window(window)), ZERO)

    def avg(self, name: str, window: str) -> Decimal:
        items = self._window(window)
        if not items:
            return ZERO
        return sum((self.RECORD.number(r, name) for r in items), ZERO) / len(items)

    def min(self, name: str, window: str) -> Decimal:
        return min((self.RECORD.number(r, name) for r in self._window(window)), default=ZERO)

    def max(self, name: str, window: str) -> Decimal:
        return max((self.RECORD.number(r, name) for r in self._window(window)), default=ZERO)


def _last(view: RecordsView) -> RecordView:
    items = view._items
    return view.RECORD(items[-1] if items else None)


def _last_ago(view: RecordsView) -> Decimal:
    items = view._items
    return Decimal(view._now - view._time(items[-1])) if items else NEVER


def _mine(view: RecordsView) -> RecordsView:
    tag = strategy_tag(view._strategy)
    return view.sub(lambda r: has_strategy_tag(getattr(r, "clOrdId", ""), tag))


def _records_fields(
    view: type[RecordsView], record: type[RecordView], what: str, mine: bool
) -> dict[str, Field]:
    fields: dict[str, Field] = {
        "count": Field(Method(("window",), NUM, f"{what} in the window, e.g. count('1h')"), ""),
        "sum": Field(
            Method(("field", "window"), NUM, f"sum of a field, e.g. sum('{_first(record)}', '1d')"),
            "",
        ),
        "avg": Field(Method(("field", "window"), NUM, "average of a field (0 when none)"), ""),
        "min": Field(
            Method(("field", "window"), NUM, "smallest value of a field (0 when none)"), ""
        ),
        "max": Field(
            Method(("field", "window"), NUM, "largest value of a field (0 when none)"), ""
        ),
        "last": Field(record, f"the latest of the {what}", _last),
        "last_ago": Field(NUM, "ms since the latest (Infinity when none)", _last_ago),
        "buys": Field(view, "only BUY side", lambda v: v.sub(lambda r: r.side is OrderSide.BUY)),
        "sells": Field(view, "only SELL side", lambda v: v.sub(lambda r: r.side is OrderSide.SELL)),
    }
    if mine:
        fields["mine"] = Field(view, "only this strategy's orders (by client order id)", _mine)
    return fields


def _first(record: type[RecordView]) -> str:
    return next(iter(record.NUMS))


class FillsView(RecordsView):
    DOC = "fills of the strategy's symbol"
    RECORD = FillRecord
    __slots__ = ()


class OrdersView(RecordsView):
    DOC = "closed orders of the strategy's symbol"
    RECORD = OrderRecord
    __slots__ = ()


class ClosedPositionsView(RecordsView):
    DOC = "closed positions of the strategy's symbol"
    RECORD = ClosedPositionRecord
    __slots__ = ()


FillsView.FIELDS = _records_fields(FillsView, FillRecord, "fills", mine=True)
OrdersView.FIELDS = {
    **_records_fields(OrdersView, OrderRecord, "closed orders", mine=True),
    "filled": Field(
        OrdersView,
        "only fully filled orders",
        lambda v: v.sub(lambda r: r.state is OrderHistoryState.FILLED),
    ),
}
ClosedPositionsView.FIELDS = _records_fields(
    ClosedPositionsView, ClosedPositionRecord, "closed positions", mine=False
)


class HistoryView(View):
    DOC = "what happened on the strategy's symbol (as far as the snapshot reaches back)"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx


def _fills(view: HistoryView) -> FillsView:
    ctx = view._ctx
    fills = [f for f in ctx.snapshot.fills if f.symbol == ctx.symbol]
    return FillsView(fills, ctx.now_ms, _fill_time, ctx.strategy)


def _orders(view: HistoryView) -> OrdersView:
    ctx = view._ctx
    orders = [o for o in ctx.snapshot.order_history if o.symbol == ctx.symbol]
    return OrdersView(orders, ctx.now_ms, _closed_time, ctx.strategy)


def _closed_positions(view: HistoryView) -> ClosedPositionsView:
    ctx = view._ctx
    closed = [p for p in ctx.snapshot.position_history if p.symbol == ctx.symbol]
    return ClosedPositionsView(closed, ctx.now_ms, _closed_time, ctx.strategy)


HistoryView.FIELDS = {
    "fills": Field(FillsView, "fills", _fills),
    "orders": Field(OrdersView, "closed orders", _orders),
    "positions": Field(ClosedPositionsView, "closed positions", _closed_positions),
}
