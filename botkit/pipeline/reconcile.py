"""Reconcile: settle every journaled order without a final outcome by looking it up.

Start-up runs it before anything new is sent (crash recovery is the same path), and the executor
runs it at the start of a cycle when orders were left unsettled. An order the exchange has is
settled ``accepted`` with its ``ordId`` (``resolved``); one it does not have is settled ``failed``
— it was never placed. An order whose request left less than ``grace_ms`` ago may still be in
flight at the exchange (a hung request of a killed process), so reconcile first waits until the
grace has passed. Orders whose lookup fails stay unsettled for the next try.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

from loguru import logger
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from botkit.errors import ExchangeError, TransientError
from botkit.exchange.port import ExchangePort
from botkit.journal.db import Journal
from botkit.journal.records import OrderOutcome, OrderState, Outcome
from botkit.pipeline.lookup import find_order

__all__ = ["ReconcileReport", "reconcile"]


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    settled: tuple[OrderOutcome, ...] = ()
    pending: tuple[str, ...] = ()
    """Client order ids still unsettled (lookup failed, or too young to look up yet)."""

    @property
    def clean(self) -> bool:
        return not self.pending


def reconcile(
    journal: Journal,
    port: ExchangePort,
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
        now = clock()
        newest = max((o.sent_ms or o.ts_ms) for o in orders)
        wait_ms = newest + grace_ms - now
        if wait_ms > 0 and wait:
            # Never more than the grace itself, however the clocks moved since the send (a
            # send time "in the future" means the clock stepped back, not a longer wait); the
            # injected sleep is the service's interruptible one (a stop request ends it).
            if wait_ms > grace_ms:
                logger.warning(
                    "reconcile: the last send is journaled {} s in the future (the clock moved"
                    " back); waiting the grace only",
                    (wait_ms - grace_ms) // 1000,
                )
                wait_ms = grace_ms
            text = (
                f"waiting {wait_ms / 1000:g} s for {len(orders)} unsettled order(s) whose request"
                " may still be in flight, then looking them up"
            )
            logger.info("reconcile: {}", text)
            journal.record_event("reconcile", text)
            sleep(wait_ms / 1000)
        elif wait_ms > 0:
            young = [o.cl_ord_id for o in orders if (o.sent_ms or o.ts_ms) + grace_ms > now]
            orders = [o for o in orders if o.cl_ord_id not in young]
    retrying = Retrying(
        sleep=sleep,
        stop=stop_after_attempt(lookup_attempts),
        wait=wait_exponential(multiplier=0.2, max=2.0),
        retry=retry_if_exception_type(TransientError),
        reraise=True,
    )
    settled: list[OrderOutcome] = []
    pending: list[str] = []
    for order in orders:
        try:
            ord_id: str | None = retrying(find_order, port, order.symbol, order.cl_ord_id)
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
