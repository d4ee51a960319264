"""What the engine reports as it runs, and to whom: the observer ports.

* :class:`CycleObserver` is told each cycle's figures (:class:`CycleFigures`: its wall time, the
  clock offset, its orders' outcomes, whether it completed): the service's Prometheus metrics
  (:class:`botkit.service.metrics.Metrics`) count them.
* :class:`Supervisor` is told how the loop is doing (ready, a status line, reloading, stopping)
  and fed the watchdog (the kernel's :class:`~botkit.clock.Watchdog`, all a wait needs):
  systemd's notify protocol (:class:`botkit.service.notify.Notifier`). :class:`Unsupervised`
  tells no one.

The service implements them structurally; the composition root hands them in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from botkit.clock import Watchdog
from botkit.ports.journal import OrderOutcome

__all__ = ["CycleFigures", "CycleObserver", "Supervisor", "Unsupervised", "Watchdog"]


@dataclass(frozen=True, slots=True)
class CycleFigures:
    """What one cycle that ran reports."""

    seconds: float
    """Its wall time (reads, evaluation, submission, journal)."""
    now_ms: int
    """Its exchange time."""
    ok: bool
    """It completed without a failing read."""
    clock_offset_ms: int | None = None
    """The exchange clock's offset to the local clock (None: not synced)."""
    outcomes: tuple[OrderOutcome, ...] = ()
    """The final outcomes of the orders it sent."""
    refused: int = 0
    """Orders it refused locally (validation, guards)."""


class CycleObserver(Protocol):
    """Told the figures of each cycle that ran."""

    def cycle_done(self, figures: CycleFigures) -> None: ...


class Supervisor(Watchdog, Protocol):
    """Whoever supervises the process: told when the loop is ready, how it does, and when it
    reloads or stops."""

    def ready(self, status: str = "") -> None: ...

    def status(self, text: str) -> None:
        """One line (only the first line of ``text`` counts)."""
        ...

    def reloading(self) -> None: ...

    def stopping(self) -> None: ...


class Unsupervised:
    """No supervisor: every report goes nowhere (a loop run by a test, or handed none)."""

    watchdog_interval_s: float | None = None

    def watchdog(self) -> None:
        pass

    def ready(self, status: str = "") -> None:
        pass

    def status(self, text: str) -> None:
        pass

    def reloading(self) -> None:
        pass

    def stopping(self) -> None:
        pass
