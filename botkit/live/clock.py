"""``ClockSync``: our estimate of the exchange's clock, for request timestamps and the runner.

The exchange refuses a signed request whose timestamp is 5 s or more away from its own clock.
:meth:`ClockSync.resync` asks for the server time (``GET /timestamp``) and takes the midpoint of
the round trip as the moment the server read its clock; from then on the estimate runs on the
*monotonic* clock, so a local wall clock that steps (NTP, a resumed VM, an operator) does not
move it::

    offset = server - (t_send + t_recv) / 2       (on the monotonic clock)
    now_ms() = monotonic() + offset                (before the first sync: the local clock)

The midpoint is only as good as the round trip is short: the estimate may be off by up to half
of it (all of the delay on one side of the server's reading). A sample whose round trip took
longer than ``max_rtt_ms`` is therefore measured again (up to ``retry_samples`` more) and the
one with the shortest round trip kept. A first request can be slow on one side only: a TLS
handshake before the server reads its clock, or, on the paper account, the in-process
simulator opening (or creating) its state file before it answers and saving it after; believed
as it is, a 9 s first request set the clock 4.5 s ahead, and a ``botkit run --once`` a few
seconds later found its strategy "already fired in this evaluation slot".

One glitched answer must not move the estimate: a sample more than ``jump_ms`` (plus its round
trip) away from the current estimate is confirmed by ``confirm_samples`` more before it is
believed; the median of them all is taken, so one wild answer is outvoted. Either way it is
logged (WARNING): "the exchange clock moved, confirmed" or "a server time … was ignored".

The clocks are injected (callables returning ms, :data:`botkit.clock.NowMs`) so tests drive them
by hand; the real ones are :func:`botkit.clock.wall_ms` and :func:`botkit.clock.monotonic_ms`. A
``local`` clock given without a ``monotonic`` one serves as both (a test's manual clock drives
everything). A ``ClockSync`` is itself a :class:`botkit.clock.Clock` (``now_ms()``), the one the
runner runs on. Nothing here ever sets the system clock. Thread-safe: one lock around the estimate.
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Callable
from dataclasses import dataclass

from loguru import logger

from botkit.clock import NowMs, monotonic_ms, wall_ms
from botkit.errors import ExchangeError

__all__ = [
    "ClockSync",
    "ServerTimeFetcher",
    "SyncSample",
]

ServerTimeFetcher = Callable[[], int]
"""Asks the exchange for its time (``GET /timestamp``), in Unix milliseconds."""

JUMP_MS = 5_000
"""A new sample further than this (plus its round trip) from the estimate is doubted: the
exchange's own tolerance, beyond which signed requests would fail anyway."""

CONFIRM_SAMPLES = 2
"""Extra samples taken to confirm (or outvote) a doubted one."""

MAX_RTT_MS = 1_000
"""A sample whose round trip took longer than this is measured again: its midpoint may be off
by up to half of it (a second of a 1 s strategy's slot is at stake beyond that)."""

RETRY_SAMPLES = 2
"""Extra samples taken after a slow one; the one with the shortest round trip is kept."""


def _midpoint_offset(server: int, t_send: int, t_recv: int) -> int:
    """``server - (t_send + t_recv) / 2``, rounded half away from zero in integer arithmetic."""
    twice = 2 * server - t_send - t_recv
    return (twice + (1 if twice >= 0 else -1)) // 2 if twice % 2 else twice // 2


@dataclass(frozen=True, slots=True)
class SyncSample:
    """One measurement: the offset found (server minus local), the round trip it took, when
    (local ms) and the server time read."""

    offset_ms: int
    rtt_ms: int
    at_local_ms: int
    server_ms: int


class ClockSync:
    """Keeps the estimate of the server clock; re-syncs on demand and every ``interval_ms``.

    ``fetch`` is usually bound later by the client (:meth:`bind`), which owns the HTTP side.
    ``interval_ms=0`` means: sync once, then only on demand. ``monotonic``: see module doc.
    """

    def __init__(
        self,
        fetch: ServerTimeFetcher | None = None,
        *,
        local: NowMs = wall_ms,
        monotonic: NowMs | None = None,
        interval_ms: int = 300_000,
        jump_ms: int = JUMP_MS,
        confirm_samples: int = CONFIRM_SAMPLES,
        max_rtt_ms: int = MAX_RTT_MS,
        retry_samples: int = RETRY_SAMPLES,
    ) -> None:
        if interval_ms < 0:
            raise ValueError("interval_ms must be >= 0")
        if jump_ms < 0 or confirm_samples < 0:
            raise ValueError("jump_ms and confirm_samples must be >= 0")
        if max_rtt_ms < 0 or retry_samples < 0:
            raise ValueError("max_rtt_ms and retry_samples must be >= 0")
        self._fetch = fetch
        self._local = local
        if monotonic is None:
            monotonic = monotonic_ms if local is wall_ms else local
        self._mono = monotonic
        self.interval_ms = interval_ms
        self.jump_ms = jump_ms
        self.confirm_samples = confirm_samples
        self.max_rtt_ms = max_rtt_ms
        self.retry_samples = retry_samples
        self._lock = threading.Lock()
        self._mono_offset: int | None = None  # server minus monotonic, once synced
        self._last: SyncSample | None = None
        self._last_mono = 0
        self._stale = False

    def __repr__(self) -> str:
        return f"ClockSync(offset_ms={self.offset_ms}, interval_ms={self.interval_ms})"

    def bind(self, fetch: ServerTimeFetcher) -> None:
        """Set where the server time comes from (the client does this), unless already set."""
        if self._fetch is None:
            self._fetch = fetch

    @property
    def offset_ms(self) -> int:
        """Server minus local, in ms, now (0 until the first sync)."""
        if self._mono_offset is None:
            return 0
        return self.now_ms() - self._local()

    @property
    def last_sync(self) -> SyncSample | None:
        """The latest measurement believed, or None before the first."""
        return self._last

    def local_ms(self) -> int:
        """The local clock, uncorrected."""
        return self._local()

    def now_ms(self) -> int:
        """Our best estimate of the server's clock now."""
        offset = self._mono_offset
        if offset is None:
            return self._local()
        return self._mono() + offset

    def set_offset(self, offset_ms: int) -> None:
        """Use a known offset to the local clock (tests, or a value measured elsewhere)."""
        local = self._local()
        mono = self._mono()
        with self._lock:
            self._mono_offset = local + offset_ms - mono
            self._last = SyncSample(offset_ms, 0, local, local + offset_ms)
            self._last_mono = mono

    def _sample(self, fetch: ServerTimeFetcher) -> tuple[int, SyncSample]:
        m_send, t_send = self._mono(), self._local()
        server = fetch()
        m_recv, t_recv = self._mono(), self._local()
        rtt = max(m_recv - m_send, 0)
        sample = SyncSample(
            offset_ms=_midpoint_offset(server, t_send, t_recv),
            rtt_ms=rtt,
            at_local_ms=t_recv,
            server_ms=server,
        )
        return _midpoint_offset(server, m_send, m_recv), sample

    def resync(self) -> SyncSample:
        """Measure the offset now. Errors of the fetch propagate; the old estimate stays.

        Returns the sample believed (a doubted one outvoted returns the one that agreed)."""
        fetch = self._fetch
        if fetch is None:
            raise RuntimeError("ClockSync has no server-time source; bind() one first")
        mono_offset, sample = self._shortest(fetch)
        current = self._mono_offset
        if current is not None and abs(mono_offset - current) > self.jump_ms + sample.rtt_ms:
            mono_offset, sample = self._confirm(fetch, current, mono_offset, sample)
        with self._lock:
            self._mono_offset = mono_offset
            self._last = sample
            self._last_mono = self._mono()
            self._stale = False
        return sample

    def _shortest(self, fetch: ServerTimeFetcher) -> tuple[int, SyncSample]:
        """A sample, measured again while its round trip is longer than ``max_rtt_ms`` (at most
        ``retry_samples`` more times): the one with the shortest round trip. A retry that fails
        ends the retries (the slow sample is still a measurement)."""
        best = self._sample(fetch)
        for _ in range(self.retry_samples):
            if best[1].rtt_ms <= self.max_rtt_ms:
                break
            try:
                again = self._sample(fetch)
            except ExchangeError as exc:
                logger.warning(
                    "the server time took {} ms to come back and measuring it again failed ({}):"
                    " keeping it",
                    best[1].rtt_ms,
                    exc,
                )
                break
            if again[1].rtt_ms < best[1].rtt_ms:
                best = again
        return best

    def _confirm(
        self, fetch: ServerTimeFetcher, current: int, doubted: int, first: SyncSample
    ) -> tuple[int, SyncSample]:
        """A sample far from the estimate: take more, keep the median of them all."""
        samples = [(doubted, first)]
        samples += [self._sample(fetch) for _ in range(self.confirm_samples)]
        median = statistics.median_low(o for o, _ in samples)
        chosen = next(pair for pair in samples if pair[0] == median)
        jump = doubted - current
        if abs(median - current) > self.jump_ms + chosen[1].rtt_ms:
            logger.warning(
                "the exchange clock moved by {} ms (server time {} ms), confirmed by {} more"
                " samples: using the new offset",
                median - current,
                chosen[1].server_ms,
                self.confirm_samples,
            )
            return chosen
        logger.warning(
            "ignored a server time {} ms off our estimate (server said {} ms); {} more samples"
            " agree with the estimate",
            jump,
            first.server_ms,
            self.confirm_samples,
        )
        return current, chosen[1]

    def mark_stale(self) -> None:
        """The exchange refused a timestamp: re-sync before the next signed request."""
        self._stale = True

    def due(self) -> bool:
        """True before the first sync, after :meth:`mark_stale`, and when ``interval_ms`` has
        passed since the last (on the monotonic clock)."""
        if self._last is None or self._stale:
            return True
        if self.interval_ms == 0:
            return False
        return self._mono() - self._last_mono >= self.interval_ms

    def maybe_resync(self) -> SyncSample | None:
        """Re-sync if :meth:`due`; return the new sample, or None when nothing was done."""
        return self.resync() if self.due() else None
