"""The strategy file format as pydantic models: structure and types, unknown keys forbidden.

These models say what a file may contain (and produce the JSON Schema for editors). Meaning —
expressions, cross-field rules, instruments — is checked when the file is compiled
(:mod:`botkit.rules.compile`). Expression fields accept text or a number and keep the text.
"""

from __future__ import annotations

import re
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from botkit.exchange.models import (
    MarginMode,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.intents import OffTick
from botkit.rules.durations import parse_duration
from botkit.rules.functions import FUNCTIONS
from botkit.rules.series import INTERVALS, SERIES_FUNCTIONS

__all__ = [
    "CancelSpec",
    "CloseSpec",
    "Defaults",
    "GridSpec",
    "KeepSpec",
    "LadderSpec",
    "LeverageSpec",
    "MarginSpec",
    "MaxFiresSpec",
    "OffTick",
    "OnDelete",
    "OrderSpec",
    "PlaceSpec",
    "RiskSpec",
    "RuleSpec",
    "StrategySpec",
]

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


def _expr_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int | Decimal):
        return str(value)
    return value


def _duration(value: str) -> str:
    parse_duration(value)
    return value


def _none_is_empty(value: Any) -> Any:
    return {} if value is None else value


def _expr_schema(schema: dict[str, Any]) -> None:
    schema.pop("type", None)
    schema["anyOf"] = [{"type": "string"}, {"type": "number"}]
    schema["description"] = (
        f"{schema.get('description', 'an expression')}; functions: "
        + ", ".join([*FUNCTIONS, *SERIES_FUNCTIONS])
        + "; intervals: "
        + ", ".join(INTERVALS)
    )


ExprText = Annotated[
    str,
    BeforeValidator(_expr_text),
    Field(json_schema_extra=_expr_schema, description="an expression, e.g. price.mark * 0.99"),
]
Duration = Annotated[
    str,
    Field(pattern=r"^\s*(\d+(ms|s|m|h|d|w))+\s*$", description="a duration: 30s, 10m, 1h30m, 1d"),
    AfterValidator(_duration),
]
Name = Annotated[str, Field(pattern=NAME_PATTERN, description="letters, digits, _ . -")]


class OnDelete(StrEnum):
    """What happens to a strategy's resting orders when its file is deleted."""

    CANCEL = "cancel"
    KEEP = "keep"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MarginSpec(_Spec):
    """Margin mode and position mode: ONE_WAY (posSide BOTH) or HEDGE (LONG and SHORT legs)."""

    mode: MarginMode = MarginMode.CROSS
    position_mode: PositionMode = PositionMode.ONE_WAY


class RiskSpec(_Spec):
    """Per-strategy guards the pipeline applies before anything is sent."""

    max_orders_per_cycle: Annotated[int, Field(gt=0)] | None = None
    max_notional_per_order: Annotated[Decimal, Field(gt=0)] | None = None
    max_notional_per_cycle: Annotated[Decimal, Field(gt=0)] | None = None
    max_position: Annotated[Decimal, Field(gt=0)] | None = None


class Defaults(_Spec):
    """Order fields every order of the strategy gets unless the order sets them."""

    time_in_force: TimeInForce | None = None
    stp_mode: StpMode | None = None
    reduce_only: bool | None = None
    type: OrderType | None = None


class _OrderFields(_Spec):
    reduce_only: bool | None = None
    time_in_force: TimeInForce | None = None
    stp_mode: StpMode | None = None
    pos_side: PosSide | None = None
    mgn_mode: MarginMode | None = None


class OrderSpec(_OrderFields):
    """One order. ``type`` defaults to LIMIT when ``px`` is given, MARKET otherwise."""

    side: OrderSide
    sz: ExprText
    px: ExprText | None = None
    type: OrderType | None = None


class LadderSpec(_OrderFields):
    """``count`` limit orders on one side from ``from_px`` stepping away from the market."""

    side: OrderSide
    count: ExprText
    from_px: ExprText
    step_px: ExprText | None = None
    to_px: ExprText | None = None
    sz: ExprText
    type: OrderType | None = None


class GridSpec(_OrderFields):
    """``levels`` BUYs below ``center`` and ``levels`` SELLs above it, ``step_px`` apart."""

    center: ExprText
    step_px: ExprText
    levels: ExprText
    sz: ExprText
    type: OrderType | None = None


class PlaceSpec(_Spec):
    """What a rule places: one order, a list of orders, a ladder and/or a grid."""

    order: OrderSpec | None = None
    orders: list[OrderSpec] | None = None
    ladder: LadderSpec | None = None
    grid: GridSpec | None = None


TOLERANCE_PATTERN = r"^\s*(\d+(\.\d+)?)\s*(bps|ticks?)\s*$"
REFILL_PATTERN = r"^\s*(never|at once|after\s+(\d+(ms|s|m|h|d|w))+)\s*$"


def _tolerance(value: str) -> str:
    if re.fullmatch(TOLERANCE_PATTERN, value) is None:
        raise ValueError(f"{value!r} is not a tolerance — write '10 bps' or '3 ticks'")
    return value


def _refill(value: str) -> str:
    if re.fullmatch(REFILL_PATTERN, value) is None:
        raise ValueError(
            f"{value!r} is not a refill policy — write 'never', 'at once' or 'after 5m'"
        )
    text = " ".join(value.split())
    if text.startswith("after "):
        parse_duration(text[len("after ") :])
    return text


Tolerance = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": TOLERANCE_PATTERN},
        description="how far a resting order's price may drift from the declared one before it"
        " is replaced: '10 bps' (basis points of the price) or '3 ticks'",
    ),
    AfterValidator(_tolerance),
]
Refill = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": REFILL_PATTERN},
        description="when a filled order is placed again: 'never', 'at once' or 'after 5m'",
    ),
    AfterValidator(_refill),
]


class KeepSpec(PlaceSpec):
    """Orders that should rest while the rule's condition holds (declared state), and how
    botkit keeps them: the tolerance before a drifted order is replaced, when a filled one is
    placed again, and the churn limits."""

    tolerance: Tolerance = "10 bps"
    refill: Refill = "at once"
    min_rest: Duration | None = None
    max_replacements: Annotated[int, Field(ge=1, description="per minute, per rule")] | None = None


class CloseSpec(_Spec):
    """A reduce-only close of the position (all of it, or ``sz``); MARKET unless ``px`` is set."""

    pos_side: PosSide | None = None
    sz: ExprText | None = None
    px: ExprText | None = None
    type: OrderType | None = None
    time_in_force: TimeInForce | None = None
    stp_mode: StpMode | None = None


class CancelSpec(_Spec):
    """Cancel this strategy's resting orders: all, or those of ``rule``."""

    rule: Name | None = None


class LeverageSpec(_Spec):
    lever: Annotated[int, Field(ge=1, le=200)]
    pos_side: PosSide | None = None


class MaxFiresSpec(_Spec):
    count: Annotated[int, Field(ge=1)]
    per: Duration


Empty = BeforeValidator(_none_is_empty)


class RuleSpec(_Spec):
    name: Name
    when: ExprText | None = None
    enabled: bool = True
    pos_side: PosSide | None = None
    cooldown: Duration | None = None
    max_fires: MaxFiresSpec | None = None
    keep_open: bool = False
    place: PlaceSpec | None = None
    keep: KeepSpec | None = None
    close: Annotated[CloseSpec | None, Empty] = None
    cancel: Annotated[CancelSpec | None, Empty] = None
    set_leverage: LeverageSpec | None = None
    set_position_mode: PositionMode | None = None


class StrategySpec(_Spec):
    """A strategy file."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"title": "botkit strategy", "$comment": "see docs/strategies.md"},
    )

    strategy: Name
    symbol: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,40}$")]
    every: Duration
    description: str | None = None
    enabled: bool = True
    margin: MarginSpec = MarginSpec()
    defaults: Defaults = Defaults()
    params: dict[Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$")], Decimal] = {}
    off_tick: OffTick = OffTick.ROUND
    on_delete: OnDelete = OnDelete.CANCEL
    risk: RiskSpec = RiskSpec()
    rules: Annotated[list[RuleSpec], Field(min_length=1)]


KEYWORDS: frozenset[str] = frozenset(
    name
    for model in (
        StrategySpec, MarginSpec, RiskSpec, Defaults, OrderSpec, LadderSpec, GridSpec,
        PlaceSpec, KeepSpec, CloseSpec, CancelSpec, LeverageSpec, MaxFiresSpec, RuleSpec,
    )
    for name in model.model_fields
)  # fmt: skip
"""Every key the format knows (for did-you-mean)."""
