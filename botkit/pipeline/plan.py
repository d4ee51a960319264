"""The plan of a cycle: intents + snapshot → what will be sent, what is refused and why. Pure.

:func:`build_plan` sorts the intents in the sending order, validates and rounds each against its
instrument and price band, applies the risk guards (and the kill switch) to the orders that
passed, and groups the accepted ones into batches of at most 10. The result is a value the
executor journals and sends, and the dry-run prints with :meth:`Plan.render`.

One order that cannot be planned never stops the others: an unexpected failure while checking
it refuses that strategy's orders of the cycle (reason ``planning_failed``, naming the strategy
and the error) and every other strategy's orders are planned as usual.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from botkit.exchange.models import (
    Instrument,
    LimitPrice,
    OrderRequest,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
)
from botkit.frozen import quick_init
from botkit.intents import OrderIntent
from botkit.pipeline.batching import MAX_BATCH, make_batches, order_key
from botkit.pipeline.risk import (
    NO_POLICY,
    GuardTrip,
    RiskBook,
    RiskLimits,
    StrategyPolicy,
    Valuation,
    reduces_only,
)
from botkit.pipeline.validate import Band, CheckMemo, Reason, RoundingNote, price_band
from botkit.snapshot import Snapshot

__all__ = ["Plan", "PlannedOrder", "Refusal", "build_plan"]

_ZERO = Decimal(0)


@quick_init
@dataclass(frozen=True, slots=True)
class PlannedOrder:
    """An order that passed validation and the guards, with how it was rounded."""

    intent: OrderIntent
    request: OrderRequest
    notes: tuple[RoundingNote, ...] = ()
    notional: Decimal | None = None

    @property
    def cl_ord_id(self) -> str:
        return self.intent.cl_ord_id

    def wire(self) -> dict[str, Any]:
        """The order exactly as it goes into the request body."""
        return self.request.to_wire()


@quick_init
@dataclass(frozen=True, slots=True)
class Refusal:
    """An order refused locally, with every reason (validation and guards)."""

    intent: OrderIntent
    reasons: tuple[Reason, ...]
    notes: tuple[RoundingNote, ...] = ()
    px: Decimal | None = None
    sz: Decimal | None = None

    @property
    def cl_ord_id(self) -> str:
        return self.intent.cl_ord_id


@quick_init
@dataclass(frozen=True, slots=True)
class Plan:
    """What one cycle will do: ``accepted`` orders in ``batches`` of at most 10 (the batches the
    executor sends), ``refused`` ones with every reason, the guards' ``trips``. Orders already sent
    in an earlier cycle (the same decision again) are the executor's to skip: it asks the journal
    (see :class:`~botkit.runner.orders.execute.ExecutionReport`'s ``skipped``)."""

    now_ms: int
    accepted: tuple[PlannedOrder, ...] = ()
    refused: tuple[Refusal, ...] = ()
    trips: tuple[GuardTrip, ...] = ()
    batches: tuple[tuple[PlannedOrder, ...], ...] = ()
    kill_switch: str | None = None
    instruments: Mapping[str, Instrument] = field(default_factory=dict)
    """The instruments the orders were checked against (the executor re-checks prices)."""
    band_margin: Decimal = Decimal(0)
    """The price band's safety margin the orders were checked with (a fraction)."""
    hold: Reason | None = None
    """Why every order of the cycle is held back (the halt, or a position mode unknown after a
    switch), or ``None``."""

    @property
    def empty(self) -> bool:
        return not (self.accepted or self.refused or self.trips)

    def render(self) -> str:
        """A human-readable account of the plan (dry-run and ``botkit plan`` print it)."""
        lines: list[str] = []
        if self.hold is not None:
            lines.append(f"NOTHING SENT ({self.hold.code}): {self.hold.message}")
        if self.kill_switch:
            lines.append(
                f"KILL SWITCH: {self.kill_switch} (reduce-only orders and cancels still go out)"
            )
        lines.append(
            f"{len(self.accepted)} to send in {len(self.batches)} batch(es),"
            f" {len(self.refused)} refused, 0 already sent"  # the executor skips those
        )
        for number, batch in enumerate(self.batches, 1):
            lines.append(f"batch {number} ({len(batch)} orders):")
            for order in batch:
                i = order.intent
                px = f" @ {order.request.px}" if order.request.px is not None else ""
                lines.append(
                    f"  {i.cl_ord_id} {i.strategy}/{i.rule} {i.side.value} {order.request.sz}"
                    f" {i.symbol} {i.type.value}{px}{_flags(i)}"
                )
                lines.extend(f"      rounded {note}" for note in order.notes)
        for refusal in self.refused:
            i = refusal.intent
            lines.append(
                f"refused {i.cl_ord_id} {i.strategy}/{i.rule} {i.side.value} {i.sz} {i.symbol}"
                f" {i.type.value}" + (f" @ {i.px}" if i.px is not None else "") + _flags(i)
            )
            lines.extend(f"      {reason}" for reason in refusal.reasons)
        for trip in self.trips:
            if trip.guard in ("kill_switch", "halt", "position_mode_unknown"):
                lines.append(f"guard {trip}")
        return "\n".join(lines)


def _leg(intent: OrderIntent) -> str:
    """The order's hedge leg (``LONG`` / ``SHORT``), or "" in one-way mode."""
    return "" if intent.pos_side is PosSide.BOTH else intent.pos_side.value


def _flags(intent: OrderIntent) -> str:
    """What a plan's line adds after the price: the hedge leg, reduce-only."""
    leg = _leg(intent)
    return (f" {leg}" if leg else "") + (" reduce-only" if intent.reduce_only else "")


class _Market:
    """What one symbol's orders are checked against in one plan, read off the snapshot once (in
    the order each order read it: instrument, ticker, band): the price band with the plan's
    margin (``None`` when computing it fails: each order then computes it inside its own
    check, which turns the failure into that order's refusal as before), the valuation, and the
    orders' checks (:class:`~botkit.pipeline.validate.CheckMemo`: each distinct order once)."""

    __slots__ = ("band", "checks", "instrument", "limit_price", "mark", "valuation")

    def __init__(
        self,
        instrument: Instrument | None,
        mark: Decimal | None,
        limit_price: LimitPrice | None,
        band: Band | None,
    ) -> None:
        self.instrument = instrument
        self.mark = mark
        self.limit_price = limit_price
        self.band = band
        self.valuation: Valuation | None = None
        self.checks: CheckMemo | None = None

    @classmethod
    def read(cls, snapshot: Snapshot, symbol: str, margin: Decimal) -> _Market:
        instrument = snapshot.instruments.get(symbol)
        ticker = snapshot.tickers.get(symbol)
        mark = ticker.mPx if ticker is not None else None
        limit_price = snapshot.limit_prices.get(symbol)
        band: Band | None = None
        if instrument is not None:
            try:
                band = price_band(instrument, mark=mark, limit_price=limit_price, margin=margin)
            except Exception:  # each order's own check meets it again
                band = None
        return cls(instrument, mark, limit_price, band)


class _Closing:
    """What each position leg has left to close while one plan admits its orders, so that a
    closing order (:func:`~botkit.pipeline.risk.reduces_only`) with nothing left to close is
    refused here rather than by the exchange (10018 "No position to close").

    Only what is certain counts: the positions read, less the closing MARKET orders admitted
    earlier in the plan when ``consume`` (they fill as they arrive; a closing limit order may
    never fill and closes nothing here). A leg an order admitted earlier in the plan opens (any
    type) is never judged again in this plan: that order may fill before the closing one
    arrives. :func:`build_plan` judges each order against the positions alone as it goes, and
    the closes that use up a position once the plan's orders are final (a strategy whose
    planning fails takes its orders out: they close nothing)."""

    __slots__ = ("_by", "_consume", "_left", "_opened", "market_closes")

    def __init__(self, positions: dict[tuple[str, PosSide], Decimal], *, consume: bool) -> None:
        self._left = positions
        self._consume = consume
        self._opened: set[tuple[str, PosSide]] = set()
        self._by: dict[tuple[str, PosSide], list[str]] = {}
        self.market_closes = 0
        """Closing MARKET orders admitted."""

    def final(
        self,
        accepted: list[PlannedOrder],
        refused: list[Refusal],
        positions: dict[tuple[str, PosSide], Decimal],
    ) -> list[PlannedOrder]:
        """The plan's final ``accepted`` orders (of an instance judging the positions alone):
        when closing MARKET orders may use up a position, those left nothing to close go to
        ``refused``."""
        if self.market_closes < 2:
            return accepted
        return _Closing(positions, consume=True).settle(accepted, refused)

    def settle(self, accepted: list[PlannedOrder], refused: list[Refusal]) -> list[PlannedOrder]:
        """``accepted`` less the closing orders earlier closes leave nothing to close, which
        go to ``refused``."""
        kept: list[PlannedOrder] = []
        for order in accepted:
            nothing = self.refusal(order.intent)
            if nothing is None:
                self.admit(order.intent, order.request.sz)
                kept.append(order)
            else:
                refused.append(
                    Refusal(
                        order.intent, (nothing,), order.notes, order.request.px, order.request.sz
                    )
                )
        return kept

    def refusal(self, intent: OrderIntent, closes: bool | None = None) -> Reason | None:
        """Why ``intent``, a closing order, has nothing to close; ``None`` when it has or when
        it is not a closing order (``closes``: :func:`reduces_only` of it, when known)."""
        if closes is None:
            closes = reduces_only(intent.side, intent.pos_side, intent.reduce_only)
        if not closes:  # an order that opens has nothing to find
            return None
        key = (intent.symbol, intent.pos_side)
        if key in self._opened:
            return None
        left = self._left.get(key, _ZERO)
        if left > 0 if intent.side is OrderSide.SELL else left < 0:
            return None
        leg = f"{_leg(intent)} " if _leg(intent) else ""
        by = self._by.get(key)
        if by:
            return Reason(
                "no_position_to_close",
                f"the {leg}position on {intent.symbol} is closed in full by {', '.join(by)}"
                " earlier in this cycle — the exchange would refuse this one too (10018 no"
                " position to close); nothing to do when the rules closing it agree",
            )
        held = "" if not left else f" (the position is {left}, the same side as the order)"
        return Reason(
            "no_position_to_close",
            f"no {leg}position on {intent.symbol} to close{held} — the exchange would refuse"
            " this closing order (10018 no position to close); a closing order needs the"
            " position open when it is sent (reduce-only orders leave before the cycle's other"
            " orders, so one placed with its entry finds none): place it from a rule that fires"
            " once the position is open, e.g. when: position.qty != 0",
        )

    def admit(self, intent: OrderIntent, sz: Decimal, closes: bool | None = None) -> None:
        """Count ``intent`` (admitted, of size ``sz``) in what its leg has left to close
        (``closes``: :func:`reduces_only` of it, when known)."""
        key = (intent.symbol, intent.pos_side)
        if closes is None:
            closes = reduces_only(intent.side, intent.pos_side, intent.reduce_only)
        if not closes:
            self._opened.add(key)
        elif intent.type is OrderType.MARKET and key not in self._opened:
            self.market_closes += 1
            if not self._consume:
                return
            left = self._left.get(key, _ZERO)
            self._left[key] = max(left - sz, _ZERO) if left > 0 else min(left + sz, _ZERO)
            self._by.setdefault(key, []).append(
                f"{intent.strategy}/{intent.rule} ({intent.cl_ord_id})"
            )


_NO_LIMITS = RiskLimits()
"""The global limits of a plan given none (frozen: one instance, so the book's limits kept by
identity, :func:`~botkit.pipeline.risk.limits_in_force`, find it again)."""


def build_plan(
    intents: Iterable[OrderIntent],
    snapshot: Snapshot,
    *,
    policies: Mapping[str, StrategyPolicy] | None = None,
    limits: RiskLimits | None = None,
    kill_switch: str | None = None,
    hold: Reason | None = None,
    batch_size: int = MAX_BATCH,
    band_margin: Decimal = Decimal(0),
) -> Plan:
    """Validate, guard and batch ``intents`` against ``snapshot``.

    ``policies``: per strategy (off-tick handling, own limits); ``limits``: the global guards;
    ``kill_switch``: why new risk is stopped (see :mod:`botkit.runner.killswitch`), or
    ``None`` — orders that only reduce a position still pass; ``hold``: why *every* order is
    held back this cycle (the halt, or a position mode unknown after a switch), or ``None``;
    ``band_margin``: how far inside the price band a price must lie (a fraction, see
    :func:`price_band`). The accepted orders are batched here, once.
    """
    if not intents:  # the usual quiet cycle: nothing to check (or for a kill switch to stop)
        return Plan(now_ms=snapshot.now_ms, kill_switch=kill_switch, hold=hold)
    policies = policies or {}
    book = RiskBook(
        global_limits=limits or _NO_LIMITS,
        policies=policies,
        positions=snapshot.positions,
        open_orders=snapshot.open_orders,
    )
    accepted: list[PlannedOrder] = []
    refused: list[Refusal] = []
    trips: list[GuardTrip] = []
    seen: set[str] = set()
    stopped = 0
    failed: dict[str, Reason] = {}  # strategy -> why its planning failed this cycle
    held = 0
    markets: dict[str, _Market] = {}  # what each symbol's orders are checked against
    position_mode: PositionMode | None = None  # read (lazily) where the first order needs it
    closing = _Closing(book.positions, consume=False)  # the positions as the guards read them
    for intent in sorted(intents, key=order_key):
        if intent.strategy in failed:
            refused.append(Refusal(intent, (failed[intent.strategy],), (), intent.px, intent.sz))
            continue
        if intent.cl_ord_id in seen:
            dup = Reason(
                "duplicate_cl_ord_id",
                f"client order id {intent.cl_ord_id} appears twice in this cycle — the rule's"
                " legs must have distinct ids",
            )
            refused.append(Refusal(intent, (dup,), (), intent.px, intent.sz))
            continue
        seen.add(intent.cl_ord_id)
        if hold is not None:  # before validation: what the order is checked against is moot
            held += 1
            refused.append(Refusal(intent, (hold,), (), intent.px, intent.sz))
            continue
        policy = policies.get(intent.strategy, NO_POLICY)
        market = markets.get(intent.symbol)
        if market is None:
            market = markets[intent.symbol] = _Market.read(snapshot, intent.symbol, band_margin)
        instrument, mark = market.instrument, market.mark
        if position_mode is None:
            position_mode = snapshot.position_mode
        checks = market.checks
        if checks is None:  # the plan's position mode is read by now, once
            checks = market.checks = CheckMemo(
                instrument,
                mark=mark,
                limit_price=market.limit_price,
                position_mode=position_mode,
                band_margin=band_margin,
                band=market.band,
            )
        try:
            checked = checks.check(intent, policy.off_tick)
            if checked.reasons or checked.request is None or instrument is None:  # not .ok
                refused.append(
                    Refusal(intent, checked.reasons, checked.notes, checked.px, checked.sz)
                )
                continue
            closes = reduces_only(intent.side, intent.pos_side, intent.reduce_only)
            if kill_switch is not None and not closes:
                stopped += 1
                reason = Reason("kill_switch", kill_switch)
                refused.append(Refusal(intent, (reason,), checked.notes, checked.px, checked.sz))
                continue
            nothing = closing.refusal(intent, closes)
            if nothing is not None:
                refused.append(Refusal(intent, (nothing,), checked.notes, checked.px, checked.sz))
                continue
            valuation = market.valuation
            if valuation is None:
                valuation = market.valuation = Valuation(mark, instrument.ctVal)
            order_trips, value = book.admit_order(intent, checked.sz, checked.px, valuation)
            if order_trips:
                trips.extend(order_trips)
                reasons = tuple(Reason(f"guard_{t.guard}", t.message) for t in order_trips)
                refused.append(Refusal(intent, reasons, checked.notes, checked.px, checked.sz))
                continue
        except Exception as exc:  # one strategy's failure never stops the others
            why = Reason(
                "planning_failed",
                f"planning strategy {intent.strategy} failed ({type(exc).__name__}: {exc});"
                " none of its orders are sent this cycle — fix the strategy or report the error",
            )
            failed[intent.strategy] = why
            dropped = [o for o in accepted if o.intent.strategy == intent.strategy]
            accepted = [o for o in accepted if o.intent.strategy != intent.strategy]
            refused.extend(
                Refusal(o.intent, (why,), o.notes, o.request.px, o.request.sz) for o in dropped
            )
            refused.append(Refusal(intent, (why,), (), intent.px, intent.sz))
            continue
        closing.admit(intent, checked.sz, closes)
        accepted.append(PlannedOrder(intent, checked.request, checked.notes, value))
    accepted = closing.final(accepted, refused, book.positions)
    if stopped:
        trips.append(
            GuardTrip(
                "kill_switch",
                "global",
                None,
                None,
                None,
                Decimal(stopped),
                f"{stopped} order(s) stopped: {kill_switch}",
            )
        )
    if held and hold is not None:
        trips.append(
            GuardTrip(
                hold.code,
                "global",
                None,
                None,
                None,
                Decimal(held),
                f"{held} order(s) held back: {hold.message}",
            )
        )
    return Plan(
        now_ms=snapshot.now_ms,
        accepted=tuple(accepted),
        refused=tuple(refused),
        trips=tuple(trips),
        batches=make_batches(accepted, batch_size),
        kill_switch=kill_switch,
        instruments=snapshot.instruments,
        band_margin=band_margin,
        hold=hold,
    )
