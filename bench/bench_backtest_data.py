"""Backtest data tools on a year of minute candles (525,600): synthesize, write, load (CSV and
JSON lines), walk the intra-candle path, and write the report. Prints seconds and rows/s.

``python -m bench backtest_data`` (``BENCH_CANDLES=N`` for another size).
"""

from __future__ import annotations

import os
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from botkit.backtest.candle_writer import write_candles
from botkit.backtest.candles import load_candles
from botkit.backtest.path import series_path
from botkit.backtest.report import write_report
from botkit.backtest.result import BacktestResult, EquityPoint, FillRow, OrderRow
from botkit.backtest.synth import SynthParams, synth_bars

T0 = 1_704_067_200_000


def _line(what: str, seconds: float, rows: int) -> None:
    print(f"{what:<28} {seconds:6.2f} s  {rows / seconds:12,.0f} rows/s")


def main() -> None:
    count = int(os.environ.get("BENCH_CANDLES", "525600"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        bars = list(synth_bars(SynthParams(start_ms=T0, count=count, seed=7)))
        _line("synth", time.perf_counter() - start, count)
        for name in ("year.csv", "year.jsonl"):
            start = time.perf_counter()
            write_candles(bars, folder / name)
            _line(f"write {name}", time.perf_counter() - start, count)
        for name in ("year.csv", "year.jsonl"):
            start = time.perf_counter()
            series = load_candles(folder / name)
            _line(f"load {name}", time.perf_counter() - start, len(series))
        start = time.perf_counter()
        points = sum(1 for _ in series_path(series.bars, series.interval_ms))
        _line("intra-candle path", time.perf_counter() - start, points)
        equity = [EquityPoint(b.time_ms, Decimal(10000) + b.close / 100) for b in series.bars]
        fills = [
            FillRow(b.time_ms, f"c{i}", "BUY" if i % 2 else "SELL", b.close, Decimal(1),
                    Decimal("0.1"), "maker")
            for i, b in enumerate(series.bars[::500])
        ]  # fmt: skip
        orders = [OrderRow(f.time_ms, "s", "r", f.cl_ord_id, "BTC_USDT_PERP", f.side, "LIMIT",
                           f.px, f.qty, "accepted") for f in fills]  # fmt: skip
        result = BacktestResult("BTC_USDT_PERP", series.interval_ms, series.start_ms,
                                series.end_ms, len(series), Decimal(10000), equity=equity,
                                prices=[(b.time_ms, b.close) for b in series.bars],
                                orders=orders, fills=fills)  # fmt: skip
        start = time.perf_counter()
        write_report(result, folder / "report")
        _line("report (7 files)", time.perf_counter() - start, count)
