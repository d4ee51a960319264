"""Every indicator agrees with TA-Lib on the same candles, fed one closed candle at a time
through the engine's candle book as the cycles would (reference values:
tests/rules/reference/talib.json, written by ``python -m tests.rules.reference.talib_values``
with TA-Lib 0.8.2; see that module). VWAP, which TA-Lib lacks, is checked against its
definition computed here."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.exchange.models import Candle
from botkit.rules.context import BOOL
from botkit.rules.expr import Scope, compile_expr
from botkit.rules.series import Spec
from botkit.runner.candles import CandleBook

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((Path(__file__).parent / "reference" / "talib.json").read_text())
MINUTE = 60_000
SYMBOL = "BTC_USDT_PERP"


def _candles(rows: int) -> list[Candle]:
    with (ROOT / "data" / "btc-synth-7d.csv").open() as f:
        found = list(csv.DictReader(f))[:rows]
    return [
        Candle(
            open=Decimal(r["open"]),
            high=Decimal(r["high"]),
            low=Decimal(r["low"]),
            close=Decimal(r["close"]),
            qty=Decimal(r["volume"]),
            sT=int(r["time"]),
            cT=int(r["time"]) + MINUTE - 1,
        )
        for r in found
    ]


def _spec(text: str) -> Spec:
    compiled = compile_expr(f"{text} > 0", BOOL, Scope({}, "r", "BOTH"))
    (spec,) = [s for s in compiled.series if s.fn != "prev"]
    return spec.bind(SYMBOL)


@pytest.fixture(scope="module")
def replayed() -> tuple[dict[str, list[Decimal]], list[Candle]]:
    """Each reference indicator's values over the last 50 of 1000 candles, one cycle a
    minute."""
    candles = _candles(REFERENCE["rows"])

    def fetch(
        symbol: str, word: str, start: int | None, end: int | None, limit: int
    ) -> list[Candle]:
        assert (symbol, word) == (SYMBOL, "MINUTE_1")
        inside = [
            c for c in candles if (start is None or c.sT >= start) and (end is None or c.sT <= end)
        ]
        return inside[:limit] if start is not None else inside[-limit:]

    book = CandleBook(fetch)
    specs = {name: _spec(name) for name in [*REFERENCE["values"], "vwap('1m', 12)"]}
    seen: dict[str, list[Decimal]] = {name: [] for name in specs}
    keep = len(candles) - 50
    for k, candle in enumerate(candles):
        cycle = book.at(candle.sT + MINUTE, specs.values())
        for name, spec in specs.items():
            series = cycle.series(spec)  # a strategy due every minute reads it every cycle
            if k >= keep:
                seen[name].append(series.value(0))
    return seen, candles


@pytest.mark.parametrize("name", list(REFERENCE["values"]))
def test_agrees_with_talib(
    name: str, replayed: tuple[dict[str, list[Decimal]], list[Candle]]
) -> None:
    ours = replayed[0][name]
    theirs = REFERENCE["values"][name]
    assert all(isinstance(x, Decimal) for x in ours)
    for a, b in zip(ours, theirs, strict=True):
        assert float(a) == pytest.approx(b, rel=1e-9, abs=1e-9), name


def test_vwap_is_the_volume_weighted_typical_price_of_the_last_n(
    replayed: tuple[dict[str, list[Decimal]], list[Candle]],
) -> None:
    values, candles = replayed
    for offset, got in enumerate(values["vwap('1m', 12)"]):
        end = len(candles) - 50 + offset + 1
        window = candles[end - 12 : end]
        volume = sum(float(c.qty) for c in window)
        typical = sum(float((c.high + c.low + c.close) / 3) * float(c.qty) for c in window)
        assert float(got) == pytest.approx(typical / volume, rel=1e-12)
