"""The report page's levels worked out over arrays are the plain per-candle loops' floats.

``report_page.levels`` aggregates a run's candles, equity, drawdown and position with numpy
(``_base_arrays``, ``_coarser_arrays``); the plain loops (``_base``, ``_coarser``) stay as the
model. Random candles (as bars and as columns), equity samples (with gaps, several per candle,
before the first candle, after the last), fills and starting balances (zero included) must
give the same JSON, sign of zero included.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.backtest.bars import Bar
from botkit.backtest.columns import BarColumns, EquityCurve
from botkit.backtest.report_page import (
    _as_level,
    _base,
    _base_arrays,
    _coarser,
    _coarser_arrays,
)
from botkit.backtest.result import EquityPoint, FillRow
from tests.fuzz.profiles import FUZZ, examples

T0 = 1_704_067_200_000
M = 60_000

prices = st.integers(1, 2_000).map(lambda n: Decimal(n) / 10)


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[Bar], list[EquityPoint], list[FillRow], Decimal]:
    count = draw(st.integers(0, 40))
    bars = []
    for i in range(count):
        a, b, c, d = sorted(draw(st.lists(prices, min_size=4, max_size=4)))
        o, cl = draw(st.permutations([b, c]))
        bars.append(Bar(T0 + i * M, o, d, a, cl, Decimal(1)))
    times = sorted(draw(st.lists(st.integers(-2, count + 2), max_size=60)))
    equity = [
        EquityPoint(T0 + t * M + draw(st.sampled_from([0, 1, M // 2])), draw(prices), Decimal(0))
        for t in times
    ]
    equity.sort(key=lambda p: p.time_ms)
    fill_times = sorted(draw(st.lists(st.integers(-1, count + 1), max_size=12)))
    fills = [
        FillRow(
            time_ms=T0 + t * M + draw(st.sampled_from([0, M // 4, M - 1])),
            cl_ord_id="x",
            side=draw(st.sampled_from(["BUY", "SELL", "sell"])),
            px=Decimal(1),
            qty=draw(st.sampled_from([Decimal(1), Decimal("0.5"), Decimal(2)])),
            fee=Decimal(0),
            role="maker",
        )
        for t in fill_times
    ]
    fills.sort(key=lambda f: f.time_ms)
    start = draw(st.sampled_from([Decimal(0), Decimal(100), Decimal("0.5"), Decimal(-1)]))
    return bars, equity, fills, start


def _json(level: Any) -> str:
    return json.dumps(level.as_json() | {"raw_dd": level.dd, "raw_eq": level.eq})


@given(run=runs(), columns=st.booleans(), curve=st.booleans())
@settings(FUZZ, max_examples=examples(60))
def test_the_array_levels_are_the_plain_loops_floats(
    run: tuple[list[Bar], list[EquityPoint], list[FillRow], Decimal], columns: bool, curve: bool
) -> None:
    bars, equity, fills, start = run
    given_bars = BarColumns.from_bars(bars) if columns else bars
    given_equity = EquityCurve.of(equity) if curve else equity
    plain = _base(bars, M, equity, float(start), fills)
    fast = _base_arrays(given_bars, M, given_equity, float(start), fills)
    assert _json(_as_level(fast)) == _json(plain)
    for width in (5 * M, 15 * M, 60 * M):
        assert _json(_as_level(_coarser_arrays(fast, width))) == _json(_coarser(plain, width))
