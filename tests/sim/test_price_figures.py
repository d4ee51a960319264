"""The 24h ticker figures and the price band, computed incrementally, equal a direct computation."""

from __future__ import annotations

import gc
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.sim.orders import PriceBand, band
from botkit.sim.prices import DAY_MS, MINUTE_MS, MinuteCandle, PriceSeries
from tests.sim.conftest import T0, tst_instrument

price = st.integers(1, 400).map(lambda n: Decimal(n) / 4)
step = st.tuples(
    st.integers(0, 3 * MINUTE_MS) | st.integers(0, DAY_MS // 2),  # ms to wait before the move
    price,
    st.integers(0, 3),  # trades booked after the move
)


def brute_day(candles: list[MinuteCandle], cur: MinuteCandle, now: int) -> tuple[object, ...]:
    """The window directly: closed minutes that started after now - 24h, then the current one."""
    window = [c for c in candles if c.sT > now - DAY_MS]
    if not window:
        return (cur.o, cur.h, cur.l, cur.qty, cur.amt, cur.tc)
    high = window[0].h
    low = window[0].l
    for c in window:
        high = c.h if c.h >= high else high  # the monotonic deques keep the latest of equals
        low = c.l if c.l <= low else low
    qty = sum((c.qty for c in window), Decimal(0)) + cur.qty
    amt = sum((c.amt for c in window), Decimal(0)) + cur.amt
    return (
        window[0].o,
        cur.h if cur.h > high else high,
        cur.l if cur.l < low else low,
        qty,
        amt,
        sum(c.tc for c in window) + cur.tc,
    )


@settings(max_examples=80, deadline=None, derandomize=True)
@given(steps=st.lists(step, min_size=1, max_size=60))
def test_day_stats_equal_the_window_computed_directly(
    steps: list[tuple[int, Decimal, int]],
) -> None:
    series = PriceSeries(
        symbol="X",
        start_px=Decimal(50),
        tick=Decimal("0.25"),
        min_px=Decimal("0.25"),
        max_px=Decimal(1000),
        volatility=Decimal(0),
        seed=1,
        history_minutes=4 * 1440,
        now_ms=T0,
    )
    now = T0
    for wait, px, trades in steps:
        now += wait
        series.record(px, now)
        for i in range(trades):
            series.trade(Decimal(i + 1), Decimal(i + 1) * px)
        history = list(series.candles(MINUTE_MS, None, None, 10_000))
        cur = history[-1]
        closed = history[:-1]
        got = series.day_stats(now)
        want = brute_day(closed, cur, now)
        assert [repr(v) for v in got] == [repr(v) for v in want]


def reference_band(
    mark: Decimal, tick: Decimal, rng: Decimal, lo: Decimal, hi: Decimal
) -> tuple[Decimal, Decimal]:
    high = (mark * (1 + rng) / tick).to_integral_value(ROUND_FLOOR) * tick
    low = (mark * (1 - rng) / tick).to_integral_value(ROUND_CEILING) * tick
    return max(low, lo), min(high, hi)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    mark=st.decimals(min_value=Decimal("0.001"), max_value=Decimal(10**7), places=4),
    tick=st.sampled_from(
        [Decimal("0.1"), Decimal("0.5"), Decimal("0.01"), Decimal(3), Decimal("0.3")]
    ),
    rng=st.sampled_from([Decimal("0.05"), Decimal("0.1"), Decimal("0.333"), Decimal("0.9")]),
)
def test_price_band_equals_the_formula(mark: Decimal, tick: Decimal, rng: Decimal) -> None:
    inst = tst_instrument(tSz=tick, ordPxRange=rng, minPx=Decimal(3), maxPx=Decimal(10**6))
    want = reference_band(mark, tick, rng, inst.minPx, inst.maxPx)
    got = PriceBand(inst)(mark)
    assert [repr(v) for v in got] == [repr(v) for v in want]
    assert band(inst, mark) == got


def test_a_minute_that_started_exactly_24h_ago_has_left_the_window() -> None:
    start = T0 - T0 % MINUTE_MS
    series = PriceSeries(
        symbol="X",
        start_px=Decimal(50),
        tick=Decimal(1),
        min_px=Decimal(1),
        max_px=Decimal(1000),
        volatility=Decimal(0),
        seed=1,
        history_minutes=1440,
        now_ms=start,
    )
    series.record(Decimal(90), start + 1)  # the first minute: open 50, high 90
    series.record(Decimal(60), start + MINUTE_MS)
    assert series.day_stats(start + DAY_MS - 1)[:3] == (Decimal(50), Decimal(90), Decimal(50))
    assert series.day_stats(start + DAY_MS)[:3] == (Decimal(60), Decimal(60), Decimal(60))


def test_unread_24h_window_keeps_no_more_than_a_day_of_minutes() -> None:
    """A replay whose rules never reach the 24h figures (gated before them) recorded every
    minute of a year into the window: it now lets go of what no later read can count, and a
    read after three days still gives the last 24 hours."""
    series = PriceSeries(
        symbol="X",
        start_px=Decimal(50),
        tick=Decimal(1),
        min_px=Decimal(1),
        max_px=Decimal(100_000),
        volatility=Decimal(0),
        seed=1,
        history_minutes=60,
        now_ms=T0,
    )
    days = 3
    for minute in range(days * 1440):
        series.record(Decimal(1000 + minute), T0 + minute * MINUTE_MS)
    gc.collect()
    live = sum(type(o) is MinuteCandle for o in gc.get_objects())
    assert live <= 1440 + 60 + 2
    now = T0 + (days * 1440 - 1) * MINUTE_MS
    open_, high, low, *_ = series.day_stats(now)
    assert (open_, high, low) == (Decimal(1000 + 2 * 1440), Decimal(1000 + 3 * 1440 - 1),
                                  Decimal(1000 + 2 * 1440))  # fmt: skip
