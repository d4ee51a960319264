"""Repeated log messages counted, not repeated: the first of each is written, the rest counted.

A rule that fails the same way on every candle would write the same warning thousands of times
in a backtest. :class:`Repeats` is a loguru filter that lets the first record of each (level,
bound context, message) through and counts the others; :meth:`Repeats.summary` gives one line
per repeated message with its count, for the end of the run.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

__all__ = ["Repeats"]

_CONTEXT = ("strategy", "rule", "cl_ord_id")


class Repeats:
    """A loguru filter: True for the first record of each message, False (counted) after."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()

    def __call__(self, record: Any) -> bool:
        extra = record["extra"]
        context = " ".join(f"{k}={extra[k]}" for k in _CONTEXT if extra.get(k))
        key = (record["level"].name, f"[{context}] " if context else "", str(record["message"]))
        with self._lock:
            self._counts[key] += 1
            return self._counts[key] == 1

    def summary(self) -> list[str]:
        """One line per message written more than once, most frequent first."""
        with self._lock:
            repeated = [(n, key) for key, n in self._counts.items() if n > 1]
        repeated.sort(key=lambda item: (-item[0], item[1]))
        return [
            f"{level} {context}{message} — {n:,} times in all (shown once)"
            for n, (level, context, message) in repeated
        ]

    def clear(self) -> None:
        """Forget the counts (after the summary is shown)."""
        with self._lock:
            self._counts.clear()
