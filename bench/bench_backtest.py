"""The backtest on a year of minute candles (525,600) with ``strategies/btc-dip-ladder.yaml``
evaluated every minute: candles per second and total seconds, split into loading, the replay
(one full runner cycle per candle) and building the result; the process's peak memory.

``python -m bench backtest`` (``BENCH_CANDLES=N`` for another size, ``BENCH_PROFILE=1`` to
print the replay's top costs from cProfile, ``BENCH_JOURNAL=file`` for the journal on disk,
``BENCH_STRATEGIES=btc-dip-ladder,btc-ema-cross`` to run several files of strategies/ one
after the other on the same candles, each beside the first: the issue-19 figure, the
EMA-crossover strategy at most 1.3 times the dip ladder).
The candles are the shipped series' recipe (``botkit data synth --seed 7 --volatility 0.6
--jump-prob 0.0005 --jump-size 0.01 --start-price 60000``) stretched to the whole size.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import resource
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from loguru import logger

from botkit.app.backtest import backtest_journal, execute
from botkit.backtest.candle_writer import write_candles
from botkit.backtest.report import render_summary
from botkit.backtest.setup import BacktestOptions, prepare
from botkit.backtest.synth import SynthParams, synth_bars
from botkit.clock import ManualClock

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
STRATEGY = Path(__file__).resolve().parents[1] / "strategies" / "btc-dip-ladder.yaml"
TARGET_S = 20.0


def _reference_s() -> float:
    """Seconds this machine takes for a fixed pure-Python workload (best of 3): one number to
    set beside the figures, so that runs on different machines (or one shared machine on
    different days) can be compared. It is not scaled into anything."""

    def work() -> int:
        total = 0
        for i in range(2_000_000):
            total += i % 7 if i & 1 else len(str(i))
        return total

    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _synth(path: Path, count: int) -> None:
    params = SynthParams(start_ms=T0, count=count, seed=7, start_price=Decimal(60000),
                         volatility=0.6, jump_prob=0.0005, jump_size=0.01)  # fmt: skip
    write_candles(synth_bars(params), path)


def main() -> None:
    count = int(os.environ.get("BENCH_CANDLES", "525600"))
    names = os.environ.get("BENCH_STRATEGIES", "")
    files = (
        [STRATEGY.with_name(f"{n.strip()}.yaml") for n in names.split(",")] if names else [STRATEGY]
    )
    logger.remove()  # the runner's per-fire log lines are not what is measured
    reference = _reference_s()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "year.csv"
        _synth(data, count)
        totals = [_run(data, count, strategy, reference) for strategy in files]
    for strategy, total in zip(files, totals, strict=True):
        print(f"{strategy.stem:24} {total:7.2f} s  {total / totals[0]:5.2f} x {files[0].stem}")


def _run(data: Path, count: int, strategy: Path, reference: float) -> float:
    profile = os.environ.get("BENCH_PROFILE", "") not in ("", "0")
    started = time.perf_counter()
    prepared = prepare(BacktestOptions(data=data, strategies=(strategy,)))
    loaded = time.perf_counter() - started
    clock = ManualClock(prepared.series.start_ms)
    where = os.environ.get("BENCH_JOURNAL") or ":memory:"
    journal = backtest_journal(where, clock)
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    run = execute(prepared, journal=journal, clock=clock)
    if profiler is not None:
        profiler.disable()
    replay = time.perf_counter() - started
    journal.close()
    total = loaded + replay
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(render_summary(run.result))
    print(f"journal {where}, {run.cycles:,} cycles, peak RSS {peak_mb:,.0f} MB")
    print(f"load + check   {loaded:7.2f} s")
    print(f"replay         {replay:7.2f} s  {count / replay:9,.0f} candles/s  "
          f"{replay / count * 1e6:6.0f} us/candle (cycle, path, equity, result)")  # fmt: skip
    year = total * 525_600 / count
    print(f"total          {total:7.2f} s  {count / total:9,.0f} candles/s  "
          f"(a year at this rate: {year:.0f} s; target {TARGET_S:.0f} s)")  # fmt: skip
    print(f"machine        {reference:7.2f} s  for the reference loop (bench_backtest._reference_s;"
          " compare runs on different machines by it)")  # fmt: skip
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(35)
        print(out.getvalue())
    return total


if __name__ == "__main__":
    main()
