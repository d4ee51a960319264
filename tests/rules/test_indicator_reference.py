"""Every indicator agrees with TA-Lib, fed one closed candle at a time through the engine's
candle book as the cycles would, on two series:

- a **real** one: the 250 daily candles of Ford Motor Co. in 2012 that TA-Lib's own binding
  tests itself on (tests/rules/reference/ford-2012-daily.csv; source and licence in the
  README.md beside it), every candle's value: the same number, or ``warming_up`` exactly
  where TA-Lib has none yet;
- botkit's synthetic minute series (data/btc-synth-7d.csv), the last 50 of 1000 candles.

The reference values (tests/rules/reference/ford-2012.json and talib.json) were computed with
TA-Lib 0.8.2 by

    .venv/bin/pip install TA-Lib==0.8.2 && .venv/bin/python -m tests.rules.reference.talib_values

(see that module). VWAP, which TA-Lib lacks, is checked against its definition computed here.

    .venv/bin/pytest tests/rules/test_indicator_reference.py
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from botkit.exchange.models import Candle
from botkit.rules.context import BOOL
from botkit.rules.expr import Scope, compile_expr
from botkit.rules.series import INDICATORS, INTERVALS, Spec, WarmingUp
from botkit.runner.candles import CandleBook

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent / "reference"
SYMBOL = "BTC_USDT_PERP"
WORDS = {"1m": "MINUTE_1", "1d": "DAY_1"}


@dataclass(frozen=True)
class Dataset:
    """One reference series: its candles, TA-Lib's values (None: TA-Lib has none yet) and
    from which candle on they are compared."""

    name: str
    interval: str
    candles: tuple[Candle, ...]
    reference: dict[str, Any]
    compared_from: int


def _candle(row: dict[str, str], start: int, width: int) -> Candle:
    return Candle(
        open=Decimal(row["open"]),
        high=Decimal(row["high"]),
        low=Decimal(row["low"]),
        close=Decimal(row["close"]),
        qty=Decimal(row["volume"]),
        sT=start,
        cT=start + width - 1,
    )


def _real() -> Dataset:
    """The real daily series, one candle a day from its first date: the exchange's daily
    series has no weekends or holidays, a share's has, so the trading days are laid end to
    end (the values do not depend on the times)."""
    reference = json.loads((HERE / "ford-2012.json").read_text())
    with (HERE / reference["source"]).open() as f:
        rows = list(csv.DictReader(f))
    day = INTERVALS["1d"]
    first = int(datetime.fromisoformat(rows[0]["date"]).replace(tzinfo=UTC).timestamp()) * 1000
    candles = tuple(_candle(r, first + k * day, day) for k, r in enumerate(rows))
    return Dataset("ford-2012-daily", "1d", candles, reference, 0)


def _synthetic() -> Dataset:
    reference = json.loads((HERE / "talib.json").read_text())
    with (ROOT / "data" / "btc-synth-7d.csv").open() as f:
        rows = list(csv.DictReader(f))[: reference["rows"]]
    minute = INTERVALS["1m"]
    candles = tuple(_candle(r, int(r["time"]), minute) for r in rows)
    keep = len(reference["values"]["atr('1m', 14)"])
    return Dataset("btc-synth-1m", "1m", candles, reference, len(candles) - keep)


DATASETS = {d.name: d for d in (_real(), _synthetic())}


def _spec(text: str) -> Spec:
    compiled = compile_expr(f"{text} > 0", BOOL, Scope({}, "r", "BOTH"))
    (spec,) = [s for s in compiled.series if s.fn != "prev"]
    return spec.bind(SYMBOL)


def _vwap(data: Dataset) -> str:
    return f"vwap('{data.interval}', 12)"


_REPLAYED: dict[str, dict[str, list[Decimal | None]]] = {}


def replayed(data: Dataset) -> dict[str, list[Decimal | None]]:
    """Each reference expression's values from candle ``compared_from`` on, one cycle per
    candle, None where it is warming up (computed once per dataset)."""
    if data.name in _REPLAYED:
        return _REPLAYED[data.name]
    candles = data.candles
    width = INTERVALS[data.interval]

    def fetch(
        symbol: str, word: str, start: int | None, end: int | None, limit: int
    ) -> list[Candle]:
        assert (symbol, word) == (SYMBOL, WORDS[data.interval])
        inside = [
            c for c in candles if (start is None or c.sT >= start) and (end is None or c.sT <= end)
        ]
        return inside[:limit] if start is not None else inside[-limit:]

    book = CandleBook(fetch)
    specs = {name: _spec(name) for name in [*data.reference["values"], _vwap(data)]}
    seen: dict[str, list[Decimal | None]] = {name: [] for name in specs}
    for k, candle in enumerate(candles):
        cycle = book.at(candle.sT + width, specs.values())
        for name, spec in specs.items():
            series = cycle.series(spec)  # a strategy due every candle reads it every cycle
            if k >= data.compared_from:
                try:
                    seen[name].append(series.value(0))
                except WarmingUp:
                    seen[name].append(None)
    _REPLAYED[data.name] = seen
    return seen


CASES = [(d, name) for d in DATASETS.values() for name in d.reference["values"]]


@pytest.mark.parametrize(("data", "name"), CASES, ids=[f"{d.name}:{n}" for d, n in CASES])
def test_agrees_with_talib(data: Dataset, name: str) -> None:
    ours = replayed(data)[name]
    theirs = data.reference["values"][name]
    assert len(ours) == len(theirs) > 0
    assert sum(b is not None for b in theirs) >= 50
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        where = (name, data.compared_from + k)
        if b is None:
            assert a is None, where  # TA-Lib has no value yet: neither has botkit
        else:
            assert isinstance(a, Decimal), where
            assert float(a) == pytest.approx(b, rel=1e-9, abs=1e-9), where


@pytest.mark.parametrize("data", DATASETS.values(), ids=list(DATASETS))
def test_every_indicator_has_a_talib_reference(data: Dataset) -> None:
    """A new indicator fails here until its TA-Lib reference is added (VWAP, which TA-Lib
    lacks, is checked against its definition below)."""
    referenced = {_spec(name).fn for name in data.reference["values"]}
    assert set(INDICATORS) - referenced == {"vwap"}


def test_the_real_series_is_compared_on_every_candle() -> None:
    data = DATASETS["ford-2012-daily"]
    assert len(data.candles) == data.reference["rows"] == 250
    assert all(len(v) == 250 for v in data.reference["values"].values())


@pytest.mark.parametrize("data", DATASETS.values(), ids=list(DATASETS))
def test_vwap_is_the_volume_weighted_typical_price_of_the_last_n(data: Dataset) -> None:
    candles = data.candles
    for offset, got in enumerate(replayed(data)[_vwap(data)]):
        end = data.compared_from + offset + 1
        if end < 12:
            assert got is None
            continue
        assert got is not None
        window = candles[end - 12 : end]
        volume = sum(float(c.qty) for c in window)
        typical = sum(float((c.high + c.low + c.close) / 3) * float(c.qty) for c in window)
        assert float(got) == pytest.approx(typical / volume, rel=1e-12)


@pytest.mark.parametrize("data", DATASETS.values(), ids=list(DATASETS))
def test_a_series_read_rarely_goes_on_as_if_read_every_candle(data: Dataset) -> None:
    """A rule that short-circuits past its indicator for longer than a page of candles (here
    150) then reads it gets TA-Lib's value — the series went on step by step over the candles
    it did not read — not one warmed up again from the look-back."""
    candles = data.candles
    width = INTERVALS[data.interval]

    def fetch(
        symbol: str, word: str, start: int | None, end: int | None, limit: int
    ) -> list[Candle]:
        inside = [
            c for c in candles if (start is None or c.sT >= start) and (end is None or c.sT <= end)
        ]
        return inside[:limit] if start is not None else inside[-limit:]

    names = list(data.reference["values"])
    specs = {name: _spec(name) for name in names}
    book = CandleBook(fetch)
    later = len(candles) - 1
    first = later - 150
    book.at(candles[first].sT + width, specs.values())
    for spec in specs.values():
        book.at(candles[first].sT + width, specs.values()).series(spec)  # read once, then not
    cycle = book.at(candles[later].sT + width, specs.values())
    checked = 0
    for name, spec in specs.items():
        theirs = data.reference["values"][name][later - data.compared_from]
        assert theirs is not None, name
        ours = cycle.series(spec).value(0)
        assert float(ours) == pytest.approx(theirs, rel=1e-9, abs=1e-9), name
        checked += 1
    assert checked == len(names)
