"""A wall-clock bound for one call in the main thread (SIGALRM): "never hang" made testable."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Hung", "within"]


class Hung(AssertionError):
    """The call did not return in time."""


@contextmanager
def within(seconds: float, what: str) -> Iterator[None]:
    """Fail with :class:`Hung` when the block runs longer than ``seconds``."""

    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise Hung(f"{what} did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
