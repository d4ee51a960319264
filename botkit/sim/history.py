"""Closed orders, executions and closed positions, and the spec's paging over them (4.2).

Records are kept in id order (ids grow with time). A query returns at most ``limit`` records,
newest first:

* ``direct=NEXT`` (default) walks back in time: records with an id *below* ``from``
  (``from=0``: from the newest record);
* ``direct=PREV`` walks forward: the ``limit`` records with an id *above* ``from`` that are
  nearest to it (``from=0``: the oldest records), still returned newest first.

So paging back through history is ``from=<id of the last record of the page>``, direct NEXT;
paging forward again is ``from=<id of the first record>``, direct PREV. The time window is
``[sTime, eTime]``, by default the last 90 days; orders and executions are filtered on their
creation time, positions on their close time.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import compress
from operator import not_
from typing import Generic, Literal, Protocol, TypeVar

from botkit.exchange.models import MarginMode, OrderSide, OrderType, PosSide
from botkit.frozen import quick_init
from botkit.sim.accounts import PositionRecord
from botkit.sim.book import OrderState, SimOrder
from botkit.sim.codes import SimError

__all__ = [
    "CANCELED_VISIBLE_MS",
    "DEFAULT_LIMIT",
    "DEFAULT_WINDOW_MS",
    "MAX_LIMIT",
    "FillRecord",
    "History",
    "Window",
    "make_window",
    "order_filter",
    "select",
]

DEFAULT_WINDOW_MS = 90 * 86_400_000
CANCELED_VISIBLE_MS = 5 * 3_600_000
DEFAULT_LIMIT = 10
MAX_LIMIT = 100

T = TypeVar("T")
Direction = Literal["NEXT", "PREV"]


@quick_init
@dataclass(frozen=True, slots=True)
class FillRecord:
    """One execution (2.6)."""

    id: int
    trd_id: int
    symbol: str
    ord_id: int
    cl_ord_id: str
    side: OrderSide
    mgn_mode: MarginMode
    pos_side: PosSide
    ord_type: OrderType
    role: str
    px: Decimal
    qty: Decimal
    value: Decimal
    fee: Decimal
    fee_rate: Decimal
    c_time: int


@quick_init
@dataclass(frozen=True, slots=True)
class Window:
    """The paging and time parameters of one history query, checked."""

    start: int
    end: int
    from_id: int = 0
    limit: int = DEFAULT_LIMIT
    direct: Direction = "NEXT"


def make_window(
    now_ms: int,
    *,
    start: int | None = None,
    end: int | None = None,
    from_id: int | None = None,
    limit: int | None = None,
    direct: str | None = None,
) -> Window:
    """Check the spec's paging parameters and fill the defaults; bad ones raise SimError 400."""
    if limit is None:
        limit = DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise SimError.param(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    word = (direct or "NEXT").upper()
    if word not in ("NEXT", "PREV"):
        raise SimError.param(f"direct must be NEXT or PREV, got {direct!r}")
    if from_id is not None and from_id < 0:
        raise SimError.param(f"from must be an id >= 0, got {from_id}")
    if end is None:
        end = now_ms if start is None else max(now_ms, start)
    if start is None:
        start = end - DEFAULT_WINDOW_MS
    if start > end:
        raise SimError.param(f"sTime {start} is after eTime {end}")
    return Window(start, end, from_id or 0, limit, "PREV" if word == "PREV" else "NEXT")


class _Series(Generic[T]):
    """Records in id order with their ids, for bisecting."""

    __slots__ = ("_id", "ids", "records")

    def __init__(self, id_of: Callable[[T], int]) -> None:
        self.records: list[T] = []
        self.ids: list[int] = []
        self._id = id_of

    def add(self, record: T) -> None:
        rid = self._id(record)
        if self.ids and rid < self.ids[-1]:  # pragma: no cover - ids are monotonic
            index = bisect_left(self.ids, rid)
            self.ids.insert(index, rid)
            self.records.insert(index, record)
            return
        self.ids.append(rid)
        self.records.append(record)

    def drop(self, hidden: Sequence[bool]) -> None:
        """Forget the records whose flag in ``hidden`` (one per record, in order) is true."""
        shown = list(map(not_, hidden))
        self.records = list(compress(self.records, shown))
        self.ids = list(compress(self.ids, shown))

    def select(
        self, window: Window, time_of: Callable[[T], int], match: Callable[[T], bool]
    ) -> list[T]:
        return select(self.records, self.ids, window, time_of, match)


def select(
    records: Sequence[T],
    ids: Sequence[int],
    window: Window,
    time_of: Callable[[T], int],
    match: Callable[[T], bool],
) -> list[T]:
    """One page of ``records`` (ascending by id), newest first; see the module docstring."""
    out: list[T] = []
    start, end, limit = window.start, window.end, window.limit
    if window.direct == "NEXT":
        hi = bisect_left(ids, window.from_id) if window.from_id else len(records)
        for i in range(hi - 1, -1, -1):
            rec = records[i]
            if start <= time_of(rec) <= end and match(rec):
                out.append(rec)
                if len(out) == limit:
                    break
        return out
    for i in range(bisect_right(ids, window.from_id), len(records)):
        rec = records[i]
        if start <= time_of(rec) <= end and match(rec):
            out.append(rec)
            if len(out) == limit:
                break
    out.reverse()
    return out


class _OrderKeyed(Protocol):
    @property
    def symbol(self) -> str: ...
    @property
    def side(self) -> OrderSide: ...
    @property
    def ord_id(self) -> int: ...
    @property
    def cl_ord_id(self) -> str: ...


def order_filter(
    symbol: str | None, side: OrderSide | None, ord_id: int | None, cl_ord_id: str | None
) -> Callable[[_OrderKeyed], bool]:
    """The filters orders and executions share: symbol, side, ordId, clOrdId (None: any)."""

    def match(r: _OrderKeyed) -> bool:
        return (
            (symbol is None or r.symbol == symbol)
            and (side is None or r.side is side)
            and (ord_id is None or r.ord_id == ord_id)
            and (cl_ord_id is None or r.cl_ord_id == cl_ord_id)
        )

    return match


def _order_id(o: SimOrder) -> int:
    return o.ord_id


def _fill_id(f: FillRecord) -> int:
    return f.id


def _position_id(p: PositionRecord) -> int:
    return p.id


class History:
    """Closed orders, executions and closed positions of the account."""

    def __init__(self) -> None:
        self.orders: _Series[SimOrder] = _Series(_order_id)
        self.fills: _Series[FillRecord] = _Series(_fill_id)
        self.positions: _Series[PositionRecord] = _Series(_position_id)

    @staticmethod
    def visible(order: SimOrder, now_ms: int) -> bool:
        """Closed, and not a fill-less API cancel older than 5 hours."""
        if order.state not in OrderState.CLOSED:
            return False
        if order.state == OrderState.CANCELED and not order.exec_qty and order.source == "API":
            return now_ms - order.u_time < CANCELED_VISIBLE_MS
        return True

    def prune(self, now_ms: int) -> list[SimOrder]:
        """Forget closed orders no query can show any more; returns them. Those are the
        fill-less API cancels older than 5 hours (:meth:`visible` with its checks in one
        expression: the engine prunes every thousand orders placed or more, over every
        order still shown — a year's filled ones among them)."""
        cutoff = now_ms - CANCELED_VISIBLE_MS  # now - u_time >= the span: u_time <= cutoff
        canceled = OrderState.CANCELED
        records = self.orders.records
        hidden = [
            o.state == canceled and o.u_time <= cutoff and not o.exec_qty and o.source == "API"
            for o in records
        ]
        if not any(hidden):
            return []
        gone = list(compress(records, hidden))
        self.orders.drop(hidden)
        return gone

    def order_history(
        self,
        now_ms: int,
        window: Window,
        *,
        symbol: str | None = None,
        side: OrderSide | None = None,
        ord_id: int | None = None,
        cl_ord_id: str | None = None,
        state: str | None = None,
        type: OrderType | None = None,
    ) -> list[SimOrder]:
        keyed = order_filter(symbol, side, ord_id, cl_ord_id)

        def match(o: SimOrder) -> bool:
            return (
                self.visible(o, now_ms)
                and keyed(o)
                and (state is None or o.state == state)
                and (type is None or o.type is type)
            )

        return self.orders.select(window, lambda o: o.c_time, match)

    def trades(
        self,
        window: Window,
        *,
        symbol: str | None = None,
        side: OrderSide | None = None,
        ord_id: int | None = None,
        cl_ord_id: str | None = None,
    ) -> list[FillRecord]:
        match = order_filter(symbol, side, ord_id, cl_ord_id)
        return self.fills.select(window, lambda f: f.c_time, match)

    def position_history(
        self,
        window: Window,
        *,
        symbol: str | None = None,
        mgn_mode: MarginMode | None = None,
        pos_side: PosSide | None = None,
    ) -> list[PositionRecord]:
        def match(p: PositionRecord) -> bool:
            return (
                (symbol is None or p.symbol == symbol)
                and (mgn_mode is None or p.mgn_mode is mgn_mode)
                and (pos_side is None or p.pos_side is pos_side)
            )

        return self.positions.select(window, lambda p: p.u_time, match)
