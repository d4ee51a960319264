"""The backtest on a year of minute candles (525,600) with ``strategies/btc-dip-ladder.yaml``
evaluated every minute: candles per second and total seconds, split into loading, the replay
(one full runner cycle per candle) and building the result; the process's peak memory.

``python -m bench backtest`` (``BENCH_CANDLES=N`` for another size, ``BENCH_PROFILE=1`` to
print the replay's top costs from cProfile, ``BENCH_JOURNAL=file`` for the journal on disk,
``BENCH_STRATEGIES=btc-dip-ladder,btc-ema-cross`` to run several files of strategies/ one
after the other on the same candles, each beside the first: the issue-19 figure, the
EMA-crossover strategy evaluated every minute at most 1.3 times the dip ladder's year).
With several files each one runs twice, interleaved: **every minute** (every cycle evaluated,
the skip of quiet cycles off: what the issue-19 bound compares, the cost of evaluating the
rules and their indicators) and **with the skip** (the product's default, where a cycle that
provably changes nothing is not evaluated: there the ratio says how many cycles each strategy
cannot skip, not what evaluating costs). ``BENCH_SKIP=on`` or ``off`` runs one mode only.
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
    chosen = os.environ.get("BENCH_SKIP", "")
    if chosen not in ("", "on", "off"):
        raise SystemExit(f"BENCH_SKIP={chosen!r}: say on or off (or leave it unset)")
    modes = [chosen == "on"] if chosen else ([False, True] if names else [True])
    logger.remove()  # the runner's per-fire log lines are not what is measured
    reference = _reference_s()
    totals: dict[tuple[str, bool], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "year.csv"
        _synth(data, count)
        for strategy in files:  # a name listed twice is a second round, interleaved
            for skip in modes:
                total = _run(data, count, strategy, reference, skip=skip)
                totals.setdefault((strategy.stem, skip), []).append(total)
    first = files[0].stem
    print(f"machine {reference:.2f} s (bench_backtest._reference_s)")
    for skip in modes:
        label = "with the skip" if skip else "every minute"
        base = min(totals[(first, skip)])
        for stem in dict.fromkeys(f.stem for f in files):
            runs = totals[(stem, skip)]
            shown = ", ".join(f"{t:.2f}" for t in runs)
            rounds = ", ".join(
                f"{t / b:.2f}" for t, b in zip(runs, totals[(first, skip)], strict=False)
            )
            print(f"{label:14} {stem:24} {min(runs):7.2f} s (runs {shown})"
                  f"  {min(runs) / base:5.2f} x {first} (each round: {rounds})")  # fmt: skip


def _run(data: Path, count: int, strategy: Path, reference: float, *, skip: bool = True) -> float:
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
    run = execute(prepared, journal=journal, clock=clock, skip_quiet=skip)
    if profiler is not None:
        profiler.disable()
    replay = time.perf_counter() - started
    journal.close()
    total = loaded + replay
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(render_summary(run.result))
    mode = "with the skip" if skip else "every minute"
    print(f"{strategy.stem}, {mode}: journal {where}, {run.cycles:,} cycles, "
          f"peak RSS {peak_mb:,.0f} MB")  # fmt: skip
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
