"""The candles whose path may reach the band, worked out a block at a time (issue 20).

:class:`~botkit.backtest.columns.PathReach` keeps the last block of path floats and answers
each check from it: the replay's bulk stretches check the same candles ahead again and again.
It must answer as the floats of the candles themselves do, whatever the block size, the
order of the checks and the blocks they cross.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from botkit.backtest.bars import Bar
from botkit.backtest.columns import BarColumns, PathReach

T0 = 1_704_067_200_000
M = 60_000


@st.composite
def candles(draw: st.DrawFn) -> list[Bar]:
    count = draw(st.integers(1, 40))
    bars = []
    for i in range(count):
        prices = sorted(Decimal(draw(st.integers(0, 40))) / 4 for _ in range(4))
        low, a, b, high = prices
        opened, closed = (a, b) if draw(st.booleans()) else (b, a)
        bars.append(Bar(T0 + i * M, opened, high, low, closed, Decimal(1)))
    return bars


def _first(bars: list[Bar], start: int, end: int, low: float, high: float) -> int:
    """The plain answer: candle by candle, the path's lowest and highest point as floats."""
    for i in range(start, min(end, len(bars))):
        bar = bars[i]
        lowest = float(min(bar.open, bar.high, bar.low, bar.close))
        highest = float(max(bar.open, bar.high, bar.low, bar.close))
        if lowest <= low or highest >= high or lowest <= 0.0:
            return i
    return end


@given(
    candles(),
    st.integers(1, 9),
    st.lists(
        st.tuples(
            st.integers(0, 45),
            st.integers(0, 45),
            st.integers(-4, 44).map(lambda n: n / 4),
            st.integers(0, 48).map(lambda n: n / 4),
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_the_first_candle_reaching_the_band_is_the_plain_one(
    bars: list[Bar], block: int, checks: list[tuple[int, int, float, float]]
) -> None:
    columns = BarColumns.from_bars(bars)
    reach = PathReach(columns, block)
    for start, span, low, high in checks:
        start = min(start, len(bars))
        end = min(len(bars), start + span)
        assert reach.first(start, end, low, high) == _first(bars, start, end, low, high)


def test_the_band_at_infinity_reaches_no_candle() -> None:
    bars = [
        Bar(T0 + i * M, Decimal(2), Decimal(3), Decimal(1), Decimal(2), Decimal(0))
        for i in range(10)
    ]
    reach = PathReach(BarColumns.from_bars(bars), 4)
    assert reach.first(0, 10, float("-inf"), float("inf")) == 10
    assert reach.first(3, 9, 1.0, float("inf")) == 3
    assert reach.first(5, 10, float("-inf"), 3.0) == 5
