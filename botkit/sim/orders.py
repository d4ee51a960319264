"""An order as the engine receives it, and the per-instrument checks every new order passes.

:class:`OrderInput` is the typed order (the wire parser in :mod:`botkit.sim.api` and
:class:`~botkit.sim.port.SimPort` both build it). :func:`check_static` applies the rules that need
only the instrument, its mark price and the position mode — status, the spec's 4.3 rules 1–4 for
``mgnMode``/``posSide``, price presence, size (lot, minimum, maximum by type), price (tick,
min/max, the band around the mark) — and returns the first broken rule as ``(code, msg)``, or
``None``. Rules that need the account (duplicate ``clOrdId``, reduce-only without a position,
margin) live in the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from botkit.exchange.models import (
    InstrumentStatus,
    MarginMode,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.frozen import quick_init
from botkit.sim import codes
from botkit.sim.config import InstrumentConfig

__all__ = [
    "BandMemo",
    "OrderInput",
    "PriceBand",
    "band",
    "check_static",
    "is_closing",
    "text_on_step",
]

Reason = tuple[int, str]


@quick_init
@dataclass(frozen=True, slots=True)
class OrderInput:
    """One order as submitted (4.3); ``mgn_mode``/``pos_side`` are None when left blank."""

    symbol: str
    side: OrderSide
    type: OrderType
    sz: Decimal
    px: Decimal | None = None
    mgn_mode: MarginMode | None = None
    pos_side: PosSide | None = None
    cl_ord_id: str | None = None
    reduce_only: bool = False
    tif: TimeInForce = TimeInForce.GTC
    stp: StpMode = StpMode.NONE
    sz_text: str | None = None
    """``sz`` as written on the wire (None: not known, no text check)."""
    px_text: str | None = None
    """``px`` as written on the wire (None: not known or no price)."""


def is_closing(order: OrderInput, mode: PositionMode) -> bool:
    """Reduce-only, or a hedge-mode close (SELL + LONG, BUY + SHORT)."""
    if order.reduce_only:
        return True
    if mode is PositionMode.HEDGE:
        return (order.side is OrderSide.SELL and order.pos_side is PosSide.LONG) or (
            order.side is OrderSide.BUY and order.pos_side is PosSide.SHORT
        )
    return False


class PriceBand:
    """:func:`band` for one instrument, its constants worked out once: the same Decimal
    operations on the same values in the same order, so the same results, for less."""

    __slots__ = ("high_factor", "low_factor", "max_px", "min_px", "tick")

    def __init__(self, inst: InstrumentConfig) -> None:
        self.tick = inst.tSz
        self.high_factor = 1 + inst.ordPxRange
        self.low_factor = 1 - inst.ordPxRange
        self.min_px = inst.minPx
        self.max_px = inst.maxPx

    def __call__(self, mark: Decimal) -> tuple[Decimal, Decimal]:
        """(low, high) around ``mark``."""
        tick = self.tick
        high = (mark * self.high_factor / tick).to_integral_value(ROUND_FLOOR) * tick
        low = (mark * self.low_factor / tick).to_integral_value(ROUND_CEILING) * tick
        min_px, max_px = self.min_px, self.max_px
        # max(low, min_px) and min(high, max_px), which keep the first of equals
        return (min_px if min_px > low else low), (max_px if max_px < high else high)


def band(inst: InstrumentConfig, mark: Decimal) -> tuple[Decimal, Decimal]:
    """The allowed price band now: (low, high) = mark × (1 ∓ ordPxRange), on the tick grid."""
    return PriceBand(inst)(mark)


class BandMemo:
    """:func:`band` of the last instrument and mark asked, each known by identity (an
    instrument's config is frozen; a mark is a new object when it moves): the orders of a
    batch, checked one by one against the same mark, share one band instead of working it
    out each."""

    __slots__ = ("_band", "_inst", "_mark", "_price_band")

    def __init__(self) -> None:
        self._inst: InstrumentConfig | None = None
        self._price_band: PriceBand | None = None
        self._mark: Decimal | None = None
        self._band: tuple[Decimal, Decimal] = (Decimal(0), Decimal(0))

    def __call__(self, inst: InstrumentConfig, mark: Decimal) -> tuple[Decimal, Decimal]:
        price_band = self._price_band
        if inst is not self._inst or price_band is None:
            self._inst, self._mark = inst, None
            price_band = self._price_band = PriceBand(inst)
        if mark is not self._mark:
            self._band = price_band(mark)
            self._mark = mark
        return self._band


def _fmt(value: Decimal) -> str:
    return format(value.normalize(), "f") if value == value.to_integral_value() else str(value)


def check_static(
    order: OrderInput,
    inst: InstrumentConfig,
    status: InstrumentStatus,
    mark: Decimal,
    mode: PositionMode,
    *,
    strict_text: bool = False,
    band_of: Callable[[InstrumentConfig, Decimal], tuple[Decimal, Decimal]] = band,
) -> Reason | None:
    """The first instrument rule ``order`` breaks, or None. ``strict_text``: also refuse amount
    text with an exponent or more decimals than the step allows (:func:`text_on_step`);
    ``band_of``: :func:`band`, or what answers as it does (a :class:`BandMemo`)."""
    symbol = inst.symbol
    if status is InstrumentStatus.CLOSED:
        return codes.SYMBOL_NOT_TRADING, f"Symbol {symbol} is not trading (status CLOSED)"
    if status is InstrumentStatus.PAUSED:
        return codes.PAUSED, f"Symbol {symbol} is paused: no new orders are accepted"
    if status is InstrumentStatus.CANCEL_ONLY:
        return codes.CANCEL_ONLY, f"Symbol {symbol} is cancel-only: no new orders are accepted"
    reason = _check_sides(order, mode)
    if reason is not None:
        return reason
    if status is InstrumentStatus.CANCEL_CLOSE_ONLY and not is_closing(order, mode):
        return (
            codes.CLOSE_ONLY,
            f"Symbol {symbol} is close-only: only reduce-only (closing) orders are accepted",
        )
    reason = _check_size(order, inst) or _check_price(order, inst, mark, band_of)
    if reason is None and strict_text:  # on the grid and in the band: now the text itself
        reason = text_on_step("sz", order.sz_text, inst.lotSz, "lotSz") or text_on_step(
            "px", order.px_text, inst.tSz, "tSz"
        )
    return reason


def text_on_step(field: str, text: str | None, step: Decimal, name: str) -> Reason | None:
    """A strict exchange's reading of an amount's text: plain digits with at most as many
    decimals as ``step`` has once its trailing zeros are dropped (lotSz 1 → none, tSz 0.50 →
    one); no sign, no exponent, no spaces. ``"2.0"`` on a lot of 1 is refused."""
    if text is None:
        return None
    key = (text, step)
    if key in _ON_STEP:
        return None
    whole, point, fraction = text.partition(".")
    # the whole text is [0-9]+(\.[0-9]+)?, by str methods (no regex: every order asks twice);
    # isdigit alone would take other scripts' digits and "²", hence isascii
    if not (text.isascii() and whole.isdigit() and (not point or fraction.isdigit())):
        return (
            codes.BAD_PARAM,
            f"Param error: {field} {text!r} is not a plain decimal number (digits, one point,"
            " no exponent)",
        )
    decimals = len(fraction)
    allowed = _ALLOWED.get(step)
    if allowed is None:
        allowed = _ALLOWED[step] = _allowed_decimals(step)
    if decimals > allowed:
        return (
            codes.BAD_PARAM,
            f"Param error: {field} {text!r} has {decimals} decimal(s); {name} {_fmt(step)}"
            f" allows {allowed}",
        )
    if len(_ON_STEP) >= _ON_STEP_MAX:
        _ON_STEP.clear()
    _ON_STEP[key] = None
    return None


def _allowed_decimals(step: Decimal) -> int:
    exponent = step.normalize().as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


_ON_STEP: dict[tuple[str, Decimal], None] = {}
"""The texts found plain and on their step, per step (the same size text every order, a ladder's
prices again at each of its re-placements): checked once. Emptied when it holds
:data:`_ON_STEP_MAX`."""
_ON_STEP_MAX = 4096

_ALLOWED: dict[Decimal, int] = {}
"""The decimals each step allows, per step (equal steps, ``0.1`` and ``0.10``, allow the same:
the count is their one normalized form's): the same tick and lot every order."""


def _check_sides(order: OrderInput, mode: PositionMode) -> Reason | None:
    if (order.mgn_mode is None) != (order.pos_side is None):
        return (
            codes.BAD_PARAM,
            "Param error: mgnMode and posSide must both be filled or both be left blank",
        )
    if mode is PositionMode.ONE_WAY:
        if order.pos_side not in (None, PosSide.BOTH):
            return (
                codes.BAD_PARAM,
                f"Param error: posSide must be BOTH in one-way mode, got {order.pos_side.value}",
            )
    elif order.pos_side not in (PosSide.LONG, PosSide.SHORT):
        got = order.pos_side.value if order.pos_side is not None else "blank"
        return (
            codes.BAD_PARAM,
            f"Param error: posSide must be LONG or SHORT in hedge mode, got {got}",
        )
    return None


def _check_size(order: OrderInput, inst: InstrumentConfig) -> Reason | None:
    limit_like = order.type is not OrderType.MARKET
    if limit_like and order.px is None:
        return codes.BAD_PARAM, f"Param error: px is required for a {order.type.value} order"
    if not limit_like and order.px is not None:
        return codes.BAD_PARAM, "Param error: px must be left blank for a MARKET order"
    sz = order.sz
    if not sz.is_finite() or sz <= 0:
        return codes.BAD_PARAM, f"Param error: sz must be a positive number, got {sz}"
    if sz % inst.lotSz:
        return (
            codes.BAD_PARAM,
            f"Param error: sz {sz} is not a multiple of lotSz {_fmt(inst.lotSz)}",
        )
    if sz < inst.minSz:
        return codes.BAD_PARAM, f"Param error: sz {sz} is below minSz {_fmt(inst.minSz)}"
    cap, name = (
        (inst.limitMaxQty, "limitMaxQty") if limit_like else (inst.marketMaxQty, "marketMaxQty")
    )
    if sz > cap:
        return codes.BAD_PARAM, f"Param error: sz {sz} exceeds {name} {_fmt(cap)}"
    return None


def _check_price(
    order: OrderInput,
    inst: InstrumentConfig,
    mark: Decimal,
    band_of: Callable[[InstrumentConfig, Decimal], tuple[Decimal, Decimal]],
) -> Reason | None:
    px = order.px
    if px is None:
        return None
    if not px.is_finite() or px <= 0:
        return codes.BAD_PARAM, f"Param error: px must be a positive number, got {px}"
    if px % inst.tSz:
        return codes.BAD_PARAM, f"Param error: px {px} is not a multiple of tSz {inst.tSz}"
    if px < inst.minPx or px > inst.maxPx:
        return (
            codes.PRICE_LIMIT,
            f"Price limit: px {px} is outside [minPx {inst.minPx}, maxPx {inst.maxPx}]",
        )
    low, high = band_of(inst, mark)
    if px > high or px < low:
        return (
            codes.PRICE_BAND,
            f"Order price {px} is out of the price limit: the highest price is {high}, "
            f"the lowest price is {low}",
        )
    return None
