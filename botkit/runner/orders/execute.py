"""Carrying a :class:`~botkit.pipeline.plan.Plan` out: live (:class:`Executor`, sends and
records) or as a dry run (:func:`record_dry_run`, only records). Both reach the journal through
its port (:class:`~botkit.ports.journal.JournalPort`).

The executor's order of writes, so nothing is lost whatever moment the process dies:

1. orders left unsettled by an earlier cycle (or a crash) are reconciled first;
2. local refusals and guard trips are journaled (final at once);
3. every intent is committed *before* its request leaves. Batches sent one after another: the
   same commit *reserves* their sends (each order journaled sent, its send time the end of the
   reservation, :data:`~botkit.runner.orders.reconcile.SEND_RESERVE_MS` ahead), so a request
   leaving within the reservation needs no commit first; its send mark (the true time, the
   ``sent`` event) and its batch's outcomes are held and written with the cycle's end. A
   request after the reservation commits its mark first and extends the reservation of the
   orders still unsent. When the sends end — done, or cut short by an exception — the reserved
   orders never sent are written back as never sent. A crash before the cycle's end leaves the
   orders sent (or reserved) without an outcome, and reconcile settles them by lookup. Batches
   sent side by side commit each send mark before its request and each batch's outcomes as it
   returns. The batches are the plan's; an order the journal already holds (the same decision
   again) is neither journaled nor sent twice.

A dry run journals the plan as decided (the accepted orders as ``dry_run``) and sends nothing.

Batches may go concurrently (``concurrency`` > 1) through a shared rate limiter (the exchange
allows about 5 batch requests per second).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import suppress
from dataclasses import dataclass, field, replace

from botkit.errors import DuplicateOrderId, JournalError, StopRequested
from botkit.exchange.port import OrderSending
from botkit.frozen import quick_init
from botkit.pipeline.band import BAND_CODE, BandCheck
from botkit.pipeline.plan import Plan, PlannedOrder, Refusal
from botkit.ports.journal import JournalPort, NewOrder, OrderOutcome, Outcome
from botkit.runner.orders.reconcile import (
    SEND_RESERVE_MS,
    Rechecker,
    ReconcileReport,
    reconcile,
)
from botkit.runner.orders.submit import BatchReport, RateLimiter, RetryPolicy, Submitter

__all__ = ["ExecutionReport", "Executor", "record_dry_run"]


@quick_init
@dataclass(frozen=True, slots=True)
class ExecutionReport:
    """What one cycle's execution did."""

    dry: bool
    sent: int = 0
    """Orders handed to the exchange (first tries)."""
    requests: int = 0
    outcomes: tuple[OrderOutcome, ...] = ()
    unsettled: tuple[str, ...] = ()
    refused: int = 0
    trips: int = 0
    skipped: tuple[str, ...] = ()
    """Client order ids the journal already held (the same decision again): not sent twice."""
    reconciled: ReconcileReport = field(default_factory=ReconcileReport)
    unknown_answers: tuple[tuple[tuple[str, ...], str], ...] = ()
    """(client order ids, why) of each request whose answer did not settle its orders (a
    malformed answer, a dropped connection, a timeout after sending): they were looked up."""

    def count(self, outcome: Outcome) -> int:
        return sum(1 for o in self.outcomes if o.outcome is outcome)


_NOTHING_RECONCILED = ReconcileReport()
_FAILED = Outcome.FAILED
_QUIET_LIVE = ExecutionReport(dry=False, reconciled=_NOTHING_RECONCILED)
_QUIET_DRY = ExecutionReport(dry=True, reconciled=_NOTHING_RECONCILED)


def _refusal_row(refusal: Refusal) -> NewOrder:
    return NewOrder(
        intent=refusal.intent,
        px=refusal.px,
        sz=refusal.sz,
        notes=tuple(str(n) for n in refusal.notes),
        reasons=tuple(str(r) for r in refusal.reasons),
        outcome=Outcome.REJECTED_LOCAL,
    )


def _order_row(order: PlannedOrder, outcome: Outcome | None) -> NewOrder:
    request = order.request
    notes = order.notes
    return NewOrder(  # positionally (one per order sent)
        order.intent,  # intent
        request.px,  # px
        request.sz,  # sz
        tuple(map(str, notes)) if notes else (),  # notes
        None,  # wire: not needed, the journal's text of it is given (no mapping built)
        (),  # reasons
        outcome,  # outcome
        request.journal_text(),  # request: the body's text as the journal stores it
    )


def record_dry_run(journal: JournalPort, plan: Plan, cycle_id: int | None) -> ExecutionReport:
    """A dry run: journal ``plan`` as decided (trips, refusals, the accepted orders settled as
    ``dry_run``) and send nothing; it leaves nothing to settle and settles nothing."""
    if not (plan.accepted or plan.refused or plan.trips):
        return _QUIET_DRY
    journal.record_trips(cycle_id, plan.trips, dry=True)
    journal.add_orders(
        cycle_id,
        [
            *(_refusal_row(r) for r in plan.refused),
            *(_order_row(o, Outcome.DRY_RUN) for o in plan.accepted),
        ],
        dry=True,
    )
    return ExecutionReport(
        dry=True, refused=len(plan.refused), trips=len(plan.trips), reconciled=_NOTHING_RECONCILED
    )


def _pacing(sleep: Callable[[float], None]) -> Callable[[float], None]:
    """The rate limiter's spacing between batches (a fraction of a second) is not a wait a stop
    request cuts short: the cycle in flight still sends its batches, spaced, and records them."""

    def pace(seconds: float) -> None:
        try:
            sleep(seconds)
        except StopRequested:
            time.sleep(seconds)

    return pace


class Executor:
    """Journals and sends plans through ``port`` (live; a dry run is :func:`record_dry_run`).

    ``resync``: re-syncs the client's clock offset (called after an expired timestamp);
    ``sleep``: injected (tests pass a fake); ``rng``: jitter source (seed it for repeatable
    backoff); ``reconcile_grace_ms``: how long after its latest send an order's request may
    still be accepted by the exchange (its acceptance window plus the request timeout: default
    15 s, the spec's 5 s window and the client's default 10 s timeout); reconcile waits it out
    before calling an order never placed, and an order of a request with an unknown outcome is
    re-sent only after it. ``band_recheck``: before each send of a batch, re-check its prices
    against the band read then (:class:`~botkit.pipeline.band.BandCheck`, with the plan's
    margin).
    """

    def __init__(
        self,
        port: OrderSending,
        journal: JournalPort,
        *,
        resync: Callable[[], object] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        policy: RetryPolicy | None = None,
        rng: random.Random | None = None,
        concurrency: int = 1,
        batch_rate: float | None = 5.0,
        monotonic: Callable[[], float] = time.monotonic,
        reconcile_grace_ms: int = 15_000,
        band_recheck: bool = True,
    ) -> None:
        self.port = port
        self.journal = journal
        self._sleep = sleep
        self._concurrency = max(1, concurrency)
        self._grace_ms = reconcile_grace_ms
        self._band_recheck = band_recheck
        self._noted: dict[str, str] = {}  # lookup failures journaled, per unsettled order
        self._rechecker = Rechecker(reconcile_grace_ms)
        self._unknown: list[tuple[tuple[str, ...], str]] = []  # this run's unknown answers
        pace = _pacing(sleep)
        limiter = RateLimiter(batch_rate, clock=monotonic, sleep=pace) if batch_rate else None
        self.submitter = Submitter(
            port,
            resync=resync,
            sleep=sleep,
            policy=policy,
            rng=rng,
            limiter=limiter,
            observer=self._observe,
            resend_after=reconcile_grace_ms / 1000,
            monotonic=monotonic,
        )

    def _observe(self, kind: str, ids: tuple[str, ...], text: str) -> None:
        if kind == "send":
            self.journal.mark_sent(ids, note=text)
        elif kind == "unknown":
            self.journal.mark_unknown(ids, text)
            self._unknown.append((ids, text))
        else:
            self.journal.record_event(
                kind, text, cl_ord_id=ids[0] if len(ids) == 1 else "", detail={"ids": list(ids)}
            )

    def _note_band_refusals(self, report: BatchReport, cycle_id: int | None) -> None:
        """A 10014 (price outside the band) is journaled with the exchange's bounds: the next
        batch's re-check reads the band again, and the runner re-reads the instrument limits."""
        refused = [o for o in report.outcomes if o.code == BAND_CODE]
        if refused:
            self.journal.record_event(
                "price_band",
                f"{len(refused)} order(s) refused by the exchange as outside the price band"
                f" ({refused[0].msg}); the band is read again before the next batch",
                cycle_id=cycle_id,
                detail={"ids": [o.cl_ord_id for o in refused]},
            )

    def reconcile(self, *, wait: bool = True) -> ReconcileReport:
        """Settle every unsettled order by lookup (start-up and crash recovery). With ``wait``
        it first sleeps out the grace of a request that may still be in flight; without (the
        per-cycle call) such orders stay pending until the next cycle."""
        report = reconcile(
            self.journal,
            self.port,
            clock=self.journal.clock,
            grace_ms=self._grace_ms,
            wait=wait,
            sleep=self._sleep,
            noted=self._noted,
        )
        return self._recheck(report)

    def _recheck(self, report: ReconcileReport) -> ReconcileReport:
        """Look recent "never placed" verdicts up again when a check is due; repair any order
        found at the exchange (see :class:`~botkit.runner.orders.reconcile.Rechecker`)."""
        if any(o.outcome is Outcome.FAILED for o in report.settled):
            self._rechecker.wake()
        if not self._rechecker.due(self.journal.clock()):
            return report
        found = self._rechecker.run(
            self.journal, self.port, self.journal.clock(), sleep=self._sleep
        )
        return replace(report, repaired=report.repaired + found) if found else report

    def _journal_intents(
        self,
        cycle_id: int | None,
        refusals: tuple[Refusal, ...],
        fresh: tuple[PlannedOrder, ...],
        batches: int,
    ) -> None:
        """One commit: the refusals' rows, then the intents' (the rows and ids of two calls),
        the intents reserved for their sends when the ``batches`` go one after another."""
        one_by_one = self._concurrency == 1 or batches <= 1
        self.journal.add_orders(
            cycle_id,
            [*(_refusal_row(r) for r in refusals), *(_order_row(o, None) for o in fresh)],
            dry=False,
            reserve_ms=SEND_RESERVE_MS if one_by_one and fresh else 0,
        )

    def run(self, plan: Plan, *, cycle_id: int | None = None) -> ExecutionReport:
        """Journal ``plan`` and send its batches. Returns what happened."""
        journal = self.journal
        # the journal counts its unsettled orders: a quiet cycle skips reconcile's query
        if journal.has_unsettled():
            reconciled = self.reconcile(wait=False)
        else:
            reconciled = self._recheck(_NOTHING_RECONCILED)
        if not (plan.accepted or plan.refused or plan.trips):
            if reconciled is _NOTHING_RECONCILED:  # the usual quiet cycle: a shared (frozen) report
                return _QUIET_LIVE
            return ExecutionReport(dry=False, reconciled=reconciled)  # nothing to journal or send
        journal.record_trips(cycle_id, plan.trips)
        fresh = plan.accepted
        planned = plan.batches
        refusals = plan.refused
        known: set[str] = set()
        try:
            self._journal_intents(cycle_id, refusals, fresh, len(planned))
        except DuplicateOrderId:
            # the same decision again: never journal or send twice. The journal refused the
            # whole write (nothing of it is written); the ids it holds are skipped and the
            # rest written as the first try would have (asking first cost every cycle a read)
            known = journal.known_ids([o.cl_ord_id for o in plan.accepted + plan.refused])
            if not known:  # an id named twice in the plan: refused as it is
                raise
            fresh = tuple(o for o in fresh if o.cl_ord_id not in known)
            planned = tuple(
                kept
                for kept in (tuple(o for o in b if o.cl_ord_id not in known) for b in planned)
                if kept
            )
            refusals = tuple(r for r in refusals if r.cl_ord_id not in known)
            self._journal_intents(cycle_id, refusals, fresh, len(planned))
        skipped = tuple(sorted(known))
        batches = [tuple([o.request for o in batch]) for batch in planned]
        one_by_one = self._concurrency == 1 or len(batches) <= 1
        self._unknown = []
        reports: list[tuple[int, BatchReport]] = []
        gate = None
        if self._band_recheck:
            gate = BandCheck(
                self.port,
                plan.instruments,
                margin=plan.band_margin,
                note=lambda ids, text: self._observe("band_recheck", ids, text),
            )
        if one_by_one:
            try:
                for index, batch in enumerate(batches):
                    report = self.submitter.place(batch, gate=gate)
                    # held, like the send marks within the reservation: written with the
                    # journal's next write (the cycle's end)
                    journal.settle(report.outcomes, hold=True)
                    self._note_band_refusals(report, cycle_id)
                    reports.append((index, report))
            except BaseException:
                with suppress(JournalError):  # the batches never sent: written back unsent
                    journal.release_sends()
                raise
            journal.release_sends()
        else:
            with ThreadPoolExecutor(max_workers=self._concurrency) as pool:
                futures = {
                    pool.submit(self.submitter.place, b, gate=gate): i
                    for i, b in enumerate(batches)
                }
                for future in as_completed(futures):
                    report = future.result()
                    # as soon as each batch returns: the sends run side by side, so there is no
                    # next send mark to ride with (a held outcome would wait for the slowest)
                    journal.settle(report.outcomes)
                    self._note_band_refusals(report, cycle_id)
                    reports.append((futures[future], report))
        ordered = [r for _, r in sorted(reports, key=lambda pair: pair[0])]
        outcomes = tuple([o for r in ordered for o in r.outcomes])
        if any([o.outcome is _FAILED for o in outcomes]):
            self._rechecker.wake()  # a new "never placed" verdict to look up again later
        return ExecutionReport(
            dry=False,
            sent=len(fresh),
            requests=sum([r.requests for r in ordered]),
            outcomes=outcomes,
            unsettled=tuple([c for r in ordered for c in r.unsettled]),
            refused=len(refusals),
            trips=len(plan.trips),
            skipped=skipped,
            reconciled=reconciled,
            unknown_answers=tuple(self._unknown),
        )
