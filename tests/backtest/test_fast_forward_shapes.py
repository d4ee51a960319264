"""Passing quiet stretches at once over candle files of other shapes (review rv-perf).

The property test (``test_fast_forward.py``) draws minute candles on minute boundaries from
``T0``; these runs compare the same three replays (no skip, the skip a candle at a time, the
fast-forward) over 5-minute and hourly candles with gaps and a start in the middle of an hour,
strategies of different periods reading the 24-hour figures when a gate opens after a
stretch, and minute candles that open half a minute past the minute (every point of a
stretch is recorded then: they are handed to the simulator a block at a time, so a long
stretch does not hold four points per candle at once).
"""

from __future__ import annotations

import functools
import random
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

from botkit.backtest.columns import CHUNK
from botkit.backtest.setup import BacktestOptions
from botkit.sim.engine import SimEngine
from tests.backtest import test_fast_forward
from tests.backtest.test_fast_forward import _same_three_ways

T0 = 1_704_067_200_000
MINUTE = 60_000

DAY_READER = (
    "strategy: day\nsymbol: BTC_USDT_PERP\nevery: 5m\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: enter\n    when: position.qty == 0\n"
    "    place: {order: {side: BUY, type: MARKET, sz: 1}}\n"
    "    cooldown: 3h\n"
    "  - name: offer\n    when: position.qty > 0 and strategy.open_orders == 0\n"
    "    place: {order: {side: SELL, px: price.mark * 1.02 + (price.high_24h - price.low_24h)"
    " / 10 + price.volume_24h / 1000, sz: 1}}\n"
    "    max_fires: {count: 1, per: 700m}\n"
)
HOURLY = (
    "strategy: hourly\nsymbol: BTC_USDT_PERP\nevery: 1h\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: bid\n    when: position.qty == 0 and strategy.open_orders == 0\n"
    "    place: {order: {side: BUY, px: price.low_24h, sz: 1}}\n"
    "    max_fires: {count: 1, per: 1d}\n"
    "  - name: leave\n    when: position.qty > 0 and close('1h') < open('1h') * 0.999\n"
    "    close: {}\n"
)
RESTING = (
    "strategy: rest\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: bid\n    when: position.qty == 0 and strategy.open_orders == 0\n"
    "    place: {order: {side: BUY, px: price.mark * 0.96, sz: 1}}\n"
)


def _walk(count: int, interval: int, *, start: int, seed: int, gaps: bool, flat: float) -> str:
    """A random walk of ``count`` candles of ``interval`` ms from ``start``, mostly flat
    (``flat``: the share of candles that do not move), with gaps when asked."""
    rng = random.Random(seed)
    rows = ["time,open,high,low,close,volume"]
    price = Decimal(60000)
    t = start
    for _ in range(count):
        if gaps and rng.random() < 0.02:
            t += interval * rng.randint(1, 40)
        o = price
        if rng.random() < flat:
            c = h = lo = o
        else:
            c = (o * (1 + Decimal(rng.randint(-40, 40)) / 10_000)).quantize(Decimal("0.1"))
            wick = Decimal(rng.randint(0, 40)) / 10_000
            h = (max(o, c) * (1 + wick)).quantize(Decimal("0.1"))
            lo = (min(o, c) * (1 - wick)).quantize(Decimal("0.1"))
        rows.append(f"{t},{o},{h},{lo},{c},{rng.randint(1, 9)}")
        price = c
        t += interval
    return "\n".join(rows) + "\n"


def test_five_minute_and_hourly_candles_with_gaps_from_mid_hour(tmp_path: Path) -> None:
    start = T0 + 37 * MINUTE
    runs = ((5 * MINUTE, 900, [DAY_READER, HOURLY]), (60 * MINUTE, 300, [DAY_READER, RESTING]))
    for interval, count, texts in runs:
        csv = _walk(count, interval, start=start, seed=interval, gaps=True, flat=0.7)
        where = tmp_path / str(interval)
        where.mkdir()
        gaps_allowed = functools.partial(BacktestOptions, allow_gaps=True)
        with mock.patch.object(test_fast_forward, "BacktestOptions", gaps_allowed):
            _, _, passed = _same_three_ways(where, texts, csv, short_history=True)
        assert passed > count // 2


def test_minute_candles_off_the_minute_are_passed_a_block_at_a_time(tmp_path: Path) -> None:
    count = CHUNK + 600
    csv = _walk(count, MINUTE, start=T0 + MINUTE // 2, seed=5, gaps=False, flat=0.9)
    sizes: list[int] = []
    real = SimEngine.pass_quietly

    def counted(self: SimEngine, symbol: str, points: Any, moves: int) -> None:
        sizes.append(len(points))
        real(self, symbol, points, moves)

    with mock.patch.object(SimEngine, "pass_quietly", counted):
        _, _, passed = _same_three_ways(tmp_path, [RESTING], csv)
    assert passed > CHUNK
    assert max(sizes) <= 4 * CHUNK
