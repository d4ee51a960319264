"""The systemd notify protocol (sd_notify): READY, WATCHDOG, STATUS, STOPPING.

A no-op when ``NOTIFY_SOCKET`` is not set, so the same loop runs under systemd, in a terminal and
in tests. Uses the ``sdnotify`` package, which speaks the datagram protocol (abstract sockets
included); the watchdog interval comes from ``WATCHDOG_USEC``.
"""

from __future__ import annotations

import os

import sdnotify

__all__ = ["Notifier"]


class Notifier:
    """Tells systemd how the service is doing. Every method is safe to call without systemd."""

    def __init__(self) -> None:
        self.enabled = bool(os.environ.get("NOTIFY_SOCKET"))
        self._notifier = sdnotify.SystemdNotifier() if self.enabled else None
        usec = os.environ.get("WATCHDOG_USEC", "")
        self.watchdog_interval_s: float | None = int(usec) / 1_000_000 if usec.isdigit() else None

    def _send(self, state: str) -> None:
        if self._notifier is not None:
            self._notifier.notify(state)

    def ready(self, status: str = "") -> None:
        self._send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def watchdog(self) -> None:
        self._send("WATCHDOG=1")

    def status(self, text: str) -> None:
        self._send(f"STATUS={text.splitlines()[0] if text else ''}")

    def stopping(self) -> None:
        self._send("STOPPING=1")

    def reloading(self) -> None:
        self._send("RELOADING=1")

    def close(self) -> None:
        """Release the datagram socket (the notifier sends nothing afterwards)."""
        if self._notifier is not None and self._notifier.socket is not None:
            self._notifier.socket.close()
        self._notifier = None
