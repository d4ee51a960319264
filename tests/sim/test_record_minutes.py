"""Whole minutes recorded as their candles, and the 24h high read without a change, equal the
points recorded one by one and the ticker's own figure.

:meth:`PriceSeries.record_minutes` (the backtest's quiet stretches: :meth:`SimEngine.
pass_minutes`) records each minute's candle at once instead of its four path points; the
series it leaves — every minute candle (values and exponents), the 24h window, the mark —
is the one :meth:`PriceSeries.record_many` leaves with the points, whichever extreme comes
first. :meth:`PriceSeries.high_24h` is :meth:`PriceSeries.day_stats`' high, read without
dropping anything.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderRequest
from botkit.sim.port import SimPort
from botkit.sim.prices import DAY_MS, MINUTE_MS, PriceSeries
from tests.sim.conftest import BTC
from tests.sim.conftest import T0 as _T0

T0 = _T0 - _T0 % MINUTE_MS

# a price written with 1 or 2 places: equal values with other exponents (60.5 and 60.50)
price = st.builds(
    lambda n, wide: Decimal(n) / 2 if not wide else (Decimal(n) / 2).quantize(Decimal("0.01")),
    st.integers(100, 130),
    st.booleans(),
)


@st.composite
def minute(draw: st.DrawFn) -> tuple[int, Decimal, Decimal, Decimal, Decimal, bool]:
    """(minutes after the last one, open, high, low, close, the low first): a consistent
    candle, its open or close often at an extreme."""
    values = sorted(draw(st.lists(price, min_size=4, max_size=4)))
    low, high = values[0], values[3]
    open_ = draw(st.sampled_from(values))
    close = draw(st.sampled_from(values))
    if draw(st.booleans()):  # an extreme's value written otherwise by the open
        open_ = draw(st.sampled_from([low, high])).quantize(Decimal("0.001"))
    gap = draw(st.sampled_from([1, 1, 1, 2, 30, 1440, 2000]))
    return gap, open_, high, low, close, draw(st.booleans())


def _series() -> PriceSeries:
    return PriceSeries(
        symbol="X",
        start_px=Decimal(60),
        tick=Decimal("0.01"),
        min_px=Decimal("0.01"),
        max_px=Decimal(1000),
        volatility=Decimal(0),
        seed=1,
        history_minutes=3000,
        now_ms=T0,
    )


def _state(series: PriceSeries, now: int) -> tuple[object, ...]:
    candles = [(c.sT, repr(c.o), repr(c.h), repr(c.l), repr(c.c)) for c in series.since(0)]
    day = series.day_stats(now)
    return candles, repr(series.mark), tuple(repr(v) for v in day)


def _record_points(
    series: PriceSeries, minutes: list[tuple[int, Decimal, Decimal, Decimal, Decimal, bool]]
) -> list[tuple[int, Decimal, Decimal, Decimal, Decimal]]:
    """Record the four points of each of ``minutes`` into ``series``; their rows (start, open,
    high, low, close)."""
    t = T0
    rows = []
    for gap, o, h, lo, c, low_first in minutes:
        t += gap * MINUTE_MS
        first, second = (lo, h) if low_first else (h, lo)
        series.record_many([(t, o), (t + 15_000, first), (t + 30_000, second), (t + 45_000, c)])
        rows.append((t, o, h, lo, c))
    return rows


@settings(max_examples=300, deadline=None, derandomize=True)
@given(minutes=st.lists(minute(), min_size=1, max_size=40), split=st.integers(0, 40))
def test_minutes_recorded_whole_leave_the_series_of_their_points(
    minutes: list[tuple[int, Decimal, Decimal, Decimal, Decimal, bool]], split: int
) -> None:
    by_points, whole = _series(), _series()
    rows = _record_points(by_points, minutes)
    t = rows[-1][0]
    for part in (rows[:split], rows[split:]):  # in two calls, as blocks of a stretch are
        whole.record_minutes(
            [r[0] for r in part],
            [r[1] for r in part],
            [r[2] for r in part],
            [r[3] for r in part],
            [r[4] for r in part],
        )
    for now in (t + MINUTE_MS, t + DAY_MS // 2, t + DAY_MS):
        assert _state(whole, now) == _state(by_points, now)


def test_a_minute_not_to_record_whole_is_refused_and_nothing_moves() -> None:
    series = _series()
    before = _state(series, T0 + MINUTE_MS)
    t = T0 + MINUTE_MS
    high, low = Decimal(62), Decimal(60)
    for at, open_, close in (
        (t + 1, Decimal(61), Decimal(61)),  # not a minute's start
        (T0, Decimal(61), Decimal(61)),  # the current minute
        (t, Decimal(61), Decimal(63)),  # a close above the high
        (t, Decimal(59), Decimal(61)),  # an open under the low
    ):
        with pytest.raises(ValueError, match="not one to record whole"):
            series.record_minutes([t, at], [open_] * 2, [high] * 2, [low] * 2, [close] * 2)
        assert _state(series, T0 + MINUTE_MS) == before


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    moves=st.lists(
        st.tuples(st.integers(1, 3 * MINUTE_MS) | st.integers(0, DAY_MS // 3), price),
        min_size=1,
        max_size=60,
    ),
    later=st.integers(0, 2 * DAY_MS),
)
def test_the_24h_high_read_without_a_change_is_the_tickers(
    moves: list[tuple[int, Decimal]], later: int
) -> None:
    series = _series()
    t = T0
    for wait, px in moves:
        t += wait
        series.record(px, t)
    starts = [c.sT for c in series.since(0)]
    # now, later, and exactly when each minute leaves the window (and a ms either side)
    nows = sorted(
        {t, t + later, *(s + DAY_MS + d for s in starts for d in (-1, 0, 1) if s + DAY_MS + d >= t)}
    )
    for now in nows:  # in time order, as reads come
        high = series.high_24h(now)
        assert high == series.high_24h(now) == series.day_stats(now)[1]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(minutes=st.lists(minute(), min_size=1, max_size=40))
def test_minutes_recorded_whole_drop_from_the_window_what_their_points_drop(
    minutes: list[tuple[int, Decimal, Decimal, Decimal, Decimal, bool]],
) -> None:
    """Not only what a read sees: the 24h window holds the same minutes right after (the
    minutes that left it go within the call, not at the next read: a replay that never reads
    the window keeps a day of minutes, not the year)."""
    by_points, whole = _series(), _series()
    by_points.trade(Decimal(2), Decimal(120))  # the current minute traded in: its sums count
    whole.trade(Decimal(2), Decimal(120))
    rows = _record_points(by_points, minutes)
    whole.record_minutes(*(list(column) for column in zip(*rows, strict=True)))
    whole.record_minutes([], [], [], [], [])  # nothing recorded: nothing closed, nothing goes

    def window(series: PriceSeries) -> tuple[object, ...]:
        return (
            [c.sT for c in series._day],
            [c.sT for c in series._day_max],
            [c.sT for c in series._day_min],
            repr(series._day_qty),
            repr(series._day_amt),
            series._day_tc,
        )

    assert window(whole) == window(by_points)


@pytest.mark.parametrize(
    ("opens", "highs", "lows", "closes"),
    [
        (["60000", "59600"], ["60010", "59700"], ["59990", "59000"], ["60000", "59650"]),
        (["60000", "59000"], ["60010", "59700"], ["59990", "59600"], ["60000", "59650"]),
        (["60000", "59650"], ["60010", "59700"], ["59990", "59600"], ["60000", "59000"]),
        (["60000", "61500"], ["60010", "59700"], ["59990", "59600"], ["60000", "59650"]),
    ],
    ids=["low at the bid", "open under its low", "close under its low", "open over its high"],
)
def test_minutes_reaching_the_band_or_not_whole_are_refused_and_nothing_moves(
    make_sim: Any, opens: list[str], highs: list[str], lows: list[str], closes: list[str]
) -> None:
    """:meth:`SimEngine.pass_minutes` moves nothing when a price would reach a resting order
    (a low at the bid) or when an open or close lies outside its candle's low and high, below
    the bid or above the ask as it may be (refused whole: the replay then records its points,
    through the matcher)."""
    sim = make_sim()
    SimPort(sim.engine).place_orders([
        OrderRequest.model_validate(
            {"symbol": BTC, "side": side, "type": "LIMIT", "sz": "1", "px": px, "clOrdId": name}
        )
        for side, px, name in (("BUY", "59000", "b1"), ("SELL", "61000", "s1"))
    ])  # fmt: skip
    engine = sim.engine
    series = engine.prices[BTC]
    start = series.current.sT + MINUTE_MS

    def state() -> tuple[object, ...]:
        minutes = [(c.sT, c.o, c.h, c.l, c.c) for c in series.since(0)]
        return series.mark, minutes, series.day_stats(start), engine.mark_rev

    before = state()
    with pytest.raises(ValueError, match=r"outside the band|not one to record whole"):
        engine.pass_minutes(
            BTC,
            [start, start + MINUTE_MS],
            [Decimal(v) for v in opens],
            [Decimal(v) for v in highs],
            [Decimal(v) for v in lows],
            [Decimal(v) for v in closes],
            8,
        )
    assert state() == before
