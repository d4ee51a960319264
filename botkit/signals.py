"""Signals turned into calls on an ordinary thread, so that what they set may take a lock.

A Python signal handler runs in the main thread, between two of its bytecodes — possibly while
that thread holds a lock. A handler that sets a :class:`threading.Event` takes the event's own
lock, a plain (non-reentrant) one, which the main thread holds for a few bytecodes each time it
enters or leaves that event's ``wait()``: a signal landing there blocks the handler on a lock
its own thread holds, and the process hangs (the service waits on its stop and wake events
most of its life; a stop would then end only with systemd's SIGKILL).

:func:`relay_signals` keeps the handlers free of locks: the Python handlers do nothing, the
interpreter's own C handler writes each signal's number to a pipe
(:func:`signal.set_wakeup_fd`), and a daemon thread reading that pipe calls the callback of each
signal — on an ordinary thread, where a lock the main thread holds is simply waited for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Mapping
from types import FrameType

__all__ = ["relay_signals"]


def _ignore(_signum: int, _frame: FrameType | None) -> None:
    """The Python-level handler: nothing (the relay thread acts on the signal)."""


def relay_signals(
    callbacks: Mapping[signal.Signals, Callable[[signal.Signals], None]],
) -> Callable[[], None]:
    """Call ``callbacks[sig](sig)`` on a relay thread for each of these signals received from
    now on (in the order received). Call it from the main thread; returns an undo that puts
    back the handlers and the wake-up descriptor found, and ends the relay thread."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # the C handler must never block on a full pipe
    try:
        previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        previous = {sig: signal.signal(sig, _ignore) for sig in callbacks}
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        raise
    by_number = {int(sig): (sig, call) for sig, call in callbacks.items()}

    def relay() -> None:
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            if not data:
                return  # the undo closed the pipe
            for number in data:
                found = by_number.get(number)
                if found is None:
                    continue
                try:
                    found[1](found[0])
                except Exception:  # the relay must outlive a failing callback: the next
                    # signal (a stop, say) still needs acting on
                    from loguru import logger  # not at start-up: the CLI starts without it

                    logger.exception("acting on {} failed", found[0].name)

    thread = threading.Thread(target=relay, name="botkit-signals", daemon=True)
    thread.start()

    def undo() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        os.close(write_fd)  # the relay thread reads the end of the pipe and returns
        thread.join(timeout=5)
        with contextlib.suppress(OSError):
            os.close(read_fd)

    return undo
