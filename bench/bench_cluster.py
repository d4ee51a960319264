"""A 32-variant sweep on the process pool and on local Dask clusters of 1, 2 and 4 workers.

``python -m bench cluster`` (``BENCH_HOURS=N`` for other variants, 12 h of minute candles of
the shipped week by default, so the whole module takes a few minutes). Prints, for each way of
running: the wall time of the 32 variants (a cluster's start-up apart), the time a variant
takes, and the speed-up against one process; then the per-variant overhead of the cluster path
against the process pool with the same number of workers. On a 2-core machine the figures
show the overhead, not the scaling: four workers share two cores.
"""

from __future__ import annotations

import os
import time
from decimal import Decimal
from pathlib import Path

from botkit.app.backtest import _quiet_worker, run_sweep
from botkit.app.cluster import cluster_client, run_on_cluster
from botkit.backtest.setup import BacktestOptions
from botkit.backtest.sweep import grid

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
D = Decimal


def _base() -> BacktestOptions:
    hours = int(os.environ.get("BENCH_HOURS", "12"))
    return BacktestOptions(
        data=ROOT / "data" / "btc-synth-7d.csv",
        strategies=(ROOT / "strategies" / "btc-dip-ladder.yaml",
                    ROOT / "strategies" / "btc-exits.yaml"),
        start_ms=T0,
        end_ms=T0 + hours * 3_600_000,
    )  # fmt: skip


def _variants() -> list[dict[str, Decimal]]:
    dips = [D("0.002") + D("0.0005") * i for i in range(8)]
    takes = [D("0.03"), D("0.05"), D("0.08"), D("0.1")]
    return grid([("dip", dips), ("btc-exits.take", takes)])


def main() -> None:
    _quiet_worker()  # the runner's per-fire lines would cost the in-process run its time
    base, variants = _base(), _variants()
    n = len(variants)
    rows: list[tuple[str, float, float]] = []
    started = time.perf_counter()
    reference = run_sweep(base, variants, jobs=1)
    one = time.perf_counter() - started
    rows.append(("one process (--jobs 1)", one, 0.0))
    started = time.perf_counter()
    pooled = run_sweep(base, variants, jobs=2)
    pool2 = time.perf_counter() - started
    rows.append(("process pool (--jobs 2)", pool2, 0.0))
    assert [o.figures for o in pooled] == [o.figures for o in reference]
    cluster: dict[int, float] = {}
    for workers in (1, 2, 4):
        started = time.perf_counter()
        with cluster_client(f"local:{workers}") as client:
            up = time.perf_counter() - started
            run_on_cluster(client, base, variants[:workers])  # the files reach every worker
            started = time.perf_counter()
            outcomes = run_on_cluster(client, base, variants)
            cluster[workers] = time.perf_counter() - started
        assert [o.figures for o in outcomes] == [o.figures for o in reference]
        rows.append((f"Dask local:{workers}", cluster[workers], up))
    print(f"{n} variants of {os.environ.get('BENCH_HOURS', '12')} h of minute candles, "
          f"{os.cpu_count()} cores")  # fmt: skip
    print(f"{'how':26} {'wall s':>8} {'s/variant':>10} {'speed-up':>9} {'start-up s':>11}")
    for name, wall, up in rows:
        print(f"{name:26} {wall:8.2f} {wall / n:10.3f} {one / wall:8.2f}x "
              f"{up:11.2f}" if up else f"{name:26} {wall:8.2f} {wall / n:10.3f} "
              f"{one / wall:8.2f}x {'-':>11}")  # fmt: skip
    overhead_ms = (cluster[2] - pool2) / n * 1000
    print(
        f"cluster path vs process pool, 2 workers each: {cluster[2] / pool2:.2f}x the wall "
        f"time, {overhead_ms:+.1f} ms a variant"
    )
    single_ms = (cluster[1] - one) / n * 1000
    print(
        f"local:1 vs one process: {cluster[1] / one:.2f}x the wall time, "
        f"{single_ms:+.1f} ms a variant"
    )


if __name__ == "__main__":
    main()
