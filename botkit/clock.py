"""The one clock module: what "now" is, the clocks that say it, and the waits a stop cuts short.

Everything that needs the time takes a clock as an argument; this module alone reads the
machine's clocks, and the simulator, the engine and the exchange client take their clocks from
it:

- :class:`Clock` is the protocol: ``now_ms()``, Unix milliseconds (UTC). :class:`WallClock`
  follows the machine's clock (the loopback server, the service); :class:`ManualClock` moves
  only when told (tests, the demo, the backtest). Both carry ``offset_ms``, a shift of the
  *server* clock relative to the client's, used to exercise the expired-timestamp path (a
  server 7 s ahead: ``offset_ms = 7000``). The exchange client's
  :class:`~botkit.exchange.clock.ClockSync` (its estimate of the exchange's clock) is a
  :class:`Clock` too.
- :data:`NowMs` is a clock as a plain callable (``wall_ms``, ``clock.now_ms``), the form the
  journal, the runner and the clock sync take.
- :func:`wall_ms` is Unix milliseconds (UTC) — the "now" of the command line's ages
  (docs/times.md), the journal's timestamps of read-only commands, :class:`WallClock`.
  :func:`monotonic_ms` never steps; only differences between its readings mean anything.
- Waits: the loop waits for the next due strategy through a :class:`Waiter` —
  :class:`RealTimeWaiter` on the wall (the service), :class:`SimulatedTime` by moving a
  :class:`ManualClock` (the demo, the backtest); a ``wake`` event ends either early. Every
  other wait of the service (backoffs, retries, reconcile's grace) sleeps through
  :meth:`Stop.sleep`, which a stop request ends at once.

Tests pass their own clocks (a :class:`ManualClock`, a callable) or freeze these with freezegun.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from botkit.errors import StopRequested

__all__ = [
    "MAX_NAP_S",
    "Clock",
    "ManualClock",
    "NowMs",
    "RealTimeWaiter",
    "SimulatedTime",
    "Stop",
    "Waiter",
    "WallClock",
    "Watchdog",
    "monotonic_ms",
    "wall_ms",
]

NowMs = Callable[[], int]
"""A clock as a callable: returns the time in milliseconds."""


def wall_ms() -> int:
    """The machine's wall clock, Unix milliseconds (UTC)."""
    return time.time_ns() // 1_000_000


def monotonic_ms() -> int:
    """The machine's monotonic clock in ms (never steps; only differences mean anything)."""
    return time.monotonic_ns() // 1_000_000


@runtime_checkable
class Clock(Protocol):
    """Anything that tells the current time in Unix milliseconds."""

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


class Waiter(Protocol):
    """How the loop waits for the next due strategy."""

    def wait_until(self, target_ms: int, wake: threading.Event) -> None:
        """Return at ``target_ms`` (exchange time), or earlier when ``wake`` is set."""
        ...


class Watchdog(Protocol):
    """What a long wait keeps alive between its naps (systemd's watchdog, through the service's
    notifier): the interval it must be pinged within (None: none) and the ping."""

    @property
    def watchdog_interval_s(self) -> float | None: ...

    def watchdog(self) -> None: ...


MAX_NAP_S = 5.0
"""The longest nap of a wait between two watchdog pings."""


class RealTimeWaiter:
    """Waits on exchange time in naps, pinging the watchdog between them.

    The wait never lasts longer than the distance to ``target_ms`` when it began, measured on
    ``monotonic`` (seconds): if the exchange-time estimate moves back meanwhile, the wait still
    ends on time and the loop re-reads the clock; if it moves forward, the wait ends early.
    """

    def __init__(
        self,
        now_ms: NowMs,
        notifier: Watchdog,
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.now_ms = now_ms
        self.notifier = notifier
        self._monotonic = monotonic
        interval = notifier.watchdog_interval_s
        self.nap_s = min(MAX_NAP_S, interval / 2) if interval else MAX_NAP_S

    def wait_until(self, target_ms: int, wake: threading.Event) -> None:
        deadline = self._monotonic() + max(0, target_ms - self.now_ms()) / 1000
        while not wake.is_set():
            remaining = min((target_ms - self.now_ms()) / 1000, deadline - self._monotonic())
            if remaining <= 0:
                return
            wake.wait(min(remaining, self.nap_s))
            self.notifier.watchdog()


class SimulatedTime:
    """A :class:`Waiter` on a :class:`ManualClock`: ``wait_until`` jumps the clock to the target
    and lets the market catch up (``on_advance``: the random walk, or replayed candles), so hours
    of trading run in seconds through the very same loop and runner as the service."""

    def __init__(
        self, clock: ManualClock, on_advance: Callable[[int], None] = lambda _ms: None
    ) -> None:
        self.clock = clock
        self.on_advance = on_advance

    def wait_until(self, target_ms: int, wake: threading.Event) -> None:
        if wake.is_set() or target_ms <= self.clock.now_ms():
            return
        self.clock.set(target_ms - self.clock.offset_ms)
        self.on_advance(target_ms)


class Stop:
    """One stop request shared by every wait of one service: an event, and a ``sleep`` that
    the request ends.

    The composition root creates one, hands :meth:`sleep` to everything that waits through an
    injected ``sleep`` (tenacity's backoffs in submit and lookups, start-up reconcile's grace)
    and its event to the loop (the wait for the next cycle, the start-up retries). A signal
    handler calls :meth:`set`: a sleep in progress ends at once and raises
    :class:`~botkit.errors.StopRequested`, as does any sleep begun afterwards, so no backoff or
    retry outlives a SIGTERM. A request already on the wire is bounded by ``request_deadline``
    instead.
    """

    def __init__(self, event: threading.Event | None = None) -> None:
        self.event = event if event is not None else threading.Event()

    def __repr__(self) -> str:
        return f"Stop(requested={self.event.is_set()})"

    def set(self) -> None:
        """Ask everything that waits to stop."""
        self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or raise :class:`StopRequested` as soon as a stop is asked."""
        if self.event.wait(max(0.0, seconds)):
            raise StopRequested("stop requested: the wait was cut short")
