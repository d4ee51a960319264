"""The report page's levels worked out over arrays are the plain per-candle loops' floats.

``report_page.levels`` aggregates a run's candles, equity, drawdown and position with numpy
(``_base_arrays``, ``_coarser_arrays``); the plain per-candle loops below (``_base``,
``_coarser``) are the model. Random candles (as bars and as columns), equity samples (with
gaps, several per candle, before the first candle, after the last), fills and starting
balances (zero included) must give the same JSON, sign of zero included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.backtest.bars import Bar
from botkit.backtest.columns import BarColumns, EquityCurve
from botkit.backtest.report_page import _as_level, _base_arrays, _coarser_arrays, _Level
from botkit.backtest.result import EquityPoint, FillRow
from tests.fuzz.profiles import FUZZ, examples

T0 = 1_704_067_200_000
M = 60_000


def _base(
    bars: Sequence[Bar],
    interval_ms: int,
    equity: Sequence[EquityPoint],
    start_balance: float,
    fills: Sequence[FillRow],
) -> _Level:
    """The model: one row per candle: its prices, the equity at its close, the deepest
    drawdown (percent below the running peak) and the largest net position (buys − sells)
    during it."""
    level = _Level(interval_ms)
    peak = start_balance
    eq_now = start_balance
    dd_now = 0.0
    ei, n_eq = 0, len(equity)
    fi, n_fills = 0, len(fills)
    position = Decimal(0)
    for bar in bars:
        end = bar.time_ms + interval_ms
        worst = dd_now
        while ei < n_eq and equity[ei].time_ms <= end:
            eq_now = float(equity[ei].equity)
            ei += 1
            if eq_now > peak:
                peak = eq_now
            dd_now = (eq_now - peak) / peak * 100.0 if peak > 0 else 0.0
            if dd_now < worst:
                worst = dd_now
        most = position
        while fi < n_fills and fills[fi].time_ms < end:
            f = fills[fi]
            fi += 1
            position += f.qty if f.side.upper() == "BUY" else -f.qty
            if abs(position) > abs(most):
                most = position
        level.t.append(bar.time_ms)
        level.o.append(float(bar.open))
        level.h.append(float(bar.high))
        level.low.append(float(bar.low))
        level.c.append(float(bar.close))
        level.eq.append(eq_now)
        level.dd.append(worst)
        level.pos.append(float(most))
    return level


def _coarser(src: _Level, width_ms: int) -> _Level:
    out = _Level(width_ms)
    key = None
    for i, t in enumerate(src.t):
        k = t - t % width_ms
        if k != key:
            key = k
            out.t.append(k)
            out.o.append(src.o[i])
            out.h.append(src.h[i])
            out.low.append(src.low[i])
            out.c.append(src.c[i])
            out.eq.append(src.eq[i])
            out.dd.append(src.dd[i])
            out.pos.append(src.pos[i])
            continue
        if src.h[i] > out.h[-1]:
            out.h[-1] = src.h[i]
        if src.low[i] < out.low[-1]:
            out.low[-1] = src.low[i]
        out.c[-1] = src.c[i]
        out.eq[-1] = src.eq[i]
        if src.dd[i] < out.dd[-1]:
            out.dd[-1] = src.dd[i]
        if abs(src.pos[i]) > abs(out.pos[-1]):
            out.pos[-1] = src.pos[i]
    return out


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
