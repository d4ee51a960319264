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
from botkit.rules.views import BOOL, NEVER, NUM, ZERO, Method, View, has_strategy_tag

__all__ = ["ClosedPositionsView", "FillsView", "HistoryView", "OrdersView"]


class RecordView(View):
    """One history record; every field is zero when there is none (``exists`` false)."""

    NUMS: ClassVar[dict[str, str]] = {}
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {}
    __slots__ = ("_r",)

    def __init__(self, record: Any | None) -> None:
        self._r = record

    def __getattr__(self, name: str) -> Any:
        if name == "exists":
            return self._r is not None
        if name == "is_buy":
            return self._r is not None and self._r.side is OrderSide.BUY
        if name.startswith("_") or name not in self.FIELDS:
            raise AttributeError(name)
        if self._r is None:
            return ZERO
        return self.value(self._r, name)

    @staticmethod
    def value(record: Any, name: str) -> Decimal:
        raw = getattr(record, name)
        if raw is None:
            return ZERO
        return raw if isinstance(raw, Decimal) else Decimal(raw)


def _record_fields(nums: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    return {
        **{k: (NUM, v) for k, v in nums.items()},
        "exists": (BOOL, "there is such a record"),
        "is_buy": (BOOL, "the record's side is BUY"),
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
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {}
    __slots__ = ("_items", "_now", "_strategy", "_time")

    def __init__(
        self, items: Sequence[Any], now_ms: int, time: Callable[[Any], int], strategy: str
    ) -> None:
        self._items = sorted(items, key=time)
        self._now = now_ms
        self._time = time
        self._strategy = strategy

    def _sub(self, keep: Callable[[Any], bool]) -> RecordsView:
        return type(self)(
            [r for r in self._items if keep(r)], self._now, self._time, self._strategy
        )

    def _window(self, window: str) -> list[Any]:
        since = self._now - parse_duration(window)
        return [r for r in self._items if self._time(r) >= since]

    def count(self, window: str) -> Decimal:
        return Decimal(len(self._window(window)))

    def sum(self, name: str, window: str) -> Decimal:
        return sum((self.RECORD.value(r, name) for r in self._window(window)), ZERO)

    def avg(self, name: str, window: str) -> Decimal:
        items = self._window(window)
        if not items:
            return ZERO
        return sum((self.RECORD.value(r, name) for r in items), ZERO) / len(items)

    def min(self, name: str, window: str) -> Decimal:
        return min((self.RECORD.value(r, name) for r in self._window(window)), default=ZERO)

    def max(self, name: str, window: str) -> Decimal:
        return max((self.RECORD.value(r, name) for r in self._window(window)), default=ZERO)

    def __getattr__(self, name: str) -> Any:
        if name == "last":
            return self.RECORD(self._items[-1] if self._items else None)
        if name == "last_ago":
            return Decimal(self._now - self._time(self._items[-1])) if self._items else NEVER
        if name == "mine":
            tag = strategy_tag(self._strategy)
            return self._sub(lambda r: has_strategy_tag(getattr(r, "clOrdId", ""), tag))
        if name == "buys":
            return self._sub(lambda r: r.side is OrderSide.BUY)
        if name == "sells":
            return self._sub(lambda r: r.side is OrderSide.SELL)
        raise AttributeError(name)


def _records_fields(
    view: type[RecordsView], record: type[RecordView], what: str, mine: bool
) -> dict[str, tuple[Any, str]]:
    fields: dict[str, tuple[Any, str]] = {
        "count": (Method(("window",), NUM, f"{what} in the window, e.g. count('1h')"), ""),
        "sum": (
            Method(("field", "window"), NUM, f"sum of a field, e.g. sum('{_first(record)}', '1d')"),
            "",
        ),
        "avg": (Method(("field", "window"), NUM, "average of a field (0 when none)"), ""),
        "min": (Method(("field", "window"), NUM, "smallest value of a field (0 when none)"), ""),
        "max": (Method(("field", "window"), NUM, "largest value of a field (0 when none)"), ""),
        "last": (record, f"the latest of the {what}"),
        "last_ago": (NUM, "ms since the latest (Infinity when none)"),
        "buys": (view, "only BUY side"),
        "sells": (view, "only SELL side"),
    }
    if mine:
        fields["mine"] = (view, "only this strategy's orders (by client order id)")
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

    def __getattr__(self, name: str) -> Any:
        if name == "filled":
            return self._sub(lambda r: r.state is OrderHistoryState.FILLED)
        return super().__getattr__(name)


class ClosedPositionsView(RecordsView):
    DOC = "closed positions of the strategy's symbol"
    RECORD = ClosedPositionRecord
    __slots__ = ()


FillsView.FIELDS = _records_fields(FillsView, FillRecord, "fills", mine=True)
OrdersView.FIELDS = {
    **_records_fields(OrdersView, OrderRecord, "closed orders", mine=True),
    "filled": (OrdersView, "only fully filled orders"),
}
ClosedPositionsView.FIELDS = _records_fields(
    ClosedPositionsView, ClosedPositionRecord, "closed positions", mine=False
)


class HistoryView(View):
    DOC = "what happened on the strategy's symbol (as far as the snapshot reaches back)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        "fills": (FillsView, "fills"),
        "orders": (OrdersView, "closed orders"),
        "positions": (ClosedPositionsView, "closed positions"),
    }
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        ctx = self._ctx
        snap, sym, now, name_ = ctx.snapshot, ctx.symbol, ctx.now_ms, ctx.strategy
        if name == "fills":
            return FillsView([f for f in snap.fills if f.symbol == sym], now, _fill_time, name_)
        if name == "orders":
            items = [o for o in snap.order_history if o.symbol == sym]
            return OrdersView(items, now, _closed_time, name_)
        if name == "positions":
            closed = [p for p in snap.position_history if p.symbol == sym]
            return ClosedPositionsView(closed, now, _closed_time, name_)
        raise AttributeError(name)
