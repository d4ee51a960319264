"""The machine's clocks, read in one place; everything else takes a clock as an argument.

:func:`wall_ms` is Unix milliseconds (UTC) — the "now" of the command line's ages
(docs/times.md), the journal's timestamps of read-only commands, the simulator's wall clock.
:func:`monotonic_ms` never steps; only differences between its readings mean anything. Tests pass
their own callables (a manual clock) instead, or freeze these with freezegun.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "monotonic_ms", "wall_ms"]

Clock = Callable[[], int]
"""A clock: returns the time in milliseconds."""


def wall_ms() -> int:
    """The machine's wall clock, Unix milliseconds (UTC)."""
    return time.time_ns() // 1_000_000


def monotonic_ms() -> int:
    """The machine's monotonic clock in ms (never steps; only differences mean anything)."""
    return time.monotonic_ns() // 1_000_000
