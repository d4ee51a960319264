"""Candles and the equity curve in compact columns (issue 20): the same values, less memory."""

from __future__ import annotations

import tracemalloc
from decimal import Decimal
from itertools import chain
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.backtest.candle_fast import csv_columns
from botkit.backtest.candle_parse import Problems, parse_lines
from botkit.backtest.candle_writer import write_candles
from botkit.backtest.candles import load_candles
from botkit.backtest.columns import (
    PLACES_BITS,
    BarColumns,
    DecimalColumn,
    EquityCurve,
    share_keys,
)
from botkit.backtest.driver import price_points
from botkit.backtest.result import EquityPoint
from botkit.backtest.synth import SynthParams, synth_bars
from tests.fuzz.profiles import FUZZ

T0 = 1_704_067_200_000
M = 60_000

number = st.builds(
    lambda whole, frac, zeros: ("0" * zeros) + str(whole) + (f".{frac}" if frac else ""),
    st.integers(1, 10**8),
    st.one_of(st.just(""), st.from_regex(r"[0-9]{1,4}", fullmatch=True)),
    st.integers(0, 2),
)


def _spell(value: Decimal, zeros: int, trailing: int) -> str:
    """``value`` written with ``zeros`` leading zeros and ``trailing`` more places (1.5 as
    001.500: an equal value, another exponent)."""
    text = f"{value:f}"
    if trailing:
        text += ("" if "." in text else ".") + "0" * trailing
    return "0" * zeros + text


@st.composite
def plain_csv(draw: st.DrawFn) -> str:
    rows = draw(st.integers(1, 20))
    with_volume = draw(st.booleans())
    lines = ["time,open,high,low,close" + (",volume" if with_volume else "")]
    for i in range(rows):
        prices = sorted(Decimal(x) for x in draw(st.lists(number, min_size=4, max_size=4)))
        texts = {p: _spell(p, draw(st.integers(0, 2)), draw(st.integers(0, 2))) for p in prices}
        low, a, b, high = (texts[p] for p in prices)
        opened, closed = (a, b) if draw(st.booleans()) else (b, a)
        cells = [str(T0 + i * M), opened, high, low, closed]
        if with_volume:
            cells.append(draw(st.one_of(st.just(""), number)))
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None)
@given(plain_csv())
def test_columnar_parse_gives_the_row_by_row_decimals(text: str) -> None:
    """Every value comes back as the very Decimal the row-by-row path makes: same coefficient,
    same exponent (``str`` equal), so nothing downstream can differ."""
    fast = csv_columns(text.encode())
    assert fast is not None
    times, keys = fast
    columnar = list(BarColumns(times, share_keys(keys)))
    lines = text.splitlines(keepends=True)
    problems = Problems("t.csv")
    rows, _ = parse_lines(lines, 1, problems)
    assert problems.count == 0
    assert [tuple(map(str, b)) for b in columnar] == [tuple(map(str, b)) for b in rows]


def test_unusual_values_take_the_row_by_row_path_and_load_the_same(tmp_path: Path) -> None:
    text = f"time,open,high,low,close,volume\n{T0},1E+2,110,90,105.,+7\n{T0 + M},.5,1,0.5,1,-0\n"
    assert csv_columns(text.encode()) is None
    (tmp_path / "c.csv").write_text(text)
    got = [tuple(map(str, b)) for b in load_candles(tmp_path / "c.csv").bars]
    assert got == [
        (str(T0), "1E+2", "110", "90", "105", "7"),
        (str(T0 + M), "0.5", "1", "0.5", "1", "-0"),
    ]


def test_a_loaded_series_is_held_in_columns_not_objects(tmp_path: Path) -> None:
    """20,000 candles: the load allocates under 600 bytes a candle at its peak (one
    object per candle and per price took more than 1,000) and keeps 8-byte times and
    4-byte price codes into one shared table of the distinct values."""
    count = 20_000
    write_candles(synth_bars(SynthParams(start_ms=T0, count=count, seed=7)), tmp_path / "y.csv")
    tracemalloc.start()
    try:
        series = load_candles(tmp_path / "y.csv")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(series.bars, BarColumns)
    assert peak < 600 * count
    assert series.bars.nbytes <= 6 * 8 * count
    assert series.bars[5:7][1] == series.bars[6]
    assert list(series.bars)[-1] == series.bars[-1]


def test_equity_curve_is_a_sequence_of_points_with_shared_exposures() -> None:
    points = [EquityPoint(i * M, Decimal(10_000 + i), Decimal("0.5") if i > 1 else Decimal(0))
              for i in range(6)]  # fmt: skip
    curve = EquityCurve()
    for p in points:
        curve.append(p.time_ms, p.equity, Decimal(str(p.exposure)))
    assert curve == points
    assert list(curve) == points
    assert curve[-1] == points[-1]
    assert len(curve) == 6
    assert list(curve[2:4]) == points[2:4]
    assert len({id(x) for x in curve.exposures}) == 2  # 0 twice, then one 0.5 for four points


def _model_share(columns: list[np.ndarray]) -> list[list[Decimal]]:
    """The plain model: one sorted table of every distinct key, each cell its Decimal."""
    distinct = sorted(set(chain.from_iterable(c.tolist() for c in columns)))
    table = {key: Decimal(f"{key >> PLACES_BITS}E-{key & 31}") for key in distinct}
    return [[table[key] for key in c.tolist()] for c in columns]


@st.composite
def key_columns(draw: st.DrawFn) -> list[np.ndarray]:
    """Five columns of keys: coefficients in a narrow range (a tick's prices: the table over
    the range) or a wide one (sorted), mixed places, zero, shared and lone values."""
    rows = draw(st.integers(1, 30))
    low = draw(st.integers(0, 10**16))
    width = draw(st.sampled_from([1, 5, 300, 10**15]))
    coefficient = st.integers(low, low + width)
    places = st.sampled_from(draw(st.lists(st.integers(0, 17), min_size=1, max_size=3)))
    key = st.builds(lambda c, p: c << PLACES_BITS | p, st.one_of(coefficient, st.just(0)), places)
    return [
        np.array(draw(st.lists(key, min_size=rows, max_size=rows)), dtype=np.int64)
        for _ in range(5)
    ]


@FUZZ
@given(key_columns())
def test_shared_keys_come_back_as_the_models_decimals_and_floats(columns: list[np.ndarray]) -> None:
    """Whatever the range (a table over it, or sorting), every cell is the model's Decimal
    (coefficient and exponent), equal cells share one object, and the floats are the
    Decimals' own."""
    shared = share_keys(columns)
    model = _model_share(columns)
    for column, want in zip(shared, model, strict=True):
        got = column.take(0, len(column))
        assert [d.as_tuple() for d in got] == [d.as_tuple() for d in want]
        assert column.floats(0, len(column)).tolist() == [float(d) for d in want]
    cells = [d for column in shared for d in column.take(0, len(column))]
    by_key = {(str(d), d.as_tuple()): id(d) for d in cells}
    assert len({id(d) for d in cells}) == len(by_key)


@st.composite
def close_bars(draw: st.DrawFn) -> BarColumns:
    """Candles whose lows and highs tie, or differ beyond a float's digits (0.1 and
    0.10000000000000001 are one float), in shared-table columns."""
    spellings = [(1, 1), (10, 2), (10_000_000_000_000_001, 17), (2, 1), (9, 2)]
    key = st.sampled_from(spellings).map(lambda cp: cp[0] << PLACES_BITS | cp[1])
    rows = draw(st.integers(1, 40))
    lows = draw(st.lists(key, min_size=rows, max_size=rows))
    highs = draw(st.lists(key, min_size=rows, max_size=rows))
    columns = [np.array(c, dtype=np.int64) for c in (lows, highs, lows, highs, lows)]
    times = np.arange(rows, dtype=np.int64) * M + T0
    return BarColumns(times, share_keys(columns))


@FUZZ
@given(close_bars(), st.integers(4, 24))
def test_the_price_points_of_columns_are_the_bars_own(bars: BarColumns, limit: int) -> None:
    """The first lowest low and highest high of each bucket found over floats, then the
    Decimals: the points ``min`` and ``max`` over the bars give (the model)."""
    got = price_points(bars, M, limit=limit)
    assert [(t, str(p)) for t, p in got] == [
        (t, str(p)) for t, p in price_points(list(bars), M, limit=limit)
    ]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 999), min_size=5, max_size=5).flatmap(
        lambda n: st.lists(st.sampled_from(n), min_size=1, max_size=40)
    ),
    st.integers(0, 45),
    st.integers(0, 45),
)
def test_bars_at_hand_are_the_columns_bars(values: list[int], start: int, stop: int) -> None:
    """The replay's block of bars built one at a time gives each bar as indexing the columns
    does (shared-table codes, fixed-point keys, objects; any index, negative ones and slices
    too)."""
    rows = len(values)
    keys = [
        np.array([(v + shift) << PLACES_BITS | 1 for v in values], dtype=np.int64)
        for shift in range(5)
    ]
    times = np.arange(rows, dtype=np.int64) * M + T0
    coded = BarColumns(times, share_keys(keys))
    keyed = BarColumns(times, [DecimalColumn(keys=k) for k in keys])
    for source in (coded, keyed, BarColumns.from_bars(list(coded))):
        hand = source.at_hand(start, stop)
        want = [source[i] for i in range(min(start, rows), min(stop, rows))]
        assert len(hand) == len(want)
        assert [tuple(map(str, hand[k])) for k in range(len(hand))] == [
            tuple(map(str, b)) for b in want
        ]
        assert [tuple(map(str, b)) for b in hand[1:]] == [tuple(map(str, b)) for b in want[1:]]
        if want:
            assert tuple(map(str, hand[-1])) == tuple(map(str, want[-1]))
