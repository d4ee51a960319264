"""One stop mechanism for the service: an event, and a ``sleep`` that a stop request ends.

The composition root creates one :class:`Stop`, hands its :meth:`Stop.sleep` to everything that
waits through an injected ``sleep`` (tenacity's backoffs in submit and lookups, start-up
reconcile's grace) and its event to the loop (the wait for the next cycle, the start-up retries).
A signal handler calls :meth:`Stop.set`: a sleep in progress ends at once and raises
:class:`~botkit.errors.StopRequested`, as does any sleep begun afterwards, so no backoff or retry
outlives a SIGTERM. A request already on the wire is bounded by ``request_deadline`` instead.
"""

from __future__ import annotations

import threading

from botkit.errors import StopRequested

__all__ = ["Stop"]


class Stop:
    """A stop request shared by every wait of one service; see the module doc."""

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
