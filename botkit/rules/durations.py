"""Durations as operators write them (``30s``, ``10m``, ``1h30m``, ``1d``) ↔ milliseconds.

The grammar is the one span grammar of :mod:`botkit.timeparse` (the same text means the same
length in a strategy, an ``--interval`` and an age such as ``--since 7d``); here it gets the
strategies' bounds (at least 1 ms, at most a year) and their messages."""

from __future__ import annotations

from functools import lru_cache

from botkit.timeparse import UNIT_MS, span_ms

__all__ = ["DurationError", "format_duration", "parse_duration"]

MAX_MS = 366 * 86_400_000
"""The longest duration a strategy may use (a year and a day)."""


class DurationError(ValueError):
    """The text is not a duration; the message says how to write one."""


@lru_cache(maxsize=1024)
def parse_duration(text: str) -> int:
    """``"1h30m"`` → 5_400_000. Units: ms, s, m, h, d, w; at least 1 ms, at most a year."""
    total = span_ms(text)
    if total is None:
        raise DurationError(
            f"{text!r} is not a duration — write a number and a unit, e.g. 30s, 10m, 1h30m, 1d"
        )
    if total <= 0:
        raise DurationError(f"{text!r} is zero — a duration must be at least 1ms")
    if total > MAX_MS:
        raise DurationError(f"{text!r} is longer than a year — use at most 366d")
    return total


def format_duration(ms: int) -> str:
    """The shortest exact spelling: 5_400_000 → ``"1h30m"``, 1500 → ``"1s500ms"``."""
    if ms <= 0:
        return "0s"
    parts: list[str] = []
    rest = ms
    for unit in ("d", "h", "m", "s", "ms"):
        size = UNIT_MS[unit]
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
