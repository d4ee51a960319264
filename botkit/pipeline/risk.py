"""Risk guards: pure limits on what one cycle may send, and the book that applies them.

Operators set limits globally (settings) and per strategy (the strategy file's ``risk:``). Per
order the stricter of the two applies; per cycle each strategy has its own budget and the global
limits cap the whole cycle across strategies. A guard that trips refuses the order with a
:class:`GuardTrip` carrying the figures (limit and value), which the journal keeps.

``max_position`` bounds the worst case in the order's direction: |position + resting orders on
the same side + orders accepted earlier this cycle + this order|, per symbol and position leg,
sizes in contracts. Reduce-only orders only shrink a position and pass it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Protocol

from botkit.exchange.models import OpenOrder, OrderSide, OrderType, Position, PosSide
from botkit.frozen import quick_init
from botkit.intents import OffTick, OrderIntent, RiskLimits

__all__ = [
    "NO_POLICY",
    "Candidate",
    "GuardSettings",
    "GuardSource",
    "GuardTrip",
    "RiskBook",
    "RiskLimits",
    "StrategyPolicy",
    "Valuation",
    "judged_limits",
    "limits_in_force",
    "notional",
    "reduces_only",
    "signed_position",
]

_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class StrategyPolicy:
    """What a strategy file says about execution: off-tick prices and its own risk limits."""

    off_tick: OffTick = OffTick.ROUND
    limits: RiskLimits = field(default_factory=RiskLimits)


class GuardSource(Protocol):
    """The settings the global guards are read from (:class:`botkit.settings.Settings` is one);
    the core names only these fields, not the settings module."""

    @property
    def kill_switch(self) -> bool: ...
    @property
    def kill_switch_file(self) -> Path | None: ...
    @property
    def halt(self) -> bool: ...
    @property
    def halt_file(self) -> Path | None: ...
    @property
    def max_orders_per_cycle(self) -> int | None: ...
    @property
    def max_notional_per_order(self) -> Decimal | None: ...
    @property
    def max_notional_per_cycle(self) -> Decimal | None: ...
    @property
    def max_position(self) -> Decimal | None: ...


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """The operator's global guards. The runner fills it from the settings.

    ``kill_switch`` (or the presence of ``kill_switch_file``) stops new risk: only orders that
    :func:`reduces_only` and cancels go out. ``halt`` (or the presence of ``halt_file``) stops
    everything that would be sent. Both are checked each cycle by
    :func:`botkit.runner.killswitch.controls`; reads and journaling go on either way.
    """

    limits: RiskLimits = field(default_factory=RiskLimits)
    kill_switch: bool = False
    kill_switch_file: str | None = None
    halt: bool = False
    halt_file: str | None = None

    @classmethod
    def from_settings(cls, settings: GuardSource) -> GuardSettings:
        """The global guards of :class:`botkit.settings.Settings`."""
        file = settings.kill_switch_file
        halt_file = settings.halt_file
        return cls(
            limits=RiskLimits(
                max_orders_per_cycle=settings.max_orders_per_cycle,
                max_notional_per_order=settings.max_notional_per_order,
                max_notional_per_cycle=settings.max_notional_per_cycle,
                max_position=settings.max_position,
            ),
            kill_switch=settings.kill_switch,
            kill_switch_file=None if file is None else str(file),
            halt=settings.halt,
            halt_file=None if halt_file is None else str(halt_file),
        )


@quick_init
@dataclass(frozen=True, slots=True)
class GuardTrip:
    """A guard refused an order (or, for the kill switch, every order of the cycle)."""

    guard: str
    scope: str
    """``global`` or ``strategy``: whose limit tripped."""
    strategy: str | None
    cl_ord_id: str | None
    limit: Decimal | None
    value: Decimal | None
    message: str

    def __str__(self) -> str:
        return f"{self.guard}: {self.message}"


def reduces_only(side: OrderSide, pos_side: PosSide, reduce_only: bool) -> bool:
    """Whether an order can only shrink a position: reduce-only, or a hedge-mode close (SELL of
    the LONG leg, BUY of the SHORT leg — spec 4.3 rule 4). The kill switch lets these through."""
    if reduce_only:
        return True
    if pos_side is PosSide.LONG:
        return side is OrderSide.SELL
    if pos_side is PosSide.SHORT:
        return side is OrderSide.BUY
    return False


def notional(sz: Decimal, ct_val: Decimal, price: Decimal) -> Decimal:
    """The quote value of ``sz`` contracts: size × contract value × price."""
    return sz * ct_val * price


def signed_position(pos: Position) -> Decimal:
    """The position in contracts: positive long, negative short (one-way or hedge)."""
    qty = pos.qty or _ZERO
    if pos.posSide is PosSide.LONG:
        return abs(qty)
    if pos.posSide is PosSide.SHORT:
        return -abs(qty)
    if qty < _ZERO:
        return qty
    return -qty if pos.side is OrderSide.SELL else qty


@quick_init
@dataclass(frozen=True, slots=True)
class Candidate:
    """An order asking the book to admit it: whose it is, what it does, its checked size and
    price (rounded and validated)."""

    strategy: str
    cl_ord_id: str
    symbol: str
    side: OrderSide
    pos_side: PosSide
    order_type: OrderType
    reduce_only: bool
    sz: Decimal
    px: Decimal | None

    @classmethod
    def of(cls, intent: OrderIntent, *, sz: Decimal, px: Decimal | None) -> Candidate:
        """``intent`` with the size and price validation settled on."""
        return cls(
            intent.strategy,
            intent.cl_ord_id,
            intent.symbol,
            intent.side,
            intent.pos_side,
            intent.type,
            intent.reduce_only,
            sz,
            px,
        )


@quick_init
@dataclass(frozen=True, slots=True)
class Valuation:
    """What an order on a symbol is valued with now: the mark (a market order's price) and the
    contract value."""

    mark: Decimal | None
    ct_val: Decimal

    def price(self, order: Candidate) -> Decimal | None:
        """The price the order is valued at: the mark for a market order, else its own."""
        return self.mark if order.order_type is OrderType.MARKET else order.px

    def notional(self, order: Candidate) -> Decimal | None:
        """The order's quote value (:func:`notional`), or ``None`` without a price."""
        price = self.price(order)
        return None if price is None else notional(order.sz, self.ct_val, price)


NO_POLICY = StrategyPolicy()
"""The policy of a strategy the policies do not name (frozen: one shared instance)."""


def _delta(side: OrderSide, sz: Decimal) -> Decimal:
    return sz if side is OrderSide.BUY else -sz


_InForce = tuple[RiskLimits, RiskLimits, bool, bool]
"""A strategy's limits as a book judges its orders (:func:`judged_limits`)."""


def judged_limits(own: RiskLimits, global_limits: RiskLimits) -> _InForce:
    """What a book judges a strategy's orders by: its own limits, the stricter of them and the
    global ones (per order), whether any notional limit applies, whether any order count
    limit does."""
    per_order = own.stricter(global_limits)
    wants_notional = (
        per_order.max_notional_per_order is not None
        or own.max_notional_per_cycle is not None
        or global_limits.max_notional_per_cycle is not None
    )
    counts = own.max_orders_per_cycle is not None or global_limits.max_orders_per_cycle is not None
    return own, per_order, wants_notional, counts


_IN_FORCE: dict[tuple[int, int], tuple[RiskLimits, RiskLimits, _InForce]] = {}
_IN_FORCE_MAX = 1024


def limits_in_force(own: RiskLimits, global_limits: RiskLimits) -> _InForce:
    """:func:`judged_limits` of these two, kept by their identity across books: a plan's book
    asks once per strategy, and the same (loaded) strategy's limits and the global ones come
    back every cycle (the runner keeps each strategy's policy per loaded version), so their
    stricter limits are built once, not once per plan (a cycle of 20 strategies built 20).
    Each entry holds the two objects it was made of: an identity is never reused while kept.
    ``tests/pipeline/test_risk_limits_kept.py`` compares it with :func:`judged_limits`."""
    key = (id(own), id(global_limits))
    kept = _IN_FORCE.get(key)
    if kept is not None and kept[0] is own and kept[1] is global_limits:
        return kept[2]
    found = judged_limits(own, global_limits)
    if len(_IN_FORCE) >= _IN_FORCE_MAX:  # strategies reloaded many times: start again
        _IN_FORCE.clear()
    _IN_FORCE[key] = (own, global_limits, found)
    return found


class RiskBook:
    """Applies the guards to a cycle's orders one by one, in the plan's order.

    Pure and in memory: built from the snapshot's positions and open orders; ``admit`` records
    what an admitted order consumes (counts, notional, exposure) so later orders see it.
    """

    def __init__(
        self,
        *,
        global_limits: RiskLimits,
        policies: Mapping[str, StrategyPolicy],
        positions: Iterable[Position] = (),
        open_orders: Iterable[OpenOrder] = (),
    ) -> None:
        self._global = global_limits
        self._policies = policies
        self._position: dict[tuple[str, PosSide], Decimal] = defaultdict(Decimal)
        for pos in positions:
            self._position[(pos.symbol, pos.posSide)] += signed_position(pos)
        # worst-case exposure added by resting orders, per (symbol, leg, side)
        self._resting: dict[tuple[str, PosSide, OrderSide], Decimal] = defaultdict(Decimal)
        for order in open_orders:
            if order.reduceOnly:
                continue
            left = (order.sz or _ZERO) - (order.execQty or _ZERO)
            if left > _ZERO:
                key = (order.symbol, order.posSide or PosSide.BOTH, order.side)
                self._resting[key] += left
        self._count: dict[str | None, int] = defaultdict(int)
        self._notional: dict[str | None, Decimal] = defaultdict(Decimal)
        self._limits: dict[str, _InForce] = {}

    @property
    def positions(self) -> dict[tuple[str, PosSide], Decimal]:
        """The positions the book was built with, signed contracts by (symbol, leg) (a copy:
        every leg it was given, and any it was asked about since, at zero)."""
        return dict(self._position)

    def _limits_of(self, strategy: str) -> _InForce:
        """The strategy's own limits, the stricter of them and the global ones (per order),
        whether any notional limit applies, whether any order count limit does: read once
        per strategy (the policies do not change while the book lives)."""
        cached = self._limits.get(strategy)
        if cached is None:
            own = self._policies.get(strategy, NO_POLICY).limits
            cached = self._limits[strategy] = limits_in_force(own, self._global)
        return cached

    def admit(self, order: Candidate, valuation: Valuation) -> tuple[GuardTrip, ...]:
        """The trips ``order`` causes, valued with ``valuation``; an empty tuple means admitted
        (and recorded)."""
        return self.admit_valued(order, valuation)[0]

    def admit_valued(
        self, order: Candidate, valuation: Valuation
    ) -> tuple[tuple[GuardTrip, ...], Decimal | None]:
        """:meth:`admit`'s trips, and the order's value as it was judged (``valuation.notional
        (order)``, which the plan keeps: computed once)."""
        strategy, sz = order.strategy, order.sz
        limits = self._limits_of(strategy)
        _own, per_order, wants_notional, counts = limits
        price = valuation.price(order)  # the order's value, whether a guard needs it or not
        value = None if price is None else notional(sz, valuation.ct_val, price)
        reduce_only = order.reduce_only
        if counts or wants_notional:  # a count or notional limit applies: judged, then counted
            trips = self._trips(order, valuation, limits, price, value)
            if trips:
                return trips, value
            count, total = self._count, self._notional
            count[strategy] += 1
            count[None] += 1
            if value is not None:
                total[strategy] += value
                total[None] += value
        elif per_order.max_position is not None and not reduce_only:
            trips = self._trips(order, valuation, limits, price, value)
            if trips:
                return trips, value
        # else no guard applies: nothing to judge, and its counts and notional are read by no
        # limit (a global one applies to every order; the strategy's limits stay the same)
        if not reduce_only:  # what rests is read by every position limit on the symbol
            self._resting[(order.symbol, order.pos_side, order.side)] += sz
        return (), value

    def admit_order(
        self, intent: OrderIntent, sz: Decimal, px: Decimal | None, valuation: Valuation
    ) -> tuple[tuple[GuardTrip, ...], Decimal | None]:
        """``admit_valued(Candidate.of(intent, sz=sz, px=px), valuation)``, without the
        candidate when no guard applies to the order (the plan's usual order: nothing to
        judge, only its value and what it adds to the resting exposure)."""
        _own, per_order, wants_notional, counts = self._limits_of(intent.strategy)
        reduce_only = intent.reduce_only
        if counts or wants_notional or (per_order.max_position is not None and not reduce_only):
            return self.admit_valued(Candidate.of(intent, sz=sz, px=px), valuation)
        price = valuation.mark if intent.type is OrderType.MARKET else px  # Valuation.price
        value = None if price is None else notional(sz, valuation.ct_val, price)
        if not reduce_only:  # what rests is read by every position limit on the symbol
            self._resting[(intent.symbol, intent.pos_side, intent.side)] += sz
        return (), value

    def _trips(
        self,
        order: Candidate,
        valuation: Valuation,
        found: _InForce,
        price: Decimal | None,
        value: Decimal | None,
    ) -> tuple[GuardTrip, ...]:
        """The guards ``order`` trips (its ``price`` and ``value`` as :meth:`admit_valued`
        found them), in the order they are checked: the order counts, the notional (unknown,
        per order, per cycle), the position."""
        strategy, cl_ord_id, symbol = order.strategy, order.cl_ord_id, order.symbol
        side, pos_side, order_type = order.side, order.pos_side, order.order_type
        reduce_only, sz, ct_val = order.reduce_only, order.sz, valuation.ct_val
        own, per_order, wants_notional, counts = found
        trips: list[GuardTrip] = []

        def trip(
            guard: str, scope: str, limit: Decimal | None, value: Decimal | None, msg: str
        ) -> None:
            trips.append(GuardTrip(guard, scope, strategy, cl_ord_id, limit, value, msg))

        for scope, key, limits in (
            (("strategy", strategy, own), ("global", None, self._global)) if counts else ()
        ):
            cap = limits.max_orders_per_cycle
            if cap is not None and self._count[key] + 1 > cap:
                trip(
                    "max_orders_per_cycle",
                    scope,
                    Decimal(cap),
                    Decimal(self._count[key] + 1),
                    f"order {self._count[key] + 1} of the cycle exceeds the {scope}"
                    f" max_orders_per_cycle {cap}",
                )
        if wants_notional and value is None:
            trip(
                "notional_unknown",
                "global",
                None,
                None,
                f"no mark price for {symbol} to value this {order_type.value} order against the"
                " notional limits — refused until a mark is known",
            )
        if value is not None:
            cap_d = per_order.max_notional_per_order
            if cap_d is not None and value > cap_d:
                trip(
                    "max_notional_per_order",
                    "strategy" if own.max_notional_per_order == cap_d else "global",
                    cap_d,
                    value,
                    f"notional {value} (sz {sz} × ctVal {ct_val} × price {price}) exceeds"
                    f" max_notional_per_order {cap_d}",
                )
            for scope, key, limits in (
                (("strategy", strategy, own), ("global", None, self._global))
                if wants_notional
                else ()
            ):
                cap_d = limits.max_notional_per_cycle
                if cap_d is not None and self._notional[key] + value > cap_d:
                    total = self._notional[key] + value
                    trip(
                        "max_notional_per_cycle",
                        scope,
                        cap_d,
                        total,
                        f"cycle notional would reach {total} (this order {value}), above the"
                        f" {scope} max_notional_per_cycle {cap_d}",
                    )
        pos_key = (symbol, pos_side)
        delta = _delta(side, sz)
        if per_order.max_position is not None and not reduce_only:
            resting = self._resting[(symbol, pos_side, side)]
            worst = abs(self._position[pos_key] + _delta(side, resting) + delta)
            if worst > per_order.max_position:
                trip(
                    "max_position",
                    "strategy" if own.max_position == per_order.max_position else "global",
                    per_order.max_position,
                    worst,
                    f"{symbol} {pos_side.value} position could reach {worst} contracts"
                    f" (now {self._position[pos_key]}, resting {side.value} {resting}, this"
                    f" order {sz}), above max_position {per_order.max_position}",
                )
        return tuple(trips)
