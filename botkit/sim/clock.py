"""The simulator's clock: the one source of "now" for the paper exchange.

The engine never reads the system clock itself; it asks an injected :class:`SimClock`.
:class:`WallClock` follows real time (the loopback server, the demo); :class:`ManualClock` is moved
by hand (tests, backtests). Both carry ``offset_ms``, a shift of the *server* clock relative to the
client's, used to exercise the expired-timestamp path (a server 7 s ahead: ``offset_ms = 7000``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from botkit.clock import wall_ms

__all__ = ["ManualClock", "SimClock", "WallClock"]


@runtime_checkable
class SimClock(Protocol):
    """Anything that tells the simulator the current server time in Unix milliseconds."""

    def now_ms(self) -> int: ...


class WallClock:
    """Real time plus ``offset_ms`` (the server clock's shift from the client's)."""

    __slots__ = ("offset_ms",)

    def __init__(self, offset_ms: int = 0) -> None:
        self.offset_ms = offset_ms

    def now_ms(self) -> int:
        return wall_ms() + self.offset_ms

    def __repr__(self) -> str:
        return f"WallClock(offset_ms={self.offset_ms})"


class ManualClock:
    """A clock that moves only when told: ``advance(ms)`` or ``set(ms)``; plus ``offset_ms``."""

    __slots__ = ("_ms", "offset_ms")

    def __init__(self, start_ms: int, offset_ms: int = 0) -> None:
        self._ms = int(start_ms)
        self.offset_ms = offset_ms

    def now_ms(self) -> int:
        return self._ms + self.offset_ms

    def advance(self, ms: int) -> None:
        """Move time forward by ``ms`` (never backwards)."""
        if ms < 0:
            raise ValueError(f"ManualClock.advance: ms must be >= 0, got {ms}")
        self._ms += ms

    def set(self, ms: int) -> None:
        """Jump to ``ms`` (Unix milliseconds, before the offset is applied)."""
        self._ms = int(ms)

    def __repr__(self) -> str:
        return f"ManualClock({self._ms}, offset_ms={self.offset_ms})"
