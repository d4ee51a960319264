"""``ClockSync``: the offset between our clock and the exchange's, for request timestamps.

The exchange refuses a signed request whose timestamp is 5 s or more away from its own clock.
:meth:`ClockSync.resync` asks for the server time (``GET /timestamp``) and takes the midpoint of
the round trip as the moment the server read its clock::

    offset = server - (t_send + t_recv) / 2        now_ms() = local() + offset

The local clock is injected (a callable returning Unix ms) so tests drive it by hand; the
default, :func:`system_ms`, is the only place that reads the real clock. Nothing here ever sets
the system clock. Thread-safe: one lock around the offset.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ClockSync", "LocalClock", "ServerTimeFetcher", "SyncSample", "system_ms"]

LocalClock = Callable[[], int]
"""Returns the local time in Unix milliseconds."""

ServerTimeFetcher = Callable[[], int]
"""Asks the exchange for its time (``GET /timestamp``), in Unix milliseconds."""


def system_ms() -> int:
    """The real clock, Unix milliseconds (UTC)."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class SyncSample:
    """One measurement: the offset found, the round trip it took, and when (local ms)."""

    offset_ms: int
    rtt_ms: int
    at_local_ms: int
    server_ms: int


class ClockSync:
    """Keeps the offset to the server clock; re-syncs on demand and every ``interval_ms``.

    ``fetch`` is usually bound later by the client (:meth:`bind`), which owns the HTTP side.
    ``interval_ms=0`` means: sync once, then only on demand.
    """

    def __init__(
        self,
        fetch: ServerTimeFetcher | None = None,
        *,
        local: LocalClock = system_ms,
        interval_ms: int = 300_000,
    ) -> None:
        if interval_ms < 0:
            raise ValueError("interval_ms must be >= 0")
        self._fetch = fetch
        self._local = local
        self.interval_ms = interval_ms
        self._lock = threading.Lock()
        self._offset_ms = 0
        self._last: SyncSample | None = None
        self._stale = False

    def __repr__(self) -> str:
        return f"ClockSync(offset_ms={self._offset_ms}, interval_ms={self.interval_ms})"

    def bind(self, fetch: ServerTimeFetcher) -> None:
        """Set where the server time comes from (the client does this), unless already set."""
        if self._fetch is None:
            self._fetch = fetch

    @property
    def offset_ms(self) -> int:
        """Server minus local, in ms (0 until the first sync)."""
        return self._offset_ms

    @property
    def last_sync(self) -> SyncSample | None:
        """The latest measurement, or None before the first."""
        return self._last

    def local_ms(self) -> int:
        """The local clock, uncorrected."""
        return self._local()

    def now_ms(self) -> int:
        """Our best estimate of the server's clock now: local + offset."""
        return self._local() + self._offset_ms

    def set_offset(self, offset_ms: int) -> None:
        """Use a known offset (tests, or a value measured elsewhere)."""
        local = self._local()
        with self._lock:
            self._offset_ms = offset_ms
            self._last = SyncSample(offset_ms, 0, local, local + offset_ms)

    def resync(self) -> SyncSample:
        """Measure the offset now. Errors of the fetch propagate; the old offset stays."""
        if self._fetch is None:
            raise RuntimeError("ClockSync has no server-time source; bind() one first")
        t_send = self._local()
        server = self._fetch()
        t_recv = self._local()
        rtt = max(t_recv - t_send, 0)
        # Midpoint of the round trip, rounded half away from zero in integer arithmetic.
        twice = 2 * server - t_send - t_recv
        offset = (twice + (1 if twice >= 0 else -1)) // 2 if twice % 2 else twice // 2
        sample = SyncSample(offset_ms=offset, rtt_ms=rtt, at_local_ms=t_recv, server_ms=server)
        with self._lock:
            self._offset_ms = offset
            self._last = sample
            self._stale = False
        return sample

    def mark_stale(self) -> None:
        """The exchange refused a timestamp: re-sync before the next signed request."""
        self._stale = True

    def due(self) -> bool:
        """True before the first sync, after :meth:`mark_stale`, and when ``interval_ms`` has
        passed since the last."""
        last = self._last
        if last is None or self._stale:
            return True
        if self.interval_ms == 0:
            return False
        return self._local() - last.at_local_ms >= self.interval_ms

    def maybe_resync(self) -> SyncSample | None:
        """Re-sync if :meth:`due`; return the new sample, or None when nothing was done."""
        return self.resync() if self.due() else None
