"""The 24h window :meth:`PriceSeries.record_minutes` leaves, read at every cutoff.

``record_minutes`` adds its closed minutes to the window's highs and lows at once
(:meth:`PriceSeries._add_closed`) instead of one minute at a time. The window is read here at
each minute of the day after the last one — every minute that can become the window's
oldest — so that every minute the highs' and lows' deques hold shows through the public
reads (:meth:`PriceSeries.day_stats`, :meth:`PriceSeries.high_24h`), with the exponents of
equal values telling which of equal minutes stayed.
"""

from __future__ import annotations

from decimal import Decimal
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.sim.prices import DAY_MS, MINUTE_MS, PriceSeries
from tests.sim.conftest import T0 as _T0

T0 = _T0 - _T0 % MINUTE_MS

# few values, each written two ways (61 and 61.0): equal highs and lows are frequent, and which
# of them stayed shows in the figure's exponent
value = st.builds(
    lambda n, wide: Decimal(n).quantize(Decimal("0.1")) if wide else Decimal(n),
    st.integers(60, 63),
    st.booleans(),
)


@st.composite
def minute(draw: st.DrawFn) -> tuple[Decimal, Decimal, Decimal, Decimal]:
    """(open, high, low, close) of a consistent candle."""
    values = sorted(draw(st.lists(value, min_size=4, max_size=4)))
    low, high = values[0], values[-1]
    return draw(st.sampled_from(values)), high, low, draw(st.sampled_from(values))


def _series() -> PriceSeries:
    return PriceSeries(
        symbol="X",
        start_px=Decimal(61),
        tick=Decimal("0.1"),
        min_px=Decimal("0.1"),
        max_px=Decimal(1000),
        volatility=Decimal(0),
        seed=1,
        history_minutes=100,
        now_ms=T0,
    )


def _reads(series: PriceSeries, last: int, count: int) -> list[tuple[str, ...]]:
    """The 24h figures at each minute from the last one recorded until the first of
    ``count`` minutes leaves the window (read without dropping first, then with)."""
    out: list[tuple[str, ...]] = []
    for k in range(count + 2):
        now = last + DAY_MS - (count - k) * MINUTE_MS
        out.append((repr(series.high_24h(now)),))
    for k in range(count + 2):
        now = last + DAY_MS - (count - k) * MINUTE_MS
        out.append(tuple(repr(v) for v in series.day_stats(now)))
    return out


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    minutes=st.lists(minute(), min_size=1, max_size=30),
    cuts=st.lists(st.integers(0, 30), max_size=3),
)
def test_the_window_of_minutes_recorded_whole_is_that_of_their_points(
    minutes: list[tuple[Decimal, Decimal, Decimal, Decimal]], cuts: list[int]
) -> None:
    by_points, whole = _series(), _series()
    times = [T0 + (k + 1) * MINUTE_MS for k in range(len(minutes))]
    for t, (o, h, lo, c) in zip(times, minutes, strict=True):
        by_points.record_many([(t, o), (t + 15_000, h), (t + 30_000, lo), (t + 45_000, c)])
    bounds = sorted({0, len(minutes), *(min(c, len(minutes)) for c in cuts)})
    for a, b in pairwise(bounds):  # in parts, as blocks of a stretch are
        part = list(zip(times[a:b], minutes[a:b], strict=True))
        whole.record_minutes(
            [t for t, _ in part],
            [m[0] for _, m in part],
            [m[1] for _, m in part],
            [m[2] for _, m in part],
            [m[3] for _, m in part],
        )
    assert _reads(whole, times[-1], len(minutes)) == _reads(by_points, times[-1], len(minutes))
