"""What the rules decide, as plain values: the hand-over from the rule engine to the pipeline.

Rules produce intents; the pipeline validates, rounds, batches, submits and journals them. An
intent is immutable and carries everything the journal needs to answer "why was this sent?":
strategy, rule, evaluation slot and leg index, from which the client order id is derived.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from itertools import islice
from typing import Any, TypeVar, overload

from botkit.exchange.models import (
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    TimeInForce,
    order_request,
)
from botkit.frozen import quick_init

T = TypeVar("T")

__all__ = [
    "AMOUNT_LIMIT",
    "Activity",
    "CancelIntent",
    "DeclaredOrder",
    "Intent",
    "KeepIntent",
    "KeepPolicy",
    "LeverageIntent",
    "OffTick",
    "OrderIntent",
    "PositionModeIntent",
    "RiskLimits",
    "RuleActivity",
    "Timeline",
]


AMOUNT_LIMIT = Decimal(10) ** 15
"""No size or price reaches this (a quadrillion contracts, or quote units per contract): a value
at or beyond it is a mistake (``sz: 10 ** 60``). ``botkit check`` refuses a constant one; the
pipeline refuses any one, before any arithmetic on it."""


@quick_init
@dataclass(frozen=True, slots=True)
class OrderIntent:
    """One order a rule wants, before rounding and validation.

    ``px`` and ``sz`` are the values the expressions produced (unrounded); ``cl_ord_id`` is
    deterministic in (strategy, rule, slot, leg).
    """

    strategy: str
    rule: str
    slot: int
    leg: int
    cl_ord_id: str
    symbol: str
    side: OrderSide
    type: OrderType
    sz: Decimal
    px: Decimal | None = None
    mgn_mode: MarginMode = MarginMode.CROSS
    pos_side: PosSide = PosSide.BOTH
    reduce_only: bool = False
    time_in_force: TimeInForce = TimeInForce.GTC
    stp_mode: StpMode = StpMode.NONE
    inputs: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    """The values the rule saw (name → decimal string), for the journal."""

    def to_request(self, *, px: Decimal | None, sz: Decimal) -> OrderRequest:
        """The order as sent, with the validated (rounded) price and size (the model's
        validation refuses what it refuses: :func:`~botkit.exchange.models.order_request`)."""
        return order_request(
            symbol=self.symbol,
            side=self.side,
            order_type=self.type,
            sz=sz,
            px=px,
            mgn_mode=self.mgn_mode,
            pos_side=self.pos_side,
            cl_ord_id=self.cl_ord_id,
            reduce_only=self.reduce_only,
            time_in_force=self.time_in_force,
            stp_mode=self.stp_mode,
        )


@quick_init
@dataclass(frozen=True, slots=True)
class CancelIntent:
    """Cancel this strategy's open orders on ``symbol``: all of them, or those of ``only_rule``."""

    strategy: str
    rule: str
    symbol: str
    only_rule: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class LeverageIntent:
    strategy: str
    rule: str
    symbol: str
    lever: int
    mgn_mode: MarginMode
    pos_side: PosSide = PosSide.BOTH


@quick_init
@dataclass(frozen=True, slots=True)
class PositionModeIntent:
    strategy: str
    rule: str
    mode: PositionMode


@quick_init
@dataclass(frozen=True, slots=True)
class KeepPolicy:
    """How a ``keep:`` rule's declared orders are kept (see docs/strategies.md).

    ``tolerance``: how far a resting price may drift from the declared one before the order is
    replaced, in basis points of the price (``tolerance_ticks`` False) or in ticks;
    ``refill_ms``: when an order that filled is placed again (``None``: never, 0: at once);
    ``min_rest_ms``: an order younger than this is not replaced for drift;
    ``max_replacements``: at most this many re-placements per minute (``None``: no limit).
    """

    tolerance: Decimal = Decimal(10)
    tolerance_ticks: bool = False
    refill_ms: int | None = 0
    min_rest_ms: int = 0
    max_replacements: int | None = None

    def describe_tolerance(self) -> str:
        if self.tolerance_ticks:
            return f"{self.tolerance.normalize():f} tick(s)"
        return f"{(self.tolerance / 100).quantize(Decimal('0.01')):f} %"


@quick_init
@dataclass(frozen=True, slots=True)
class DeclaredOrder:
    """One order a ``keep:`` rule says should rest now: rung ``rung`` of the rule (its stable
    identity: order k of ``orders``, rung k of a ladder, leg k of a grid), price and size as the
    expressions gave them (unrounded)."""

    rung: int
    side: OrderSide
    type: OrderType
    sz: Decimal
    px: Decimal | None = None
    mgn_mode: MarginMode = MarginMode.CROSS
    pos_side: PosSide = PosSide.BOTH
    reduce_only: bool = False
    time_in_force: TimeInForce = TimeInForce.GTC
    stp_mode: StpMode = StpMode.NONE


@quick_init
@dataclass(frozen=True, slots=True)
class KeepIntent:
    """The orders a ``keep:`` rule declares now (its condition held): the runner reconciles
    them with the rule's resting orders (:mod:`botkit.pipeline.desired`)."""

    strategy: str
    rule: str
    symbol: str
    orders: tuple[DeclaredOrder, ...]
    policy: KeepPolicy
    inputs: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


Intent = OrderIntent | CancelIntent | LeverageIntent | PositionModeIntent | KeepIntent


class Timeline(Sequence[T]):
    """An oldest-first sequence of a rule's activity (fire times, or ``(time, client order id)``
    orders) that grows at its end and is cut at its start without copying what it holds.

    It is a view, ``[lo, hi)``, of a list that is only ever appended to: :meth:`extended`
    appends to that list when the view is its newest (no other view reaches past ``hi``, so
    none changes) and copies otherwise; :meth:`cut` moves ``lo`` (a bisection) and starts a
    list of its own once more than half of the old one lies before it, so the storage stays
    within twice the window and each item is copied a bounded number of times. A view, once
    made, never changes: the activity a cycle was given stays what it was. It equals (and
    hashes as) the tuple of its items, so an activity built of timelines equals one built of
    tuples (the journal's read). Its items must stay sorted (the makers keep them so): the
    counts below bisect."""

    __slots__ = ("_hi", "_items", "_lo")

    def __init__(self, items: list[T], lo: int = 0, hi: int | None = None) -> None:
        self._items = items
        self._lo = lo
        self._hi = len(items) if hi is None else hi

    @classmethod
    def of(cls, items: Iterable[T]) -> Timeline[T]:
        """A timeline holding ``items`` (a copy), oldest first."""
        if isinstance(items, Timeline):
            return items
        return cls(list(items))

    def __len__(self) -> int:
        return self._hi - self._lo

    def __bool__(self) -> bool:
        return self._hi > self._lo

    @property
    def first(self) -> T | None:
        """The oldest item (None: empty)."""
        return self._items[self._lo] if self._hi > self._lo else None

    @property
    def last(self) -> T | None:
        """The newest item (None: empty)."""
        return self._items[self._hi - 1] if self._hi > self._lo else None

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return tuple(self)[index]
        size = self._hi - self._lo
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("timeline index out of range")
        return self._items[self._lo + index]

    def __iter__(self) -> Iterator[T]:
        if self._lo == 0:
            return islice(self._items, self._hi)
        return iter(self._items[self._lo : self._hi])

    def __reversed__(self) -> Iterator[T]:
        end = len(self._items)
        return islice(reversed(self._items), end - self._hi, end - self._lo)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Timeline | tuple):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Timeline({list(self)!r})"

    def __reduce__(self) -> tuple[type[Timeline[T]], tuple[list[T]]]:
        return Timeline, (list(self),)  # pickled: its own items only

    def cut(self, probe: Any) -> Timeline[T]:
        """The items from the first one not below ``probe`` on (a time for fires, ``(time,)``
        for orders)."""
        items, hi = self._items, self._hi
        lo = bisect_left(items, probe, self._lo, hi)
        if lo == self._lo:
            return self
        if lo > _COMPACT_FROM and 2 * lo > len(items):
            return Timeline(items[lo:hi])
        return Timeline(items, lo, hi)

    def extended(self, news: Iterable[T]) -> Timeline[T]:
        """This timeline with ``news`` (each newer than its last item) after it."""
        items, hi = self._items, self._hi
        if hi != len(items):  # another view grew the list past this one: a list of its own
            items = items[self._lo : hi]
            return Timeline(items, 0, len(items)).extended(news)
        items.extend(news)
        return Timeline(items, self._lo, len(items))

    def count_from(self, probe: Any) -> int:
        """How many items are not below ``probe``."""
        return self._hi - bisect_left(self._items, probe, self._lo, self._hi)

    def between(self, after: Any, until: Any) -> list[T]:
        """The items above ``after`` and not above ``until``, oldest first."""
        items, lo, hi = self._items, self._lo, self._hi
        return items[bisect_right(items, after, lo, hi) : bisect_right(items, until, lo, hi)]

    def count_between(self, after: Any, until: Any) -> int:
        """How many items are above ``after`` and not above ``until``."""
        items, lo, hi = self._items, self._lo, self._hi
        return max(0, bisect_right(items, until, lo, hi) - bisect_right(items, after, lo, hi))


_COMPACT_FROM = 256
"""A timeline cut this far into its list may start a list of its own (below it, never)."""


@quick_init
@dataclass(frozen=True, slots=True)
class RuleActivity:
    """What one rule did recently, as the journal remembers it (survives restarts).

    ``fire_times_ms``: the times the rule fired, oldest first (within the window asked for).
    ``orders``: (time_ms, cl_ord_id) of the orders it placed (accepted by the exchange or pending).
    Either is a tuple (the journal's read) or a :class:`Timeline` (the activity cache's, grown
    cycle by cycle); the counts below bisect a timeline and count a tuple one by one.
    """

    fire_times_ms: Sequence[int] = ()
    orders: Sequence[tuple[int, str]] = ()

    @property
    def last_fire_ms(self) -> int | None:
        return self.fire_times_ms[-1] if self.fire_times_ms else None

    def fires_since(self, since_ms: int) -> int:
        """The fires at or after ``since_ms``."""
        fires = self.fire_times_ms
        if isinstance(fires, Timeline):
            return fires.count_from(since_ms)
        return sum(1 for t in fires if t >= since_ms)

    def fires_within(self, after_ms: int, until_ms: int) -> list[int]:
        """The fire times after ``after_ms`` and not after ``until_ms``, oldest first."""
        fires = self.fire_times_ms
        if isinstance(fires, Timeline):
            return fires.between(after_ms, until_ms)
        return sorted(t for t in fires if after_ms < t <= until_ms)

    def count_fires_within(self, after_ms: int, until_ms: int) -> int:
        """How many fires came after ``after_ms`` and not after ``until_ms``."""
        fires = self.fire_times_ms
        if isinstance(fires, Timeline):
            return fires.count_between(after_ms, until_ms)
        return sum(1 for t in fires if after_ms < t <= until_ms)

    def orders_since(self, since_ms: int) -> int:
        """The orders placed at or after ``since_ms``."""
        orders = self.orders
        if isinstance(orders, Timeline):
            return orders.count_from((since_ms,))
        return sum(1 for t, _ in orders if t >= since_ms)


Activity = dict[str, RuleActivity]
"""A strategy's activity by rule name."""


# --- what a strategy file says about execution (the pipeline applies it) ----------------------


class OffTick(StrEnum):
    """What to do with a price that is not a multiple of the tick: round it passively or refuse."""

    ROUND = "round"
    REFUSE = "refuse"


def _min(a: Decimal | None, b: Decimal | None) -> Decimal | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


@quick_init
@dataclass(frozen=True, slots=True)
class RiskLimits:
    """Risk guards; ``None`` means "no limit". Notional is in the quote currency, positions in
    contracts. The operator sets global ones, a strategy file its own; the stricter applies."""

    max_orders_per_cycle: int | None = None
    max_notional_per_order: Decimal | None = None
    max_notional_per_cycle: Decimal | None = None
    max_position: Decimal | None = None

    def stricter(self, other: RiskLimits) -> RiskLimits:
        """Each limit the smaller of the two (a ``None`` never loosens the other)."""
        orders = self.max_orders_per_cycle
        if other.max_orders_per_cycle is not None:
            orders = (
                other.max_orders_per_cycle
                if orders is None
                else min(orders, other.max_orders_per_cycle)
            )
        return RiskLimits(
            max_orders_per_cycle=orders,
            max_notional_per_order=_min(self.max_notional_per_order, other.max_notional_per_order),
            max_notional_per_cycle=_min(self.max_notional_per_cycle, other.max_notional_per_cycle),
            max_position=_min(self.max_position, other.max_position),
        )
