"""Safe submission of one batch: retry only what is safe to retry.

* :class:`~botkit.errors.TimestampExpired`: call ``resync()``, then re-send at once (the client
  signs every call with a fresh timestamp), within the attempt bound.
* :class:`~botkit.errors.RateLimited`: wait ``retry_after`` when the answer gives it (up to
  :data:`~botkit.retry.MAX_RETRY_AFTER`), else back off exponentially with (seedable) jitter;
  :class:`~botkit.errors.ConnectFailed` (the request never left) backs off the same way. Only
  answers that prove the request was refused are retried like this: a 429, an expired
  timestamp, a connection never made.
* :class:`~botkit.errors.OutcomeUnknown`, a 5xx (:class:`~botkit.errors.ServerUnavailable`: the
  exchange may have processed the batch before failing to answer), a malformed answer, or
  results that do not match the orders (:class:`~botkit.errors.BatchMismatch`): never re-sent
  blindly. Each client order id is looked up; the found ones are settled with their ``ordId``.
  The missing ones are re-sent (a bounded number of rounds) only once the earlier request can
  no longer be accepted (``resend_after`` seconds after its send: the exchange's acceptance
  window plus the request timeout) and a second lookup still does not find them — a request
  delivered late must not meet its own re-send. A per-order ``250 duplicate`` is looked up too.
* Exhausted retries settle the orders as failed with the last error — unless a request carrying
  them had an unknown fate: those stay unsettled for
  :func:`~botkit.runner.orders.reconcile.reconcile`, which looks them up again after a grace
  period. Only the exchange's word or a lookup settles an order that may exist.

The waits, stops and the injected sleep are :mod:`botkit.retry`'s (one vocabulary with the
reads, reconcile and the candle download); the first try of a send or a lookup is bare. Sleep
and randomness are injected: tests assert the exact backoff sequence with a fake sleep.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tenacity import RetryCallState

from botkit.errors import (
    BotkitError,
    ExchangeError,
    ExchangeRejected,
    MalformedResponse,
    OutcomeUnknown,
    ReadTimedOut,
    RequestValidationError,
    ServerUnavailable,
    TimestampExpired,
    TransientError,
)
from botkit.exchange.models import ACCEPTED_CODE, OrderRequest, PlaceResult
from botkit.exchange.port import Placing
from botkit.frozen import quick_init
from botkit.pipeline.band import Gate
from botkit.pipeline.batching import match_results
from botkit.ports.journal import OrderOutcome, Outcome
from botkit.retry import Retry, backoff, tries, wait_answer
from botkit.runner.orders.lookup import find_order

__all__ = [
    "DUPLICATE_CODE",
    "DUPLICATE_NOTE",
    "SHARED_ID_NOTE",
    "BatchReport",
    "Observer",
    "RateLimiter",
    "RetryPolicy",
    "Submitter",
]

DUPLICATE_CODE = 250
DUPLICATE_NOTE = "the exchange answered 250 duplicate"
SHARED_ID_NOTE = (
    "the exchange answered 250 duplicate to the first request of this client order id: another"
    " process placed it (another botkit with another journal on this account?)"
)
"""The ``error`` of an order settled by lookup after a 250 to its *first* request: the order
the journal now calls its own was placed by someone else (see :mod:`botkit.runner.shared`)."""
"""Per-order code of a client order id the exchange already has (notes)."""

Observer = Callable[[str, tuple[str, ...], str], None]
"""``observer(kind, cl_ord_ids, text)`` with kind ``send`` (a request is about to leave),
``retry``, ``resync``, ``unknown``, ``lookup``; the executor journals them."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounds of the retries. Delays in seconds."""

    max_attempts: int = 5
    """Sends of one request (first try included) before giving up on a transient error."""
    base_delay: float = 0.2
    max_delay: float = 5.0
    jitter: float = 0.5
    """Each backoff delay is multiplied by ``1 + jitter × U[0, 1)``."""
    max_resend_rounds: int = 2
    """New requests for orders a lookup did not find after an unknown outcome."""
    lookup_attempts: int = 3


@quick_init
@dataclass(frozen=True, slots=True)
class BatchReport:
    """What became of one batch: final outcomes, and the orders left unsettled (with why)."""

    outcomes: tuple[OrderOutcome, ...]
    unsettled: tuple[str, ...] = ()
    error: str = ""
    requests: int = 0


class RateLimiter:
    """Spaces request starts at least ``1 / rate`` seconds apart, across threads."""

    def __init__(
        self,
        rate_per_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be above 0")
        self._interval = 1.0 / rate_per_s
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            self._sleep(start - now)


_ACCEPTED = Outcome.ACCEPTED


def _ids(requests: Sequence[OrderRequest]) -> tuple[str, ...]:
    return tuple([r.clOrdId or "" for r in requests])


class Submitter:
    """Sends batches through a :class:`~botkit.exchange.port.Placing` port with the retry rules
    above."""

    def __init__(
        self,
        port: Placing,
        *,
        resync: Callable[[], object] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        policy: RetryPolicy | None = None,
        rng: random.Random | None = None,
        limiter: RateLimiter | None = None,
        observer: Observer | None = None,
        resend_after: float = 0.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``resend_after``: seconds after a request left during which the exchange may still
        accept it (acceptance window + request timeout); orders of a request with an unknown
        outcome are re-sent only after it (0: at once). ``monotonic`` times it."""
        self._port = port
        self._resend_after = max(0.0, resend_after)
        self._monotonic = monotonic
        self._resync = resync
        self._sleep = sleep
        self.policy = p = policy or RetryPolicy()
        rng = rng or random.Random()  # noqa: S311 - jitter, not security
        self._wait = wait_answer(backoff(p.base_delay, p.max_delay, jitter=p.jitter, rng=rng))
        self._lookup_retry = Retry((TransientError,), tries(p.lookup_attempts), self._wait, sleep)
        self._stop = tries(p.max_attempts)  # a send's stop: stateless, one for every batch
        self._limiter = limiter
        self._observer = observer

    # --- events ------------------------------------------------------------------------------

    def _emit(self, kind: str, ids: tuple[str, ...], text: str) -> None:
        if self._observer is not None:
            self._observer(kind, ids, text)

    # --- tenacity plumbing -------------------------------------------------------------------

    def _retrying(self, what: tuple[str, ...]) -> Retry:
        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            delay = state.next_action.sleep if state.next_action else 0.0
            text = f"attempt {state.attempt_number} failed ({exc}); next in {delay:.3f} s"
            self._emit("retry", what, text)
            if isinstance(exc, TimestampExpired) and self._resync is not None:
                try:
                    self._resync()
                    self._emit("resync", what, "clock re-synced after an expired timestamp")
                except ExchangeError as err:
                    self._emit("resync", what, f"clock re-sync failed: {err}")

        return Retry((TransientError,), self._stop, self._wait, self._sleep, before_sleep)

    def _send_once(
        self,
        requests: Sequence[OrderRequest],
        sent_at: list[float],
        gate: Gate | None = None,
        gated: dict[str, OrderOutcome] | None = None,
    ) -> list[tuple[OrderRequest, PlaceResult]]:
        if self._limiter is not None:
            self._limiter.acquire()
        if gate is not None and gated is not None:  # each send, re-sends included
            if gated:
                requests = [r for r in requests if (r.clOrdId or "") not in gated]
            requests, refused = gate(requests)
            gated.update((o.cl_ord_id, o) for o in refused)
            if not requests:
                return []
        ids = _ids(requests)
        self._emit("send", ids, f"POST /v3/trade/orders with {len(requests)} order(s)")
        sent_at.append(self._monotonic())
        try:
            results = self._port.place_orders(requests)
        except ReadTimedOut as exc:  # a write that may have left: never a plain retry
            raise OutcomeUnknown(exc.message, context=exc.context) from exc
        except ServerUnavailable as exc:  # a 5xx proves nothing: the batch may have been placed
            raise OutcomeUnknown(
                f"{exc.message}; the exchange may have processed the request", context=exc.context
            ) from exc
        return match_results(requests, results)

    def _send(
        self,
        requests: Sequence[OrderRequest],
        sent_at: list[float],
        gate: Gate | None,
        gated: dict[str, OrderOutcome],
    ) -> list[tuple[OrderRequest, PlaceResult]]:
        """:meth:`_send_once` under the send's retry policy (:meth:`_retrying`), the first try
        bare: the policy is built only when it failed (nearly every send succeeds at once)."""
        try:
            return self._send_once(requests, sent_at, gate, gated)
        except TransientError as first:
            retrying = self._retrying(_ids(requests))
            return retrying.after(first, self._send_once, requests, sent_at, gate, gated)

    def _lookup(self, symbol: str, cl_ord_id: str) -> str | None:
        return self._lookup_retry.call(find_order, self._port, symbol, cl_ord_id)

    # --- the batch ---------------------------------------------------------------------------

    def place(self, requests: Sequence[OrderRequest], *, gate: Gate | None = None) -> BatchReport:
        """Send one batch (≤ 10) and settle what can be settled. ``gate`` is asked before every
        send (:class:`~botkit.pipeline.band.BandCheck`): the orders it refuses are settled
        ``rejected_local`` with its reason (left to reconcile if an earlier send may have
        placed them), the others go."""
        gated: dict[str, OrderOutcome] = {}
        outcomes: dict[str, OrderOutcome] = {}
        unsettled: dict[str, str] = {}
        ambiguous: set[str] = set()
        pending = list(requests)
        rounds = 0
        sent = 0
        last_error = ""
        sent_at: list[float] = []
        while pending:
            if gated:
                pending = [r for r in pending if (r.clOrdId or "") not in gated]
                if not pending:
                    break
            sent += 1
            try:
                pairs = self._send(pending, sent_at, gate, gated)
            except (OutcomeUnknown, MalformedResponse) as exc:
                last_error = str(exc)
                pending = [r for r in pending if (r.clOrdId or "") not in gated]
                ids = _ids(pending)
                ambiguous.update(ids)
                self._emit("unknown", ids, last_error)
                missing = self._settle_by_lookup(pending, outcomes, unsettled, last_error)
                if missing and sent_at:
                    missing = self._after_acceptance(missing, sent_at[-1], outcomes, unsettled)
                rounds += 1
                if rounds > self.policy.max_resend_rounds:
                    for req in missing:
                        unsettled[req.clOrdId or ""] = f"not re-sent after {rounds} rounds"
                    break
                pending = missing
                continue
            except ExchangeRejected as exc:
                last_error = str(exc)
                pending = [r for r in pending if (r.clOrdId or "") not in gated]
                self._settle_all(pending, ambiguous, outcomes, unsettled, exc, Outcome.REJECTED)
                break
            except (TransientError, RequestValidationError) as exc:  # retries spent / never left
                last_error = str(exc)
                pending = [r for r in pending if (r.clOrdId or "") not in gated]
                self._settle_all(pending, ambiguous, outcomes, unsettled, exc, Outcome.FAILED)
                break
            pending = []
            duplicates: list[OrderRequest] = []
            for req, res in pairs:
                cid = req.clOrdId or ""
                code = res.code
                if code == ACCEPTED_CODE:  # res.accepted
                    outcomes[cid] = OrderOutcome(cid, _ACCEPTED, res.ordId, code, res.msg)
                elif code == DUPLICATE_CODE:
                    duplicates.append(req)
                elif cid in ambiguous:
                    unsettled[cid] = f"rejected on re-send ({code} {res.msg})"
                else:
                    outcomes[cid] = OrderOutcome(cid, Outcome.REJECTED, code=code, msg=res.msg)
            # a 250 to the first request of an id (none of this batch's earlier requests may
            # have placed it) means another process placed it: the ids are shared
            if duplicates:
                self._settle_duplicates(duplicates, ambiguous, outcomes, unsettled)
        for cid, refusal in gated.items():
            if cid in ambiguous:  # an earlier send may have placed it: reconcile decides
                unsettled[cid] = f"not re-sent: {'; '.join(refusal.reasons)}"
            else:
                outcomes.setdefault(cid, refusal)
        order = [r.clOrdId or "" for r in requests]
        return BatchReport(
            tuple(outcomes[c] for c in order if c in outcomes),  # outcomes
            tuple(c for c in order if c in unsettled and c not in outcomes) if unsettled else (),
            last_error,  # error
            sent,  # requests
        )

    def _settle_duplicates(
        self,
        duplicates: list[OrderRequest],
        ambiguous: set[str],
        outcomes: dict[str, OrderOutcome],
        unsettled: dict[str, str],
    ) -> None:
        """Orders answered 250 duplicate are looked up. A 250 to the first request of an id
        (none of this batch's earlier requests may have placed it) means another process
        placed it: the ids are shared."""
        shared = [r for r in duplicates if (r.clOrdId or "") not in ambiguous]
        again = [r for r in duplicates if (r.clOrdId or "") in ambiguous]
        for group, note in ((shared, SHARED_ID_NOTE), (again, DUPLICATE_NOTE)):
            for req in self._settle_by_lookup(group, outcomes, unsettled, note):
                cid = req.clOrdId or ""
                unsettled[cid] = "250 duplicate but not found by lookup"

    def _after_acceptance(
        self,
        missing: list[OrderRequest],
        last_sent: float,
        outcomes: dict[str, OrderOutcome],
        unsettled: dict[str, str],
    ) -> list[OrderRequest]:
        """Orders a lookup did not find may sit in a request the exchange has not processed yet:
        wait until it can no longer be accepted, then look again; returns those still missing."""
        wait = last_sent + self._resend_after - self._monotonic()
        if self._resend_after <= 0 or wait <= 0:
            return missing
        ids = _ids(missing)
        self._emit(
            "wait",
            ids,
            f"not found yet; waiting {wait:.3f} s until the request can no longer be accepted",
        )
        self._sleep(wait)
        note = "found after the request's acceptance window"
        return self._settle_by_lookup(missing, outcomes, unsettled, note)

    def _settle_all(
        self,
        pending: Sequence[OrderRequest],
        ambiguous: set[str],
        outcomes: dict[str, OrderOutcome],
        unsettled: dict[str, str],
        exc: BotkitError,
        outcome: Outcome,
    ) -> None:
        for req in pending:
            cid = req.clOrdId or ""
            if cid in ambiguous:  # an earlier request may have placed it: reconcile decides
                unsettled[cid] = str(exc)
            elif isinstance(exc, ExchangeRejected):
                outcomes[cid] = OrderOutcome(cid, outcome, code=exc.code, msg=exc.msg)
            else:
                outcomes[cid] = OrderOutcome(cid, outcome, error=str(exc))

    def _settle_by_lookup(
        self,
        pending: Sequence[OrderRequest],
        outcomes: dict[str, OrderOutcome],
        unsettled: dict[str, str],
        why: str,
    ) -> list[OrderRequest]:
        """Look each order up; settle the found ones; return those the exchange does not have.
        Orders whose lookup fails stay unsettled (neither re-sent nor settled)."""
        missing: list[OrderRequest] = []
        for req in pending:
            cid = req.clOrdId or ""
            try:
                ord_id = self._lookup(req.symbol, cid)
            except ExchangeError as exc:
                unsettled[cid] = f"{why}; lookup failed: {exc}"
                self._emit("lookup", (cid,), f"lookup failed: {exc}")
                continue
            if ord_id is None:
                self._emit("lookup", (cid,), "not at the exchange")
                missing.append(req)
            else:
                self._emit("lookup", (cid,), f"found at the exchange as ordId {ord_id}")
                outcomes[cid] = OrderOutcome(
                    cid, Outcome.ACCEPTED, ord_id=ord_id, resolved=True, error=why
                )
        return missing
