"""A bound on the CPU time one call in the main thread may use (SIGPROF): "never hang" made
testable. CPU time, not wall-clock time, so that other work on a shared machine (the suite runs
on every core, beside whatever else the machine does) cannot fail a call that is not itself slow;
a hang or a blow-up (an alias bomb, a quadratic loop) burns CPU and still trips it."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Hung", "within"]


class Hung(AssertionError):
    """The call did not return in time."""


@contextmanager
def within(seconds: float, what: str, *, wall: bool = False) -> Iterator[None]:
    """Fail with :class:`Hung` when the block uses more than ``seconds`` of CPU time (of
    wall-clock time with ``wall``, for a block that could hang waiting rather than computing)."""
    which, signum = (
        (signal.ITIMER_REAL, signal.SIGALRM) if wall else (signal.ITIMER_PROF, signal.SIGPROF)
    )
    clock = "" if wall else " of CPU time"

    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise Hung(f"{what} did not return within {seconds} s{clock}")

    previous = signal.signal(signum, expired)
    signal.setitimer(which, seconds)
    try:
        yield
    finally:
        signal.setitimer(which, 0)
        signal.signal(signum, previous)
