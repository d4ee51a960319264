"""The intra-candle path: open, the extreme nearer the open, the other extreme, close."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.backtest.bars import Bar
from botkit.backtest.path import candle_path, series_path

T0 = 1_704_067_200_000
M = 60_000


def bar(o: str, h: str, lo: str, c: str, t: int = T0) -> Bar:
    return Bar(t, Decimal(o), Decimal(h), Decimal(lo), Decimal(c), Decimal(0))


def prices(b: Bar) -> list[str]:
    return [str(p) for _, p in candle_path(b, M)]


@pytest.mark.parametrize(
    ("candle", "expected"),
    [
        (bar("100", "110", "98", "105"), ["100", "98", "110", "105"]),  # low nearer
        (bar("100", "102", "90", "95"), ["100", "102", "90", "95"]),  # high nearer
        (bar("100", "110", "98", "99"), ["100", "98", "110", "99"]),  # bearish, low nearer
        (bar("100", "102", "90", "101"), ["100", "102", "90", "101"]),  # bullish, high nearer
        (bar("100", "110", "90", "105"), ["100", "90", "110", "105"]),  # tie, bullish: low first
        (bar("100", "110", "90", "100"), ["100", "90", "110", "100"]),  # tie, flat: low first
        (bar("100", "110", "90", "95"), ["100", "110", "90", "95"]),  # tie, bearish: high first
        (bar("100", "100", "100", "100"), ["100", "100", "100", "100"]),  # flat candle
        (bar("100", "105", "100", "104"), ["100", "100", "105", "104"]),  # open at the low
        (bar("105", "105", "100", "101"), ["105", "105", "100", "101"]),  # open at the high
    ],
)
def test_path_visits_the_nearer_extreme_first(candle: Bar, expected: list[str]) -> None:
    assert prices(candle) == expected


def test_path_times_are_quarters_inside_the_candle() -> None:
    times = [t for t, _ in candle_path(bar("1", "2", "1", "2"), M)]
    assert times == [T0, T0 + 15_000, T0 + 30_000, T0 + 45_000]
    assert times[-1] < T0 + M  # the next candle's open comes after the close


def test_path_of_an_hour_candle_uses_whole_milliseconds() -> None:
    times = [t for t, _ in candle_path(bar("1", "2", "1", "2"), 3_600_001)]
    assert times == [T0, T0 + 900_000, T0 + 1_800_000, T0 + 2_700_000]


def test_path_always_covers_high_and_low_and_ends_at_close() -> None:
    b = bar("100.5", "130", "70.25", "71")
    points = [p for _, p in candle_path(b, M)]
    assert points[0] == b.open
    assert points[-1] == b.close
    assert {points[1], points[2]} == {b.high, b.low}


def test_series_path_is_time_ordered_across_candles() -> None:
    bars = [bar("100", "101", "99", "100", T0), bar("100", "103", "97", "102", T0 + M)]
    points = list(series_path(bars, M))
    assert len(points) == 8
    assert [t for t, _ in points] == sorted(t for t, _ in points)
    assert points[4] == (T0 + M, Decimal(100))


def test_too_short_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="too short"):
        candle_path(bar("1", "1", "1", "1"), 3)
