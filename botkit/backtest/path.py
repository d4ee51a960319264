"""The price path the backtest plays inside one candle: four (time, price) points.

A candle only says where the price opened, closed and how far it went. The backtest assumes
the shortest walk that visits both extremes:

1. ``t``        — the open;
2. ``t + ¼·i``  — the extreme *nearer the open* (low if ``open - low < high - open``);
3. ``t + ½·i``  — the other extreme;
4. ``t + ¾·i``  — the close;

where ``t`` is the candle's open time and ``i`` the interval (integer ms, ``i // 4`` steps).
The next candle's open follows at ``t + i``. Tie (the open exactly midway): a bullish or flat
candle (``close >= open``) visits the low first, a bearish one the high first — the order that
ends nearer the close, so the walk stays shortest. The path always has four points, even
when some coincide (``open == low`` …): setting the same mark twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal

from botkit.backtest.bars import Bar

__all__ = ["MIN_INTERVAL_MS", "PathPoint", "candle_path", "series_path"]

PathPoint = tuple[int, Decimal]
"""(Unix ms, price)."""

MIN_INTERVAL_MS = 4
"""The shortest interval with four distinct whole-ms points (the loader refuses shorter)."""


def candle_path(bar: Bar, interval_ms: int) -> tuple[PathPoint, PathPoint, PathPoint, PathPoint]:
    """The four points of ``bar``: open, nearer extreme, other extreme, close."""
    if interval_ms < MIN_INTERVAL_MS:
        raise ValueError(f"interval {interval_ms} ms is too short for a four-point path")
    t, o, h, lo, c, _ = bar
    step = interval_ms // 4
    if o - lo < h - o or (o - lo == h - o and c >= o):
        first, second = lo, h
    else:
        first, second = h, lo
    return ((t, o), (t + step, first), (t + 2 * step, second), (t + 3 * step, c))


def series_path(bars: Iterable[Bar], interval_ms: int) -> Iterator[PathPoint]:
    """Every path point of ``bars``, in time order."""
    for bar in bars:
        yield from candle_path(bar, interval_ms)
