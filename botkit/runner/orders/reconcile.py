"""Reconcile: settle every journaled order without a final outcome by looking it up.

Start-up runs it before anything new is sent (crash recovery is the same path), and the executor
runs it at the start of a cycle when orders were left unsettled. An order the exchange has is
settled ``accepted`` with its ``ordId`` (``resolved``); one it does not have is settled ``failed``
— it was never placed. An order whose *latest* send (re-sends included) is less than
``grace_ms`` ago may still be accepted by the exchange (the request's acceptance window plus the
request timeout: a hung request of a killed process, a request delivered late), so reconcile
first waits until the grace has passed; an order still that young after the wait (a wait cut
short) stays unsettled. A lookup that fails transiently is retried (:func:`lookup_retry`, with
:mod:`botkit.retry`'s waits); orders whose lookup still fails stay unsettled for the next try.

A "never placed" verdict is revisable: :func:`recheck` looks recent ``failed`` orders up again
(at growing intervals, for ``RECHECK_SPAN`` graces after the verdict) and an order found at the
exchange is repaired to ``accepted`` in the journal (a ``repaired`` event) and reported in
:attr:`ReconcileReport.repaired`, never ignored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

from loguru import logger

from botkit.errors import ExchangeError, TransientError
from botkit.exchange.port import OrderLookup
from botkit.ports.journal import JournalPort, OrderFilter, OrderOutcome, OrderState, Outcome
from botkit.retry import Retry, Sleep, backoff, tries, wait_answer
from botkit.runner.orders.lookup import find_order

__all__ = [
    "RECHECK_SPAN",
    "SEND_RESERVE_MS",
    "Rechecker",
    "ReconcileReport",
    "lookup_retry",
    "reconcile",
]

SEND_RESERVE_MS = 2_000
"""How long the executor's commit of a cycle's intents reserves their sends (batches sent one
after another, :meth:`~botkit.journal.Journal.add_orders`): a batch whose request leaves
within it needs no commit of its own first; a later one commits its mark and extends the
reservation of the orders still unsent by as much. A reserved order is journaled sent at the
reservation's end, a time no earlier than its request's, so the grace counted from it covers
the request however late in the reservation it left."""

RECHECK_SPAN = 16
"""A ``failed`` order is looked up again 1, 2, 4 and 8 graces after its verdict (up to 16)."""


def lookup_retry(attempts: int, sleep: Sleep) -> Retry:
    """How reconcile and the re-check retry a lookup: ``attempts`` tries of a transient failure,
    :mod:`botkit.retry`'s answer-aware wait (a 429's ``Retry-After``, at once after an expired
    timestamp) over a 0.2 s backoff doubling up to 5 s (the reads' and submission's numbers; no
    jitter, so the waits are exact)."""
    return Retry((TransientError,), tries(attempts), wait_answer(backoff(0.2, 5.0)), sleep)


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    settled: tuple[OrderOutcome, ...] = ()
    pending: tuple[str, ...] = ()
    """Client order ids still unsettled (lookup failed, or too young to look up yet)."""
    repaired: tuple[OrderOutcome, ...] = ()
    """Orders the journal had settled failed / rejected, found at the exchange and repaired."""

    @property
    def clean(self) -> bool:
        return not self.pending


def reconcile(
    journal: JournalPort,
    port: OrderLookup,
    *,
    clock: Callable[[], int] | None = None,
    grace_ms: int = 0,
    wait: bool = True,
    sleep: Callable[[float], None] = time.sleep,
    lookup_attempts: int = 3,
    noted: MutableMapping[str, str] | None = None,
) -> ReconcileReport:
    """Settle the journal's unsettled orders by lookup.

    ``grace_ms`` (with ``clock``, the journal's Unix-ms clock): an order sent less than this ago
    may still be in flight. With ``wait`` (start-up) reconcile sleeps until the grace has passed;
    without (between cycles) it leaves such orders pending for a later call.

    ``noted`` (kept by the caller across calls): the last failure journaled per order, so a
    lookup that fails the same way at every cycle is journaled once, not once a cycle.
    """
    orders = journal.unsettled()
    if not orders:
        return ReconcileReport()
    young: list[str] = []
    if grace_ms > 0 and clock is not None:
        start = clock()
        # No request of these orders leaves while reconcile runs, so each one's latest request
        # left before ``start``, whatever its journaled time says: one ahead of ``start`` is a
        # send reserved by a cycle cut short (journaled at the reservation's end, up to
        # SEND_RESERVE_MS ahead) or a clock that stepped back since. The grace counts from
        # the earlier of the two, so a wait is never longer than the grace itself.
        sent = {o.cl_ord_id: min(o.sent_ms or o.ts_ms, start) for o in orders}
        ahead = max(o.sent_ms or o.ts_ms for o in orders) - start
        wait_ms = max(sent.values()) + grace_ms - start
        if wait_ms > 0 and wait:
            # the injected sleep is the service's interruptible one (a stop request ends it)
            if ahead > SEND_RESERVE_MS:
                logger.warning(
                    "reconcile: the last send is journaled {} s in the future (the clock moved"
                    " back); waiting the grace only",
                    ahead // 1000,
                )
            text = (
                f"waiting {wait_ms / 1000:g} s for {len(orders)} unsettled order(s) whose request"
                " may still be in flight, then looking them up"
            )
            logger.info("reconcile: {}", text)
            journal.record_event("reconcile", text)
            sleep(wait_ms / 1000)
        now = clock()  # after the wait (which may have been cut short)
        young = [c for c, at in sent.items() if at + grace_ms > now]
        orders = [o for o in orders if o.cl_ord_id not in young]
    retry = lookup_retry(lookup_attempts, sleep)
    settled: list[OrderOutcome] = []
    pending: list[str] = []
    for order in orders:
        try:
            ord_id = retry.call(find_order, port, order.symbol, order.cl_ord_id)
        except ExchangeError as exc:
            text = f"lookup failed, still unsettled: {exc}"
            if noted is None or noted.get(order.cl_ord_id) != text:
                journal.record_event("reconcile", text, cl_ord_id=order.cl_ord_id)
                if noted is not None:
                    noted[order.cl_ord_id] = text
            pending.append(order.cl_ord_id)
            continue
        if noted is not None:
            noted.pop(order.cl_ord_id, None)
        if ord_id is not None:
            outcome = OrderOutcome(
                order.cl_ord_id,
                Outcome.ACCEPTED,
                ord_id=ord_id,
                resolved=True,
                error=order.error,
            )
        else:
            never_sent = order.state is OrderState.INTENT
            why = (
                "interrupted before the request left"
                if never_sent
                else "not at the exchange on reconcile: never placed"
            )
            error = f"{why}; last error: {order.error}" if order.error else why
            outcome = OrderOutcome(order.cl_ord_id, Outcome.FAILED, error=error, resolved=True)
        journal.settle([outcome])
        settled.append(outcome)
    return ReconcileReport(tuple(settled), tuple(pending + young))


class Rechecker:
    """Makes "never placed" verdicts revisable: looks recent ``failed`` orders up again.

    Each ``failed`` order that was sent is looked up ``grace_ms`` after its verdict, then 2, 4
    and 8 graces after it (``RECHECK_SPAN`` graces in all); one found at the exchange is
    repaired. :meth:`due` is a comparison, so a quiet cycle costs nothing; the journal is read
    only when a check is due (at most once a ``grace_ms``), so a restart re-checks the verdicts
    an earlier run gave. Once a read finds no sent ``failed`` order left to watch, the checker
    rests until :meth:`wake` says a new failed verdict was given (a backtest, whose grace is a
    fraction of a candle, no longer queries the journal every cycle).
    """

    def __init__(self, grace_ms: int, *, lookup_attempts: int = 3) -> None:
        self.grace_ms = max(1, grace_ms)
        self._lookup_attempts = lookup_attempts
        self._next_ms = 0
        self._resting = False
        """No sent ``failed`` order was left to watch at the last read (until :meth:`wake`)."""
        self._checked: dict[str, int] = {}
        """Client order id → when it was last looked up (journal clock)."""

    def due(self, now_ms: int) -> bool:
        return not self._resting and now_ms >= self._next_ms

    def wake(self) -> None:
        """An order was settled ``failed``: watch the journal again."""
        self._resting = False

    def _wanted(self, verdict_ms: int, now_ms: int, last: int | None) -> bool:
        age = now_ms - verdict_ms
        if age < self.grace_ms or age > RECHECK_SPAN * self.grace_ms:
            return False
        if last is None:
            return True
        step = self.grace_ms
        while step * 2 <= age:  # the latest check point (1, 2, 4, 8… graces) already reached
            step *= 2
        return last < verdict_ms + step

    def run(
        self,
        journal: JournalPort,
        port: OrderLookup,
        now_ms: int,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> tuple[OrderOutcome, ...]:
        """Look up the failed orders due a check; repair the ones found. Returns them."""
        if not self.due(now_ms):
            return ()
        self._next_ms = now_ms + self.grace_ms
        since = now_ms - (RECHECK_SPAN + 1) * self.grace_ms
        failed = journal.orders(
            OrderFilter(outcome=Outcome.FAILED.value, since_ms=since, include_dry=False)
        )
        retry = lookup_retry(self._lookup_attempts, sleep)
        repaired: list[OrderOutcome] = []
        live: set[str] = set()
        for order in failed:
            verdict = order.outcome_ms or order.ts_ms
            if order.attempts == 0 or order.sent_ms is None:
                continue  # never left the process: nothing at the exchange to find
            live.add(order.cl_ord_id)
            if not self._wanted(verdict, now_ms, self._checked.get(order.cl_ord_id)):
                continue
            self._checked[order.cl_ord_id] = now_ms
            try:
                ord_id = retry.call(find_order, port, order.symbol, order.cl_ord_id)
            except ExchangeError:
                continue  # looked up again at the next check point
            if ord_id is None:
                continue
            why = "found at the exchange after it was settled failed"
            if journal.repair(order.cl_ord_id, ord_id, why):
                repaired.append(
                    OrderOutcome(
                        order.cl_ord_id,
                        Outcome.ACCEPTED,
                        ord_id=ord_id,
                        resolved=True,
                        error=f"repaired: {why}; was failed ({order.error})",
                    )
                )
        self._checked = {c: t for c, t in self._checked.items() if c in live}
        self._resting = not live
        return tuple(repaired)
