"""Ids the paper exchange hands out: 18-digit decimal strings that grow with time.

An id is ``10**17 + now_ms * 100_000 + n``, never smaller than the previous one plus one: ids
sort like their creation times (history pages by id), stay unique within a run on any clock, and
on wall time do not collide with the ids of an earlier run. 18 digits until the year 2255.
"""

from __future__ import annotations

from botkit.clock import Clock

__all__ = ["IdGen"]

_BASE = 10**17
_PER_MS = 100_000


class IdGen:
    """Monotonic 18-digit ids from a clock (kept as ``int`` inside, ``str`` on the wire)."""

    __slots__ = ("_clock", "_last")

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._last = 0

    @property
    def last(self) -> int:
        """The last id handed out (0: none yet)."""
        return self._last

    def resume(self, last: int) -> None:
        """Hand out ids above ``last`` from now on (a restored paper account's ids stay unique
        even on a clock that is now behind the one they were made on)."""
        self._last = max(self._last, last)

    def next(self) -> int:
        now = max(0, self._clock.now_ms())
        candidate = _BASE + now * _PER_MS
        self._last = candidate if candidate > self._last else self._last + 1
        return self._last
