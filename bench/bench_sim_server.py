"""Benchmark: what the simulator's HTTP face sustains for batch placement.

1. Loopback: ``botkit sim serve`` in its own process (so client and server do not share one
   GIL), and a few client threads, each with the real ExchangeClient (v3 signing), sending
   10-order batches (5 market buys, 5 market sells: every order fills, positions net out) for
   a bounded time. Prints batches/s, orders/s and the batch round-trip percentiles. Once with
   the paper account in memory, once kept in a state file (``--state``: every batch's orders,
   fills and positions committed before its answer leaves).
2. In process: the same batches through :class:`SimTransport` (client → transport → SimHttp →
   engine, no sockets), and SimHttp.handle alone (pre-signed request, no client), per order.

``python -m bench sim_server`` (or ``make bench``). Environment: BENCH_SECONDS (default 5),
BENCH_THREADS (default 4).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import WallClock
from botkit.exchange import signing
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.live.http import dumps
from botkit.sim.config import default_config_text, parse_sim_config
from botkit.sim.inprocess import SimHandle, make_sim

SYMBOL = "BTC_USDT_PERP"
KEY, SECRET, PASSPHRASE = "sim-key", "sim-secret", "sim-passphrase"
BATCH = [
    OrderRequest(
        symbol=SYMBOL,
        side=OrderSide.BUY if i % 2 == 0 else OrderSide.SELL,
        type=OrderType.MARKET,
        sz=Decimal(1),
    )
    for i in range(10)
]


def _config_text() -> str:
    """The built-in config with a wallet large enough for minutes of taker fees."""
    return default_config_text().replace('amount = "10000"', 'amount = "100000000"', 1)


def _client(base_url: str, sim: SimHandle | None = None) -> ExchangeClient:
    return ExchangeClient(
        base_url,
        key=KEY,
        secret=SECRET,
        passphrase=PASSPHRASE,
        signing="v3",
        clock=ClockSync(interval_ms=0),
        transport=sim.transport if sim is not None else None,
        timeout=10.0,
    )


def _start_server(config: Path, state: Path | None) -> tuple[subprocess.Popen[str], str]:
    kept = ["--state", str(state)] if state is not None else []
    proc = subprocess.Popen(  # noqa: S603 - fixed argv: this interpreter running botkit
        [
            sys.executable,
            "-m",
            "botkit",
            "sim",
            "serve",
            "--port",
            "0",
            "--config",
            str(config),
            *kept,
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "BOTKIT_API_KEY": KEY, "BOTKIT_API_SECRET": SECRET},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if "listening on" not in first:
        proc.kill()
        raise RuntimeError(f"the simulator server did not start: {first!r}")
    return proc, first.rsplit(" ", 1)[1].strip()


def bench_loopback(seconds: float, threads: int, *, kept: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "sim.toml"
        config.write_text(_config_text(), encoding="utf-8")
        proc, url = _start_server(config, Path(tmp) / "paper.sqlite" if kept else None)
        print(
            "paper account kept in a state file (--state):" if kept else "paper account in memory:"
        )
        try:
            _run_loopback(url, seconds, threads, proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run_loopback(url: str, seconds: float, threads: int, server_pid: int) -> None:
    latencies: list[list[float]] = [[] for _ in range(threads)]
    refused = [0] * threads
    stop = threading.Event()

    def worker(n: int) -> None:
        with _client(url) as client:
            client.place_orders(BATCH)  # warm: connection, clock sync
            while not stop.is_set():
                t0 = time.perf_counter()
                results = client.place_orders(BATCH)
                latencies[n].append(time.perf_counter() - t0)
                refused[n] += sum(1 for r in results if r.code != 200)

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    time.sleep(0.3)  # let every worker warm up before counting
    for lat in latencies:
        lat.clear()
    start = time.perf_counter()
    cpu0 = _cpu_seconds(server_pid)
    stop.wait(seconds)
    cpu1 = _cpu_seconds(server_pid)
    stop.set()
    for t in pool:
        t.join(30)
    elapsed = time.perf_counter() - start
    all_lat = sorted(x for lat in latencies for x in lat)
    batches = len(all_lat)
    p50 = statistics.median(all_lat) * 1000
    p99 = all_lat[int(len(all_lat) * 0.99) - 1] * 1000
    print(
        f"loopback, {threads} client threads, {elapsed:.1f} s: {batches / elapsed:,.0f} batches/s "
        f"= {batches * 10 / elapsed:,.0f} orders/s (10-order signed batches, all filled; "
        f"refused {sum(refused)})"
    )
    print(f"  batch round trip: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    if cpu0 is not None and cpu1 is not None and batches:
        busy = (cpu1 - cpu0) / elapsed
        per_batch = (cpu1 - cpu0) / batches
        print(
            f"  server CPU: {busy:.0%} of one core, {per_batch * 1e6:,.0f} µs per batch "
            f"-> about {1 / per_batch:,.0f} batches/s on one free core"
        )


def bench_inprocess(batches: int) -> None:
    sim = make_sim(parse_sim_config(_config_text()), WallClock())
    with _client(SIM_BASE_URL, sim) as client:
        client.place_orders(BATCH)
        start = time.perf_counter()
        for _ in range(batches):
            client.place_orders(BATCH)
        per_order = (time.perf_counter() - start) / (batches * 10)
    print(
        f"in process via SimTransport (client + signing + SimHttp + engine): "
        f"{per_order * 1e6:,.1f} µs/order, {1 / per_order:,.0f} orders/s"
    )
    body = dumps([o.to_wire() for o in BATCH])
    path = "/v3/trade/orders"
    clock = sim.clock
    start = time.perf_counter()
    for _ in range(batches):
        headers = signing.v3_headers(
            key=KEY,
            secret=SECRET,
            timestamp=clock.now_ms(),
            method="POST",
            path=path,
            params={},
            body=body,
        )
        answer = sim.http.handle("POST", path, "", headers, body.encode())
        assert answer.status == 200
    per_order_core = (time.perf_counter() - start) / (batches * 10)
    print(
        f"  SimHttp.handle alone (auth + JSON + engine + envelope): "
        f"{per_order_core * 1e6:,.1f} µs/order; the client adds "
        f"{(per_order - per_order_core) * 1e6:,.1f} µs/order"
    )


def main() -> None:
    seconds = float(os.environ.get("BENCH_SECONDS", "5"))
    threads = int(os.environ.get("BENCH_THREADS", "4"))
    bench_inprocess(batches=2000)
    for n in sorted({1, threads}):
        bench_loopback(seconds, n)
        bench_loopback(seconds, n, kept=True)


if __name__ == "__main__":
    main()
