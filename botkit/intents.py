"""What the rules decide, as plain values: the hand-over from the rule engine to the pipeline.

Rules produce intents; the pipeline validates, rounds, batches, submits and journals them. An
intent is immutable and carries everything the journal needs to answer "why was this sent?":
strategy, rule, evaluation slot and leg index, from which the client order id is derived.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

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


@quick_init
@dataclass(frozen=True, slots=True)
class RuleActivity:
    """What one rule did recently, as the journal remembers it (survives restarts).

    ``fire_times_ms``: the times the rule fired, oldest first (within the window asked for).
    ``orders``: (time_ms, cl_ord_id) of the orders it placed (accepted by the exchange or pending).
    """

    fire_times_ms: tuple[int, ...] = ()
    orders: tuple[tuple[int, str], ...] = ()

    @property
    def last_fire_ms(self) -> int | None:
        return self.fire_times_ms[-1] if self.fire_times_ms else None


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
