"""Prices of one instrument: the mark, its seeded random walk, minute candles and 24h figures.

The engine moves the mark either by :meth:`PriceSeries.walk` (a seeded Gaussian random walk on
the tick grid, deterministic for a seed and a clock schedule) or directly (``set_mark``; the
backtest replays candles that way). Every move is recorded in the current minute candle; a
bounded deque keeps ``candle_history_minutes`` of them, from which ``/v3/market/candles`` builds
any interval and the 24h open/high/low of the tickers come from sliding-window deques in O(1).
Index price = mark; last price = mark. Minutes in which the price never moved have no candle.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from botkit.timeparse import CANDLE_WORDS

__all__ = ["INTERVALS", "MinuteCandle", "PriceSeries", "candle_row", "interval_ms", "to_tick"]

MINUTE_MS = 60_000
DAY_MS = 86_400_000
_WEEK_MS = 7 * DAY_MS
_MONDAY_OFFSET_MS = 4 * DAY_MS  # 1970-01-01 was a Thursday; weeks start on Monday (UTC)
_ZERO = Decimal(0)

INTERVALS: dict[str, int] = CANDLE_WORDS
"""The candle words served, by width in ms (one table: :data:`botkit.timeparse.CANDLE_WORDS`)."""


def interval_ms(word: str) -> int | None:
    """The width of a candle interval word (any letter case), or None when unknown."""
    return INTERVALS.get(word.upper())


def to_tick(px: Decimal, tick: Decimal) -> Decimal:
    """The multiple of ``tick`` nearest to ``px`` (half to even)."""
    return (px / tick).to_integral_value(ROUND_HALF_EVEN) * tick


@dataclass(slots=True)
class MinuteCandle:
    """One minute of the mark: open/high/low/close plus the account's own traded volume."""

    sT: int
    o: Decimal
    h: Decimal
    l: Decimal  # noqa: E741 - the wire name
    c: Decimal
    qty: Decimal
    amt: Decimal
    tc: int


class PriceSeries:
    """Mark, index and candle history of one symbol."""

    def __init__(
        self,
        *,
        symbol: str,
        start_px: Decimal,
        tick: Decimal,
        min_px: Decimal,
        max_px: Decimal,
        volatility: Decimal,
        seed: int,
        history_minutes: int,
        now_ms: int,
    ) -> None:
        self.symbol = symbol
        self.tick = tick
        self.min_px = min_px
        self.max_px = max_px
        self.mark = start_px
        self._vol = float(volatility)
        self._rng = random.Random(f"{seed}:{symbol}")  # noqa: S311 - a price model, not security
        self._history: deque[MinuteCandle] = deque(maxlen=history_minutes)
        self._day: deque[MinuteCandle] = deque()
        self._day_max: deque[MinuteCandle] = deque()
        self._day_min: deque[MinuteCandle] = deque()
        self._day_qty = Decimal(0)
        self._day_amt = Decimal(0)
        self._day_tc = 0
        self._cur = self._new_candle(now_ms - now_ms % MINUTE_MS, start_px)

    # --- moving the price ------------------------------------------------------------------
    def record(self, px: Decimal, now_ms: int) -> None:
        """The mark is now ``px``: update the minute candle."""
        self.mark = px
        cur = self._cur
        if now_ms - cur.sT >= MINUTE_MS:  # a new minute (inlined: once a minute per symbol)
            self._close_minute(cur)
            fresh = MinuteCandle(now_ms - now_ms % MINUTE_MS, px, px, px, px, _ZERO, _ZERO, 0)
            self._history.append(fresh)
            self._cur = fresh
            return
        if px > cur.h:
            cur.h = px
        elif px < cur.l:
            cur.l = px
        cur.c = px

    def record_many(self, points: Iterable[tuple[int, Decimal]]) -> None:
        """:meth:`record` of each ``(ms, price)`` in turn (the same steps, without a call per
        point: the backtest records four points a candle)."""
        cur = self._cur
        px = self.mark
        for now_ms, px in points:
            if now_ms - cur.sT >= MINUTE_MS:
                self._close_minute(cur)
                cur = MinuteCandle(now_ms - now_ms % MINUTE_MS, px, px, px, px, _ZERO, _ZERO, 0)
                self._history.append(cur)
                self._cur = cur
                continue
            if px > cur.h:
                cur.h = px
            elif px < cur.l:
                cur.l = px
            cur.c = px
        self.mark = px

    def record_minutes(
        self,
        times: Sequence[int],
        opens: Sequence[Decimal],
        highs: Sequence[Decimal],
        lows: Sequence[Decimal],
        closes: Sequence[Decimal],
    ) -> None:
        """:meth:`record_many` of each minute's path — its open at ``times[i]`` (the minute's
        start), its two extremes in either order and its close, every point inside that minute
        — for minutes after the current one, each candle consistent (``low <= open, close <=
        high``). Each minute's candle is then its open, the high (the open when equal: the
        first of equal points stays), the low (likewise) and the close, whichever extreme came
        first; the same candles, window and mark as the points recorded one by one. Raises
        ValueError, recording nothing, when a time is not a minute's start after the current
        minute or a candle is not consistent (record the points then)."""
        cur = self._cur
        last = cur.sT
        for t, o, h, lo, c in zip(times, opens, highs, lows, closes, strict=True):
            if t % MINUTE_MS or t - last < MINUTE_MS or not (lo <= o <= h and lo <= c <= h):
                raise ValueError(f"record_minutes: the candle at {t} is not one to record whole")
            last = t
        # the current minute (perhaps traded in) is closed as ever; the minutes recorded here,
        # traded in by no one, join the window and those that left it go once, at the last
        # minute closed: each minute's own cutoff is earlier and the window's deques only drop
        # their oldest, so the same minutes go in the same order (the day's traded sums too)
        if not times:
            self.mark = cur.c
            return
        self._close_minute(cur)
        minutes = [
            MinuteCandle(t, o, o if o == h else h, o if o == lo else lo, c, _ZERO, _ZERO, 0)
            for t, o, h, lo, c in zip(times, opens, highs, lows, closes, strict=True)
        ]
        self._history.extend(minutes)
        # every minute but the last (the current one now) is closed: :meth:`_add_minute` of
        # each in turn, at once (untraded: the day's sums stay; see :meth:`_add_closed`)
        closed = minutes[:-1]
        if closed:
            self._add_closed(closed)
            done = closed[-1]
            day = self._day
            if day[0].sT <= done.sT - DAY_MS:
                self._expire(done.sT - DAY_MS)
        cur = minutes[-1]
        self._cur = cur
        self.mark = cur.c

    def walk(self, steps: int, step_ms: int) -> Decimal:
        """The mark after ``steps`` random-walk steps of ``step_ms`` (one Gaussian draw)."""
        if self._vol == 0 or steps <= 0:
            return self.mark
        sigma = self._vol * math.sqrt(steps * step_ms / MINUTE_MS)
        factor = max(0.5, 1.0 + self._rng.gauss(0.0, sigma))
        px = to_tick(self.mark * Decimal(factor), self.tick)
        return min(max(px, self.min_px, self.tick), self.max_px)

    def trade(self, qty: Decimal, amt: Decimal) -> None:
        """Count the account's own execution in the current candle and the 24h volume."""
        cur = self._cur
        cur.qty += qty
        cur.amt += amt
        cur.tc += 1

    # --- saving and restoring (the paper account's state file, botkit.sim.state) ---------
    @property
    def current(self) -> MinuteCandle:
        """The candle of the minute the mark last moved in (its close is the mark)."""
        return self._cur

    def since(self, start_ms: int) -> list[MinuteCandle]:
        """The kept minute candles that start at or after ``start_ms``, oldest first."""
        out: list[MinuteCandle] = []
        for candle in reversed(self._history):
            if candle.sT < start_ms:
                break
            out.append(candle)
        out.reverse()
        return out

    @property
    def oldest_ms(self) -> int:
        """The start of the oldest minute candle kept."""
        return self._history[0].sT

    def restore(self, candles: list[MinuteCandle], seed: str) -> None:
        """Continue from saved minute candles (oldest first; the last one is the current minute,
        its close the mark), with the random walk reseeded from ``seed``: the 24h window is
        rebuilt as if the minutes had passed here."""
        kept = candles[-(self._history.maxlen or len(candles)) :]
        if not kept:
            return
        self._history.clear()
        self._day.clear()
        self._day_max.clear()
        self._day_min.clear()
        self._day_qty = self._day_amt = _ZERO
        self._day_tc = 0
        for candle in kept[:-1]:
            self._history.append(candle)
            self._close_minute(candle)
        self._cur = kept[-1]
        self._history.append(self._cur)
        self.mark = self._cur.c
        self._rng = random.Random(seed)  # noqa: S311 - a price model, not security

    # --- reading -------------------------------------------------------------------------
    def day_stats(self, now_ms: int) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal, int]:
        """(open, high, low, qty, amt, trade count) over the last 24 hours, current minute in."""
        cutoff = now_ms - DAY_MS
        day = self._day
        if day and day[0].sT <= cutoff:
            self._expire(cutoff)
        cur = self._cur
        if not day:
            open_, high, low = cur.o, cur.h, cur.l
        else:  # max() and min() keep the first of equals: the closed minutes' figure
            open_, high, low = day[0].o, self._day_max[0].h, self._day_min[0].l
            if cur.h > high:
                high = cur.h
            if cur.l < low:
                low = cur.l
        if not cur.tc:  # nothing traded this minute: its qty and amt are exactly 0
            return open_, high, low, self._day_qty, self._day_amt, self._day_tc
        return (
            open_,
            high,
            low,
            self._day_qty + cur.qty,
            self._day_amt + cur.amt,
            self._day_tc + cur.tc,
        )

    def high_24h(self, now_ms: int) -> Decimal:
        """The high of :meth:`day_stats` at ``now_ms`` (the same value), read without dropping
        the minutes that left the window (nothing changes)."""
        cutoff = now_ms - DAY_MS
        high = self._cur.h
        for candle in self._day_max:  # highs falling, starts rising: the first inside is the top
            if candle.sT > cutoff:
                return candle.h if candle.h >= high else high
        return high

    def _expire(self, cutoff: int) -> None:
        """Drop the closed minutes that started at or before ``cutoff`` from the 24h window."""
        day = self._day
        while day and day[0].sT <= cutoff:
            gone = day.popleft()
            if gone.tc:
                self._day_qty -= gone.qty
                self._day_amt -= gone.amt
                self._day_tc -= gone.tc
        while self._day_max and self._day_max[0].sT <= cutoff:
            self._day_max.popleft()
        while self._day_min and self._day_min[0].sT <= cutoff:
            self._day_min.popleft()

    def candles(
        self, interval_ms: int, start: int | None, end: int | None, limit: int
    ) -> list[MinuteCandle]:
        """Candles of ``interval_ms`` (``sT`` = bucket start), oldest first.

        The most recent ``limit`` buckets in ``[start, end]``; with only ``start`` given, the
        first ``limit`` buckets from ``start``. Rows for the wire: :func:`candle_row`.
        """
        buckets: list[MinuteCandle] = []
        # with a start, only the newest minutes: walk back to it, not through the whole week
        minutes: Iterable[MinuteCandle] = self._history if start is None else self.since(start)
        for m in minutes:
            b = _bucket(m.sT, interval_ms)
            if (start is not None and b < start) or (end is not None and b > end):
                continue
            if buckets and buckets[-1].sT == b:
                agg = buckets[-1]
                agg.h = max(agg.h, m.h)
                agg.l = min(agg.l, m.l)
                agg.c = m.c
                agg.qty += m.qty
                agg.amt += m.amt
                agg.tc += m.tc
            else:
                buckets.append(MinuteCandle(b, m.o, m.h, m.l, m.c, m.qty, m.amt, m.tc))
        return buckets[:limit] if start is not None and end is None else buckets[-limit:]

    # --- internals -----------------------------------------------------------------------
    def _new_candle(self, start_ms: int, px: Decimal) -> MinuteCandle:
        candle = MinuteCandle(start_ms, px, px, px, px, _ZERO, _ZERO, 0)
        self._history.append(candle)
        return candle

    def _close_minute(self, done: MinuteCandle) -> None:
        # the minutes no later read can count (each read's cutoff is past done.sT - 24h) go
        # now: when nothing reads the 24h figures (a rule gated before them), the window would
        # otherwise keep every minute of a year-long replay
        day = self._day
        if day and day[0].sT <= done.sT - DAY_MS:
            self._expire(done.sT - DAY_MS)
        self._add_minute(done)

    def _add_minute(self, done: MinuteCandle) -> None:
        """Add the closed minute ``done`` to the 24h window (:meth:`_close_minute` without the
        expiry before it)."""
        day = self._day
        day.append(done)
        if done.tc:  # a minute without trades adds nothing (its qty and amt are exactly 0)
            self._day_qty += done.qty
            self._day_amt += done.amt
            self._day_tc += done.tc
        day_max = self._day_max
        while day_max and day_max[-1].h <= done.h:
            day_max.pop()
        day_max.append(done)
        day_min = self._day_min
        while day_min and day_min[-1].l >= done.l:
            day_min.pop()
        day_min.append(done)

    def _add_closed(self, closed: Sequence[MinuteCandle]) -> None:
        """:meth:`_add_minute` of each of ``closed`` (untraded minutes, oldest first) in turn,
        worked out at once: the window gains them all; of the highs' deque (highs falling) a
        minute stays when its high is above every later one's — an earlier one's above the
        highest of ``closed``, one of ``closed`` above those after it — as the pops of one
        minute at a time leave it (``<=``: the later of equal highs stays); the lows' deque
        likewise."""
        self._day.extend(closed)
        top = bottom = closed[-1]
        highs = [top]  # newest first: the minutes of ``closed`` that stay, then reversed
        lows = [bottom]
        high, low = top.h, bottom.l
        for minute in reversed(closed):
            if minute.h > high:
                high = minute.h
                highs.append(minute)
            if minute.l < low:
                low = minute.l
                lows.append(minute)
        day_max, day_min = self._day_max, self._day_min
        while day_max and day_max[-1].h <= high:
            day_max.pop()
        highs.reverse()
        day_max.extend(highs)
        while day_min and day_min[-1].l >= low:
            day_min.pop()
        lows.reverse()
        day_min.extend(lows)


def candle_row(c: MinuteCandle, interval_ms: int) -> list[str | int]:
    """The notes' row order: ``[low, high, open, close, amt, qty, tC, sT, cT]``."""
    return [
        format(c.l, "f"),
        format(c.h, "f"),
        format(c.o, "f"),
        format(c.c, "f"),
        format(c.amt, "f"),
        format(c.qty, "f"),
        c.tc,
        c.sT,
        c.sT + interval_ms - 1,
    ]


def _bucket(start_ms: int, interval_ms: int) -> int:
    if interval_ms == _WEEK_MS:
        return (start_ms - _MONDAY_OFFSET_MS) // _WEEK_MS * _WEEK_MS + _MONDAY_OFFSET_MS
    return start_ms - start_ms % interval_ms
