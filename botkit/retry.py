"""One retry vocabulary for every call botkit retries: tenacity's composable waits and stops, an
injected sleep, and a fast first try.

Four callers retry exchange calls: the snapshot reads (:mod:`botkit.runner.reader`), a batch's
sends and lookups (:mod:`botkit.runner.orders.submit`), reconcile's lookups
(:mod:`botkit.runner.orders.reconcile`) and the candle download (:mod:`botkit.backtest.fetch`). Each
keeps its own *what* — which errors are safe to retry (a write is never re-sent blindly), how
many tries, what happens when they run out — and says its *how* with the pieces here:

* :func:`backoff` — ``base × 2^(n−1)`` seconds after failed try ``n``, capped at ``cap``
  (tenacity's ``wait_exponential``), times ``1 + jitter × U[0, 1)`` with ``U`` drawn from an
  injected ``random.Random`` (seed it and the sequence is exact; :class:`wait_jittered`).
* :class:`wait_answer` — what the failed answer itself asks for, else a fallback wait: nothing
  after an expired timestamp (the next try is signed afresh; the client has marked its clock for
  a re-sync), a 429's ``Retry-After`` up to :data:`MAX_RETRY_AFTER`, else the fallback.
* :func:`tries` — stop after ``n`` tries, the first one included (at least one).
* :class:`Retry` — the policy: the errors to retry, the stop, the wait, the sleep, an optional
  ``before_sleep`` hook. :meth:`Retry.call` makes the first try bare — nearly every call succeeds
  at once, and building tenacity's machinery for each cost more than an in-process exchange
  call — and hands a failed first try to tenacity as its attempt 1, so the retries, their waits,
  the hook and the error raised at the end are exactly those tenacity alone would give.
* The sleep is injected: tests pass a fake and assert the exact sequence; the service passes
  :meth:`botkit.clock.Stop.sleep`, so a stop request ends any wait at once by raising
  :class:`~botkit.errors.StopRequested`, which no policy retries: nothing outlives a SIGTERM.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from botkit.errors import RateLimited, TimestampExpired
from botkit.frozen import quick_init

__all__ = [
    "MAX_RETRY_AFTER",
    "Retry",
    "Sleep",
    "backoff",
    "tries",
    "wait_answer",
    "wait_jittered",
]

T = TypeVar("T")

Sleep = Callable[[float], None]
"""How a policy waits: ``time.sleep``, a test's fake, or the service's ``Stop.sleep``."""

MAX_RETRY_AFTER: Final = 60.0
"""The longest ``Retry-After`` honoured, in seconds; one cap for every caller.

Why a minute: the exchange's notes say repeated excess "can block the account for a minute", so
a ``Retry-After`` up to that is the exchange describing a real block, and a try before it ends
only earns another 429 (and may prolong the block). A longer one (a garbled header, an HTTP date
far ahead) is not waited out blindly: the try after a minute asks again, within the caller's
bounded tries. The wait is the injected sleep, so a stop request still ends it at once. (Before
this module the snapshot reads capped at 30 s, submission at 60 s, reconcile's lookups ignored
the header and the candle download honoured any value.)"""


class wait_jittered(wait_base):  # noqa: N801 - tenacity's naming of waits
    """``wait`` times ``1 + jitter × U[0, 1)``, ``U`` drawn from ``rng`` under a lock (threads
    sending batches concurrently share one policy; a seeded ``rng`` gives an exact sequence)."""

    def __init__(self, wait: wait_base, jitter: float, rng: random.Random | None = None) -> None:
        self.wait = wait
        self.jitter = jitter
        self.rng = rng if rng is not None else random.Random()  # noqa: S311 - jitter, not security
        self._lock = threading.Lock()

    def __call__(self, retry_state: RetryCallState) -> float:
        delay = self.wait(retry_state)
        with self._lock:
            u = self.rng.random()
        return delay * (1.0 + self.jitter * u)


def backoff(
    base: float, cap: float, *, jitter: float = 0.0, rng: random.Random | None = None
) -> wait_base:
    """``base × 2^(n−1)`` s after failed try ``n`` (1-based), at most ``cap``; with ``jitter``
    above 0, each delay times ``1 + jitter × U[0, 1)`` (see :class:`wait_jittered`)."""
    exponential = wait_exponential(multiplier=base, max=cap)
    return wait_jittered(exponential, jitter, rng) if jitter > 0 else exponential


class wait_answer(wait_base):  # noqa: N801 - tenacity's naming of waits
    """The wait the failed answer asks for, else ``fallback`` (see the module doc): 0 after an
    expired timestamp, a 429's ``Retry-After`` clamped to [0, :data:`MAX_RETRY_AFTER`]."""

    def __init__(self, fallback: wait_base) -> None:
        self.fallback = fallback

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, TimestampExpired):
            return 0.0
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            return max(0.0, min(exc.retry_after, MAX_RETRY_AFTER))
        delay: float = self.fallback(retry_state)
        return delay


def tries(n: int) -> stop_base:
    """Stop after ``n`` tries, the first one included; at least one try is made."""
    return stop_after_attempt(max(1, n))


@quick_init
@dataclass(frozen=True, slots=True)
class Retry:
    """One retry policy; :meth:`call` runs a function under it (see the module doc)."""

    retry_on: tuple[type[BaseException], ...]
    """The errors retried; any other error propagates at once, unchanged."""
    stop: stop_base
    wait: wait_base
    sleep: Sleep = time.sleep
    before_sleep: Callable[[RetryCallState], None] | None = None
    """Called after a failed try that will be retried, before its wait (journaling, re-sync)."""

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)``, retried while it raises one of :attr:`retry_on` and :attr:`stop`
        allows; the last error is raised as is when the tries run out."""
        try:
            return fn(*args)
        except self.retry_on as exc:
            return self.after(exc, fn, *args)

    def after(self, first: BaseException, fn: Callable[..., T], *args: Any) -> T:
        """What :meth:`call` does once its bare first try of ``fn(*args)`` raised ``first``
        (one of :attr:`retry_on`): the retries, as tenacity's attempts 2, 3, ... A caller
        that made the first try itself (and builds this policy only when it failed) hands
        the error over here."""
        failed: list[BaseException] = [first]

        def attempt(*a: Any) -> T:
            if failed:
                raise failed.pop()
            return fn(*a)

        retrying = Retrying(
            sleep=self.sleep,
            stop=self.stop,
            wait=self.wait,
            retry=retry_if_exception_type(self.retry_on),
            before_sleep=self.before_sleep,
            reraise=True,
        )
        result: T = retrying(attempt, *args)
        return result
