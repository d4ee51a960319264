"""Pre-validation and rounding of one order intent against its instrument: pure Decimal code.

Every check is a small function that returns a :class:`Reason` (or ``None``); nothing here raises
or logs. :func:`validate_intent` runs them all and returns a :class:`Checked`: the
:class:`~botkit.exchange.models.OrderRequest` to send with the rounding notes, or every reason the
order cannot be sent. Rounding never widens risk: a BUY price rounds down to the tick, a SELL
price up, a size down to the lot; a size that rounds to zero is refused, not sent as zero.

Every amount that leaves is written with exactly the decimals its step allows
(:func:`on_step`: sizes per ``lotSz``, prices per ``tSz``): ``2.0`` on a lot of 1 goes out as
``2``, ``61234.50`` on a tick of 0.1 as ``61234.5``; never an exponent, never a trailing zero
beyond the step. An amount beyond :data:`AMOUNT_LIMIT` (``sz: 10 ** 60``) is a local refusal
with a reason before any arithmetic touches it, and so is one the arithmetic still cannot handle.

The price band may be narrowed by a safety ``margin`` (a fraction: 0.001 = 10 bps): a price
must lie at least that far inside the band, so a mark that moves a little between the read and
the send does not turn an accepted price into a 10014 (docs/strategies.md, "Price band").
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, DecimalException

from pydantic import ValidationError

from botkit.exchange.models import (
    Instrument,
    InstrumentStatus,
    LimitPrice,
    OrderRequest,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    only_cl_ord_id_chars,
    order_request_as,
)
from botkit.frozen import quick_init
from botkit.intents import AMOUNT_LIMIT, OffTick, OrderIntent
from botkit.numbers import plain

__all__ = [
    "AMOUNT_LIMIT",
    "Band",
    "CheckMemo",
    "Checked",
    "OffTick",
    "Reason",
    "RoundingNote",
    "band_reason",
    "floor_to_lot",
    "on_step",
    "outside_band",
    "price_band",
    "round_price_passive",
    "step_decimals",
    "validate_intent",
]

_ZERO = Decimal(0)


@quick_init
@dataclass(frozen=True, slots=True)
class Reason:
    """Why an order cannot be sent: a stable ``code`` and a one-line ``message`` with the fix."""

    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@quick_init
@dataclass(frozen=True, slots=True)
class RoundingNote:
    """A value the pipeline changed before sending: ``field`` went from ``before`` to ``after``."""

    field: str
    before: Decimal
    after: Decimal
    step: Decimal

    def __str__(self) -> str:
        return f"{self.field} {self.before} -> {self.after} (step {self.step})"


@quick_init
@dataclass(frozen=True, slots=True)
class Checked:
    """The result of validating one intent: a request to send, or the reasons it is refused."""

    intent: OrderIntent
    request: OrderRequest | None
    px: Decimal | None
    sz: Decimal
    notes: tuple[RoundingNote, ...] = ()
    reasons: tuple[Reason, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.reasons and self.request is not None


# --- rounding ------------------------------------------------------------------------------


def round_price_passive(px: Decimal, tick: Decimal, side: OrderSide) -> Decimal:
    """``px`` on the tick grid, in the passive direction: BUY rounds down, SELL rounds up."""
    mode = ROUND_FLOOR if side is OrderSide.BUY else ROUND_CEILING
    return (px / tick).to_integral_value(rounding=mode) * tick


def floor_to_lot(sz: Decimal, lot: Decimal) -> Decimal:
    """``sz`` rounded down to a multiple of ``lot`` (never up: that would widen the order)."""
    return (sz / lot).to_integral_value(rounding=ROUND_FLOOR) * lot


def step_decimals(step: Decimal) -> int:
    """How many decimals a value on ``step``'s grid needs: those of the step's normalized form
    (``1`` → 0, ``0.1`` → 1, ``0.50`` → 1, ``0.0025`` → 4, ``10`` → 0)."""
    exponent = step.normalize().as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def on_step(value: Decimal, step: Decimal) -> Decimal:
    """``value`` (a multiple of ``step``) written with exactly the decimals the step allows: the
    one form every amount leaves in (``format(on_step(v, s), "f")`` has no exponent and no
    trailing zero beyond the step). ``Decimal("2.0")`` on a lot of 1 is ``Decimal("2")``."""
    quantum = _QUANTA.get(step)
    if quantum is None:
        quantum = _quantum(step)
    return value.quantize(quantum)


def _quantum(step: Decimal) -> Decimal:
    """``Decimal(1).scaleb(-step_decimals(step))``, kept per step: the same few ticks and lots
    every order. Equal steps (``0.1``, ``0.10``) have one normalized form, so one quantum."""
    quantum = Decimal(1).scaleb(-step_decimals(step))
    if step.is_finite() and len(_QUANTA) < _QUANTA_MAX:
        _QUANTA[step] = quantum
    return quantum


_QUANTA: dict[Decimal, Decimal] = {}
_QUANTA_MAX = 256


def _is_multiple(value: Decimal, step: Decimal) -> bool:
    return value % step == _ZERO


def _limit(value: Decimal | None) -> Decimal | None:
    """A maximum of ``None`` or 0 means "no check" (spec 8: the value 0 means no check)."""
    return value if value is not None and value > _ZERO else None


Band = tuple[Decimal | None, Decimal | None]
"""(low, high) of :func:`price_band`."""


def price_band(
    instrument: Instrument,
    *,
    mark: Decimal | None,
    limit_price: LimitPrice | None,
    margin: Decimal = _ZERO,
) -> tuple[Decimal | None, Decimal | None]:
    """The lowest and highest price an order may carry now (``None``: no bound known).

    From ``ordPxRange`` around the mark (``mark × (1 ∓ range)``), narrowed by
    ``/v3/market/limitPrice`` when known: a BUY may not exceed ``buyLmt``, a SELL may not go
    below ``sellLmt``; the band is the intersection of what is known. ``margin`` (a fraction)
    then moves each bound inward by that share of itself: ``low × (1 + margin)``,
    ``high × (1 − margin)``.
    """
    low: Decimal | None = None
    high: Decimal | None = None
    rng = instrument.ordPxRange
    if mark is not None and mark > _ZERO and rng is not None and rng > _ZERO:
        low, high = mark * (1 - rng), mark * (1 + rng)
    if limit_price is not None:
        if limit_price.buyLmt is not None and limit_price.buyLmt > _ZERO:
            high = limit_price.buyLmt if high is None else min(high, limit_price.buyLmt)
        if limit_price.sellLmt is not None and limit_price.sellLmt > _ZERO:
            low = limit_price.sellLmt if low is None else max(low, limit_price.sellLmt)
    if margin > _ZERO:
        low = None if low is None else low * (1 + margin)
        high = None if high is None else high * (1 - margin)
    return low, high


# --- the checks ----------------------------------------------------------------------------


def check_status(intent: OrderIntent, instrument: Instrument) -> Reason | None:
    status = instrument.status
    if not isinstance(status, InstrumentStatus):
        return Reason(
            "instrument_status_unknown",
            f"{intent.symbol} has status {status!r}, which is none of "
            f"{', '.join(s.value for s in InstrumentStatus)}: botkit places no new orders on it"
            " — wait until the exchange reports it OPEN",
        )
    if status is InstrumentStatus.OPEN:
        return None
    if status is InstrumentStatus.CANCEL_CLOSE_ONLY and intent.reduce_only:
        return None
    if status is InstrumentStatus.CANCEL_CLOSE_ONLY:
        return Reason(
            "instrument_close_only",
            f"{intent.symbol} is {status.value}: only reduce-only orders may be placed"
            " — set reduce_only: true or wait until it is OPEN",
        )
    return Reason(
        "instrument_not_open",
        f"{intent.symbol} is {status.value}: no new orders — wait until it is OPEN",
    )


def check_price_presence(intent: OrderIntent) -> Reason | None:
    if intent.type is OrderType.MARKET and intent.px is not None:
        return Reason(
            "px_on_market",
            f"a MARKET order carries px {intent.px} — leave px out or use type LIMIT",
        )
    if intent.type is not OrderType.MARKET and intent.px is None:
        return Reason(
            "px_missing",
            f"a {intent.type.value} order needs a price — set px or use type MARKET",
        )
    if intent.px is not None and not intent.px.is_finite():
        return Reason("px_not_finite", f"price {intent.px} is not a finite number — fix px")
    if intent.px is not None and intent.px <= _ZERO:
        return Reason("px_not_positive", f"price {intent.px} is not above 0 — fix px")
    return None


def check_position_mode(intent: OrderIntent, mode: PositionMode) -> Reason | None:
    """Spec 4.3 rules 1–4. Rule 3 (both or neither of mgnMode/posSide) holds by construction:
    an intent always carries both, and botkit always sends both (notes)."""
    pos = intent.pos_side
    if mode is PositionMode.ONE_WAY:
        if pos is not PosSide.BOTH:
            return Reason(
                "pos_side_one_way",
                f"posSide {pos.value} in one-way mode: the only valid value is BOTH"
                " — use pos_side: BOTH or switch the account to hedge mode",
            )
        return None
    if pos is PosSide.BOTH:
        return Reason(
            "pos_side_hedge",
            "posSide BOTH in hedge mode: posSide must be LONG or SHORT — set pos_side",
        )
    opens = (intent.side is OrderSide.BUY) == (pos is PosSide.LONG)
    if opens and intent.reduce_only:
        verb = "open long" if pos is PosSide.LONG else "open short"
        return Reason(
            "reduce_only_opens",
            f"{intent.side.value} + {pos.value} is '{verb}' in hedge mode but the order is"
            " reduce-only — close a long with SELL + LONG, a short with BUY + SHORT",
        )
    return None


def check_cl_ord_id(intent: OrderIntent) -> Reason | None:
    cid = intent.cl_ord_id
    if not cid or len(cid) > 32 or not only_cl_ord_id_chars(cid):
        return Reason(
            "cl_ord_id_invalid",
            f"client order id {cid!r} is not valid — use 1–32 characters of A-Z a-z 0-9 _ -",
        )
    return None


def _check_price(
    intent: OrderIntent,
    instrument: Instrument,
    off_tick: OffTick,
    mark: Decimal | None,
    limit_price: LimitPrice | None,
    margin: Decimal,
    band: Band | None,
) -> tuple[Decimal | None, list[RoundingNote], list[Reason]]:
    px = intent.px
    if px is None or not px.is_finite() or px <= _ZERO:
        return px, [], []
    if px >= AMOUNT_LIMIT:
        return px, [], [_too_large("px", "price", px)]
    notes: list[RoundingNote] = []
    reasons: list[Reason] = []
    tick = instrument.tSz
    if not _is_multiple(px, tick):
        if off_tick is OffTick.REFUSE:
            reasons.append(
                Reason(
                    "px_off_tick",
                    f"price {px} is not a multiple of the tick {tick} and the strategy says"
                    " off_tick: refuse — use a price on the tick or off_tick: round",
                )
            )
            return px, notes, reasons
        rounded = round_price_passive(px, tick, intent.side)
        notes.append(RoundingNote("px", px, rounded, tick))
        px = rounded
        if px <= _ZERO:
            reasons.append(
                Reason("px_rounds_to_zero", f"price rounds to {px} on tick {tick} — raise px")
            )
            return px, notes, reasons
    if instrument.minPx is not None and instrument.minPx > _ZERO and px < instrument.minPx:
        reasons.append(
            Reason("px_below_min", f"price {px} is below minPx {instrument.minPx} — raise px")
        )
    max_px = _limit(instrument.maxPx)
    if max_px is not None and px > max_px:
        reasons.append(Reason("px_above_max", f"price {px} is above maxPx {max_px} — lower px"))
    if band is None:
        band = price_band(instrument, mark=mark, limit_price=limit_price, margin=margin)
    reason = outside_band(px, band, instrument, mark, margin)
    if reason is not None:
        reasons.append(reason)
    return px, notes, reasons


def band_reason(
    px: Decimal,
    instrument: Instrument,
    *,
    mark: Decimal | None,
    limit_price: LimitPrice | None,
    margin: Decimal = _ZERO,
) -> Reason | None:
    """Why ``px`` lies outside the price band (with its safety ``margin``), or ``None``."""
    band = price_band(instrument, mark=mark, limit_price=limit_price, margin=margin)
    return outside_band(px, band, instrument, mark, margin)


def outside_band(
    px: Decimal, band: Band, instrument: Instrument, mark: Decimal | None, margin: Decimal
) -> Reason | None:
    """:func:`band_reason` with the band already computed (``band`` is :func:`price_band` of
    ``instrument``, ``mark``, the limit price and ``margin``; the planner and the re-check
    compute it once per symbol): the reason's text is built only for a refusal."""
    low, high = band
    if low is not None and px < low:
        return Reason(
            "px_below_band",
            f"price {px} is below the allowed band low {plain(low)}"
            f" (mark {mark}, range {instrument.ordPxRange}{_inside(margin)}) — raise px",
        )
    if high is not None and px > high:
        return Reason(
            "px_above_band",
            f"price {px} is above the allowed band high {plain(high)}"
            f" (mark {mark}, range {instrument.ordPxRange}{_inside(margin)}) — lower px",
        )
    return None


def _inside(margin: Decimal) -> str:
    return f", {plain(margin * 10000)} bps inside the band" if margin > _ZERO else ""


def _too_large(field: str, what: str, value: Decimal) -> Reason:
    return Reason(
        f"{field}_too_large",
        f"{what} {value.normalize():.6g} is beyond any order (at most {AMOUNT_LIMIT:.0e})"
        f" — fix {field}",
    )


def _check_size(
    intent: OrderIntent, instrument: Instrument
) -> tuple[Decimal, list[RoundingNote], list[Reason]]:
    sz = intent.sz
    if not sz.is_finite() or sz <= _ZERO:
        return sz, [], [Reason("sz_not_positive", f"size {sz} is not above 0 — fix sz")]
    if sz >= AMOUNT_LIMIT:
        return sz, [], [_too_large("sz", "size", sz)]
    notes: list[RoundingNote] = []
    lot = instrument.lotSz
    if not _is_multiple(sz, lot):
        floored = floor_to_lot(sz, lot)
        notes.append(RoundingNote("sz", sz, floored, lot))
        sz = floored
        if sz <= _ZERO:
            return (
                sz,
                notes,
                [
                    Reason(
                        "sz_rounds_to_zero",
                        f"size {intent.sz} rounds down to 0 on lot {lot} — use at least {lot}",
                    )
                ],
            )
    reasons: list[Reason] = []
    if instrument.minSz is not None and sz < instrument.minSz:
        reasons.append(
            Reason("sz_below_min", f"size {sz} is below minSz {instrument.minSz} — raise sz")
        )
    if intent.type is OrderType.MARKET:
        max_sz, name = _limit(instrument.marketMaxQty), "marketMaxQty"
    else:
        max_sz, name = _limit(instrument.limitMaxQty), "limitMaxQty"
    if max_sz is not None and sz > max_sz:
        reasons.append(
            Reason("sz_above_max", f"size {sz} is above {name} {max_sz} — split or lower sz")
        )
    return sz, notes, reasons


def validate_intent(
    intent: OrderIntent,
    instrument: Instrument | None,
    *,
    mark: Decimal | None = None,
    limit_price: LimitPrice | None = None,
    position_mode: PositionMode = PositionMode.ONE_WAY,
    off_tick: OffTick = OffTick.ROUND,
    band_margin: Decimal = _ZERO,
    band: Band | None = None,
) -> Checked:
    """Round and check ``intent``; every failing rule contributes its own reason.

    ``band_margin``: how far inside the price band a price must lie (a fraction of the bound);
    ``band``: that band when the caller has it already — ``price_band(instrument, mark=mark,
    limit_price=limit_price, margin=band_margin)``, which :func:`~botkit.pipeline.plan.build_plan`
    computes once per symbol — else it is computed here.
    Never raises: arithmetic that fails on an odd amount is a refusal with a reason."""
    try:
        return _validate(
            intent, instrument, mark, limit_price, position_mode, off_tick, band_margin, band
        )
    except DecimalException as exc:
        reason = Reason(
            "amount_unusable",
            f"size {intent.sz} / price {intent.px} cannot be checked ({type(exc).__name__})"
            " — use plain amounts of sane size",
        )
        return Checked(intent, None, intent.px, intent.sz, (), (reason,))


def _validate(
    intent: OrderIntent,
    instrument: Instrument | None,
    mark: Decimal | None,
    limit_price: LimitPrice | None,
    position_mode: PositionMode,
    off_tick: OffTick,
    band_margin: Decimal,
    band: Band | None,
) -> Checked:
    if instrument is None:
        reason = Reason(
            "unknown_symbol",
            f"no instrument {intent.symbol!r} at the exchange — check the symbol",
        )
        return Checked(intent, None, intent.px, intent.sz, (), (reason,))
    reasons: list[Reason] = []
    for check in (
        check_status(intent, instrument),
        check_price_presence(intent),
        check_position_mode(intent, position_mode),
        check_cl_ord_id(intent),
    ):
        if check is not None:
            reasons.append(check)
    px_notes: list[RoundingNote] = []
    px_reasons: list[Reason] = []
    px = intent.px
    if intent.type is not OrderType.MARKET:  # a MARKET price is refused above; nothing to round
        px, px_notes, px_reasons = _check_price(
            intent, instrument, off_tick, mark, limit_price, band_margin, band
        )
    sz, sz_notes, sz_reasons = _check_size(intent, instrument)
    reasons += px_reasons + sz_reasons
    notes = tuple(px_notes + sz_notes)
    if reasons:
        return Checked(intent, None, px, sz, notes, tuple(reasons))
    # the one place amounts take their wire form: exactly the decimals of lotSz / tSz
    sz = on_step(sz, instrument.lotSz)
    if px is not None:
        px = on_step(px, instrument.tSz)
    try:
        request = intent.to_request(px=px, sz=sz)
    except ValidationError as exc:  # a field the checks above do not cover
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "order"
        reason = Reason(
            "invalid_request", f"{where}: {first.get('msg', 'invalid')} — fix the order's {where}"
        )
        return Checked(intent, None, px, sz, notes, (reason,))
    return Checked(intent, request, px, sz, notes, ())


_NOTHING = type(None)


class CheckMemo:
    """:func:`validate_intent` for the orders of one symbol in one plan (the same instrument,
    mark, limit price, band, margin and position mode), done once per distinct order: a
    ladder's rungs at the same prices in several strategies, the same size in every rung.

    What an accepted order's checks found depends only on the values of its price and size
    and on its side, type, position side, reduce-only flag and off-tick handling (and on what
    the memo was made with), never on how the amounts are written: so the first such order is
    validated in full, and each later one takes its result — the amounts in their wire form,
    and the rounding, whose notes name the order's own amounts — and is built its own request.
    Its client order id is checked on its own; an order with an invalid id, a refusal, and
    anything not of the exact types (a price that is not a ``Decimal``, a side that is not a
    member) are validated in full. A symbol's first order is only validated (a plan of one
    order per symbol, a backtest's usual, pays nothing for the memo): it is remembered when a
    second one comes. ``tests/pipeline/test_plan_fast_paths.py`` compares every order with
    :func:`validate_intent` alone."""

    __slots__ = (
        "_done",
        "_first",
        "band",
        "band_margin",
        "instrument",
        "limit_price",
        "mark",
        "position_mode",
    )

    def __init__(
        self,
        instrument: Instrument | None,
        *,
        mark: Decimal | None,
        limit_price: LimitPrice | None,
        position_mode: PositionMode,
        band_margin: Decimal,
        band: Band | None,
    ) -> None:
        self.instrument = instrument
        self.mark = mark
        self.limit_price = limit_price
        self.position_mode = position_mode
        self.band_margin = band_margin
        self.band = band
        self._done: dict[tuple[object, ...], _Known] | None = None
        """The accepted orders' results by their values (None until a second order comes)."""
        self._first: tuple[OrderIntent, OffTick, Checked] | None = None

    def check(self, intent: OrderIntent, off_tick: OffTick) -> Checked:
        """What ``validate_intent(intent, instrument, ..., off_tick=off_tick)`` gives."""
        done = self._done
        if done is None:
            first = self._first
            if first is None:  # the symbol's first order: only validated
                checked = self._validate(intent, off_tick)
                self._first = (intent, off_tick, checked)
                return checked
            done = self._done = {}
            self._remember(_key(first[0], first[1]), first[2])
        key = _key(intent, off_tick)
        if key is not None:
            try:
                known = done.get(key)
            except TypeError:  # a signalling NaN does not hash
                known = key = None
            if known is not None:
                again = self._again(intent, known)
                if again is not None:
                    return again
        checked = self._validate(intent, off_tick)
        self._remember(key, checked)
        return checked

    def _validate(self, intent: OrderIntent, off_tick: OffTick) -> Checked:
        return validate_intent(
            intent,
            self.instrument,
            mark=self.mark,
            limit_price=self.limit_price,
            position_mode=self.position_mode,
            off_tick=off_tick,
            band_margin=self.band_margin,
            band=self.band,
        )

    def _remember(self, key: tuple[object, ...] | None, checked: Checked) -> None:
        """Keep an accepted order's result under its values (``key``; None: not kept)."""
        if key is None or checked.request is None or checked.reasons:
            return
        px_after = sz_after = None
        for note in checked.notes:
            if note.field == "px":
                px_after = note.after
            else:
                sz_after = note.after
        done = self._done
        assert done is not None
        try:
            done[key] = (checked.px, checked.sz, px_after, sz_after, checked.request)
        except TypeError:  # a signalling NaN does not hash
            return

    def _again(self, intent: OrderIntent, known: _Known) -> Checked | None:
        """The order checked as an earlier one of the same values was (None: check it in
        full — its client order id or its request is refused). The id is checked by the
        request's build, once only a text (an id of no text, ``None``, would make a request
        without one): the earlier order's request with this id when every other field of it
        is this order's own (:func:`~botkit.exchange.models.order_request_as`, which refuses
        what :func:`check_cl_ord_id` refuses, as ``None``), else
        :func:`~botkit.exchange.models.order_request` (likewise, as a ``ValidationError``)."""
        cid = intent.cl_ord_id
        if type(cid) is not str:
            return None
        px, sz, px_after, sz_after, first = known
        request = None
        kept = first.__dict__
        if (  # the fields the key leaves out, and those it keys by identity, the same objects
            kept["side"] is intent.side
            and kept["type"] is intent.type
            and kept["posSide"] is intent.pos_side
            and kept["reduceOnly"] is intent.reduce_only
            and kept["mgnMode"] is intent.mgn_mode
            and kept["timeInForce"] is intent.time_in_force
            and kept["stpMode"] is intent.stp_mode
            and type(intent.symbol) is str
            and kept["symbol"] == intent.symbol
        ):  # the first order's request with this id (None: an id the model refuses)
            request = order_request_as(first, cid)
        if request is None:
            try:
                request = intent.to_request(px=px, sz=sz)
            except ValidationError:
                return None
        instrument = self.instrument
        assert instrument is not None  # a known result is an accepted order's
        notes: tuple[RoundingNote, ...] = ()
        if px_after is not None:
            assert intent.px is not None
            notes = (RoundingNote("px", intent.px, px_after, instrument.tSz),)
        if sz_after is not None:
            notes += (RoundingNote("sz", intent.sz, sz_after, instrument.lotSz),)
        return Checked(intent, request, px, sz, notes, ())


_Known = tuple[Decimal | None, Decimal, Decimal | None, Decimal | None, OrderRequest]
"""An accepted order's price and size in their wire form, each amount as rounded when it
was (None: it was not), and its request (a later order of the same values and fields takes
it with its own id: :func:`~botkit.exchange.models.order_request_as`)."""


def _key(intent: OrderIntent, off_tick: OffTick) -> tuple[object, ...] | None:
    """What an order's checks depend on, or None when not of the exact types (a plain string
    equals its member, an ``int`` its ``Decimal``): the members by identity."""
    px, sz = intent.px, intent.sz
    if type(sz) is not Decimal or type(px) not in _AMOUNT_TYPES:
        return None
    return (
        px, sz, id(intent.side), id(intent.type), id(intent.pos_side), id(intent.reduce_only),
        id(off_tick),
    )  # fmt: skip


_AMOUNT_TYPES = (Decimal, _NOTHING)
