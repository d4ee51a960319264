"""The compiled strategy: what the loader produces and the evaluator, runner and pipeline read.

Plain frozen values. Expressions are already compiled (:class:`~botkit.rules.expr.Expr`),
defaults applied, durations in milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from botkit.exchange.models import (
    MarginMode,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.intents import KeepPolicy, OffTick, RiskLimits
from botkit.rules.expr import Expr
from botkit.rules.ids import rule_tag, strategy_tag
from botkit.rules.runtime import Resolver
from botkit.rules.schema import OnDelete
from botkit.rules.series import Spec

__all__ = [
    "Action",
    "Cancel",
    "Close",
    "Grid",
    "Ladder",
    "MaxFires",
    "OffTick",
    "OnDelete",
    "OrderFields",
    "PlaceOrder",
    "RiskLimits",
    "Rule",
    "SetLeverage",
    "SetPositionMode",
    "Strategy",
]


@dataclass(frozen=True, slots=True)
class OrderFields:
    """The order fields of 4.3 other than price and size, defaults applied."""

    side: OrderSide
    type: OrderType
    pos_side: PosSide
    mgn_mode: MarginMode
    reduce_only: bool
    time_in_force: TimeInForce
    stp_mode: StpMode


@dataclass(frozen=True, slots=True)
class PlaceOrder:
    fields: OrderFields
    sz: Expr
    px: Expr | None


@dataclass(frozen=True, slots=True)
class Ladder:
    """``count`` orders: rung i at ``from_px ∓ i·step_px`` (BUY down, SELL up) or spread evenly
    from ``from_px`` to ``to_px``. ``sz`` may use ``i``."""

    fields: OrderFields
    count: Expr
    from_px: Expr
    step_px: Expr | None
    to_px: Expr | None
    sz: Expr


@dataclass(frozen=True, slots=True)
class Grid:
    """BUY at ``center - k·step_px`` and SELL at ``center + k·step_px`` for k = 1..levels."""

    buy: OrderFields
    sell: OrderFields
    center: Expr
    step_px: Expr
    levels: Expr
    sz: Expr


@dataclass(frozen=True, slots=True)
class Close:
    """Reduce-only close of the legs in ``pos_sides`` (all of each, or ``sz``)."""

    pos_sides: tuple[PosSide, ...]
    mgn_mode: MarginMode
    type: OrderType
    sz: Expr | None
    px: Expr | None
    time_in_force: TimeInForce
    stp_mode: StpMode


@dataclass(frozen=True, slots=True)
class Cancel:
    only_rule: str | None


@dataclass(frozen=True, slots=True)
class SetLeverage:
    lever: int
    mgn_mode: MarginMode
    pos_side: PosSide


@dataclass(frozen=True, slots=True)
class SetPositionMode:
    mode: PositionMode


Action = PlaceOrder | Ladder | Grid | Close | Cancel | SetLeverage | SetPositionMode


@dataclass(frozen=True, slots=True)
class MaxFires:
    count: int
    per_ms: int


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    when: Expr | None
    """None: the rule's condition is always true."""
    actions: tuple[Action, ...]
    enabled: bool = True
    pos_side: PosSide | None = None
    cooldown_ms: int = 0
    max_fires: MaxFires | None = None
    keep_open: bool = False
    keep: KeepPolicy | None = None
    """A ``keep:`` rule: its place actions are the orders that should rest while the condition
    holds (reconciled every cycle, never "fired"); None: a fire-once rule."""
    line: int = 0
    tag: str = ""
    inputs: Mapping[str, str] = field(default_factory=dict)
    """Environment key → display name of every context value the rule's expressions read."""

    input_names: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    """``inputs`` as (key, display) pairs, for the evaluator's loop."""
    gated: bool = field(default=False, repr=False, compare=False)
    """Whether anything but the condition can hold the rule back when it has no activity
    (``enabled: false``, ``keep_open``); cooldown and max_fires need past fires."""

    def __post_init__(self) -> None:
        if not self.tag:
            object.__setattr__(self, "tag", rule_tag(self.name))
        object.__setattr__(self, "input_names", tuple(self.inputs.items()))
        object.__setattr__(self, "gated", not self.enabled or self.keep_open)


@dataclass(frozen=True, slots=True)
class Strategy:
    """A loaded, checked, compiled strategy file.

    ``version`` is the sha256 (hex) of the file's content, which the journal records with
    every cycle; ``source`` is the file path (or ``<string>``).
    """

    name: str
    symbol: str
    period_ms: int
    rules: tuple[Rule, ...]
    mgn_mode: MarginMode = MarginMode.CROSS
    position_mode: PositionMode = PositionMode.ONE_WAY
    enabled: bool = True
    off_tick: OffTick = OffTick.ROUND
    on_delete: OnDelete = OnDelete.CANCEL
    risk: RiskLimits = field(default_factory=RiskLimits)
    params: Mapping[str, Decimal] = field(default_factory=dict)
    description: str = ""
    version: str = ""
    source: str = "<string>"
    resolvers: Mapping[str, Resolver] = field(default_factory=dict, repr=False, compare=False)
    tag: str = ""
    activity_window_ms: int = 86_400_000
    """How far back the journal's activity must reach (``Journal.activity(name, now - this)``):
    the longest cooldown, max_fires window or ``rule.*('…')`` window, and at least a day."""
    history_window_ms: int = 0
    """The longest window of the ``history.*`` helpers: how far back fills, closed orders and
    closed positions must be read for this strategy (0: it uses none)."""
    other_symbols: frozenset[str] = frozenset()
    """Symbols other than its own its expressions read (``close('1h', 'ETH_USDT_PERP')``,
    ``symbols.ETH_USDT_PERP.price.mark``)."""
    series: frozenset[Spec] = frozenset()
    """The candle series its expressions name (symbol None: the strategy's own): what the
    engine reads and warms up for it."""

    def __post_init__(self) -> None:
        if not self.tag:
            object.__setattr__(self, "tag", strategy_tag(self.name))

    @property
    def symbols(self) -> tuple[str, ...]:
        """The symbols the strategy reads and trades (one today)."""
        return (self.symbol,)

    @property
    def hedge(self) -> bool:
        return self.position_mode is PositionMode.HEDGE

    def slot(self, now_ms: int) -> int:
        """The evaluation slot of ``now_ms``: one per period; client order ids derive from it."""
        return now_ms // self.period_ms

    def next_due_ms(self, now_ms: int) -> int:
        """The start of the next period after ``now_ms``: when the strategy is due again."""
        return (self.slot(now_ms) + 1) * self.period_ms

    def rule(self, name: str) -> Rule:
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise KeyError(name)
