"""The service cycle's overhead and the process's memory over many cycles.

``python -m bench runner``:

1. Cycle overhead with 20 strategies placing 100 orders a cycle, against the in-process simulator
   through the real client (signing, parsing) — reported with and without the time spent inside the
   simulator's request handler, which stands in for network and exchange time; also as this
   thread's CPU time, which other processes on a shared machine disturb less than the wall clock.
   Then, in a separate run (the timing of each part costs a little itself), where that CPU time
   goes: each part's own time (the parts it calls counted in theirs), per order; the garbage
   collector's pauses are a part of their own.
2. A long-running service: the same cycle's CPU overhead per order (and the rules' activity
   lookups' share of it) over cycles 2-31 and again after a day of one-minute cycles (1,440: the
   default activity window full of each strategy's fires and orders), so a cost that grows with
   the window shows (``BENCH_RUNNER_LONG=0`` leaves it out; ~20 s).
3. Memory (RSS and Python heap) after 1,000 and 10,000 cycles of 20 strategies on simulated time
   (``BENCH_RUNNER_MEMORY=0`` leaves it out).

The machine's reference line (``bench_backtest._reference_s``) comes first, to compare runs.
"""

from __future__ import annotations

import gc
import os
import resource
import statistics
import tempfile
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.bench_backtest import _reference_s
from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.journal import Journal
from botkit.journal.conn import RedactingConnection
from botkit.pipeline.band import BandCheck
from botkit.pipeline.plan import build_plan
from botkit.rules.store import StrategyStore
from botkit.runner import cycle as cycle_module
from botkit.runner.cycle import Runner
from botkit.runner.execution import LiveExecution
from botkit.runner.loop import freeze_start_up
from botkit.runner.orders import Executor
from botkit.service.logs import configure_logging
from botkit.sim.config import SimConfig, load_sim_config
from botkit.sim.inprocess import make_sim
from botkit.sources import FileSource
from tests.pipeline.simharness import client_for

MINUTE = 60_000
T0 = 1_763_000_000_000 - 1_763_000_000_000 % MINUTE

# Five IOC buys under the mark each cycle: sent, cancelled at once by the exchange (no fill), so the
# book and the positions stay flat however many cycles run.
IOC_LADDER = """\
strategy: NAME
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: probe
    when: price.mark > 0
    place:
      ladder: {side: BUY, type: LIMIT, count: LEGS, from_px: price.mark * 0.99,
               step_px: price.mark * 0.001, sz: 1, time_in_force: IOC}
"""


class TimedTransport(httpx.BaseTransport):
    """Measures the time spent inside the simulator (the stand-in for network and exchange):
    wall-clock ``seconds`` and this thread's CPU ``cpu_seconds``."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.requests = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        cpu = time.thread_time()
        try:
            return self.inner.handle_request(request)
        finally:
            self.seconds += time.perf_counter() - started
            self.cpu_seconds += time.thread_time() - cpu
            self.requests += 1


def _config() -> SimConfig:
    config = load_sim_config(None)
    prices = config.prices.model_copy(update={"model": "static"})
    balance = config.balance.model_copy(update={"amount": 10_000_000})
    return config.model_copy(update={"prices": prices, "balance": balance})


def _setup(folder: Path, strategies: int, legs: int) -> tuple[Runner, ManualClock, TimedTransport]:
    clock = ManualClock(T0)
    sim = make_sim(_config(), clock, auto_step=False)
    transport = TimedTransport(sim.transport)
    client = client_for(SIM_BASE_URL, sim.config, local=clock.now_ms, transport=transport)
    key = sim.config.auth.keys[0]
    credentials = (key.key, key.secret.get_secret_value(), key.passphrase.get_secret_value())
    # the service's journal redacts the credentials from every text it stores (secrets_of)
    journal = Journal(
        folder / "journal.sqlite", clock=clock.now_ms, synchronous="NORMAL", secrets=credentials
    )
    (folder / "strategies").mkdir()
    for n in range(strategies):
        text = IOC_LADDER.replace("NAME", f"probe-{n:02d}").replace("LEGS", str(legs))
        (folder / "strategies" / f"probe-{n:02d}.yaml").write_text(text)
    executor = Executor(client, journal, resync=client.resync_clock, batch_rate=None)
    runner = Runner(
        port=client,
        store=StrategyStore(FileSource(folder / "strategies")),
        journal=journal,
        execution=LiveExecution(executor, client, journal),
        now_ms=client.clock.now_ms,
    )
    return runner, clock, transport


def _cycle_overhead() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runner, clock, transport = _setup(Path(tmp), strategies=20, legs=5)
        runner.run_cycle()  # warm-up: file loads, instrument read, imports
        freeze_start_up()  # as the service's loop does after its first cycle
        totals: list[float] = []
        outside: list[float] = []
        outside_cpu: list[float] = []
        for _ in range(30):
            clock.advance(MINUTE)
            inside_before = transport.seconds
            inside_cpu = transport.cpu_seconds
            cpu = time.thread_time()
            report = runner.run_cycle()
            cpu = time.thread_time() - cpu
            assert report.execution is not None
            assert len(report.execution.outcomes) == 100
            totals.append(report.seconds)
            outside.append(report.seconds - (transport.seconds - inside_before))
            outside_cpu.append(cpu - (transport.cpu_seconds - inside_cpu))
        print("cycle with 20 strategies and 100 orders (10 batches), in-process simulator:")
        print(f"  whole cycle       median {statistics.median(totals) * 1000:7.1f} ms")
        print(
            f"  botkit's overhead median {statistics.median(outside) * 1000:7.1f} ms "
            f"({statistics.median(outside) / 100 * 1e6:.0f} µs per order; everything but the "
            "simulator's handler)"
        )
        print(
            f"  ... as CPU time   median {statistics.median(outside_cpu) * 1000:7.1f} ms "
            f"({statistics.median(outside_cpu) / 100 * 1e6:.0f} µs per order; this thread's CPU"
            " — steadier than the wall clock on a shared machine)"
        )


class _Parts:
    """Each wrapped callable's own CPU time (this thread's), less the time of the wrapped
    callables it calls: the parts add up to the whole without counting anything twice."""

    def __init__(self) -> None:
        self.cpu: defaultdict[str, float] = defaultdict(float)
        self._children: list[float] = []

    def timed(self, label: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            self._children.append(0.0)
            try:
                return inner(*args, **kwargs)
            finally:
                spent = time.thread_time() - started
                self.cpu[label] += spent - self._children.pop()
                if self._children:
                    self._children[-1] += spent

        return call

    def wrap(self, owner: Any, name: str, label: str) -> None:
        """Time ``owner.name`` (an instance's method, set on the instance)."""
        setattr(owner, name, self.timed(label, getattr(owner, name)))

    @contextmanager
    def gc_apart(self, label: str) -> Iterator[None]:
        """Count the cyclic garbage collector's pauses as ``label``, not as the part that was
        running when a collection started (whichever allocated then: a full collection over
        the simulator's and the journal's objects moved ±15 µs an order between two parts)."""
        started = [0.0]

        def pause(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                started[0] = time.thread_time()
                return
            spent = time.thread_time() - started[0]
            self.cpu[label] += spent
            if self._children:  # the running part does not count it
                self._children[-1] += spent

        gc.callbacks.append(pause)
        try:
            yield
        finally:
            gc.callbacks.remove(pause)


class _TimedConnection:
    """A SQLite connection whose ``execute`` / ``executemany`` count as the journal's SQL."""

    def __init__(self, conn: Any, parts: _Parts) -> None:
        self._conn = conn
        self.statements = self.commits = 0
        self._execute = parts.timed(_JOURNAL_SQL, conn.execute)
        self._executemany = parts.timed(_JOURNAL_SQL, conn.executemany)

    def execute(self, sql: str, *args: Any) -> Any:
        self.statements += 1
        self.commits += sql == "COMMIT"
        return self._execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self.statements += 1
        return self._executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


_JOURNAL_SQL = "journal: SQLite statements and commits (WAL, synchronous=NORMAL)"


@contextmanager
def _patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    """``owner.name = value`` for the duration (a class's or a module's attribute)."""
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


_CLIENT_REQUESTS = "exchange client: requests (httpx, signing, JSON)"
_CLIENT_MODELS = "exchange client: bodies and answer models"
_SIMULATOR = "simulator's handler (excluded)"


def _breakdown(cycles: int = 30) -> None:
    """Where botkit's overhead goes, per part (a separate run: the timing costs a little)."""
    parts = _Parts()
    with tempfile.TemporaryDirectory() as tmp:
        runner, clock, transport = _setup(Path(tmp), strategies=20, legs=5)
        runner.run_cycle()  # warm-up, untimed
        freeze_start_up()
        journal = runner.journal
        assert isinstance(journal, Journal)
        for name in (
            "begin_cycle", "end_cycle", "add_orders", "mark_sent", "settle", "known_ids",
            "record_cycle_evaluations", "record_event", "activity",
        ):  # fmt: skip
            parts.wrap(journal, name, "journal: rows, JSON, notes (Python)")
        # the journal's statements, commits included, through a timing stand-in for its
        # connection (the journal's private attribute: a benchmark's look inside)
        conn = journal._conn
        if isinstance(conn, RedactingConnection):  # the credentials' search: Python's part
            parts.wrap(conn, "_clean", "journal: rows, JSON, notes (Python)")
        timed = _TimedConnection(conn, parts)
        journal._conn = timed  # type: ignore[assignment]
        client = runner.port
        parts.wrap(client, "_call", _CLIENT_REQUESTS)
        for name in ("place_orders", "limit_price", "tickers", "instruments", "positions",
                     "balance", "open_orders"):  # fmt: skip
            if hasattr(client, name):
                parts.wrap(client, name, _CLIENT_MODELS)
        parts.wrap(transport, "handle_request", _SIMULATOR)
        parts.wrap(runner, "reload", "strategy files (scan, unchanged check)")
        parts.wrap(runner, "_evaluate", "evaluation (rules, intents)")
        parts.wrap(runner, "_record", "evaluation rows (built)")
        parts.wrap(runner.execution, "orders", "executor (rows, submit, retry, outcomes)")
        parts.wrap(runner, "run_cycle", "cycle (the rest: read, keep, controls, report)")
        band = parts.timed("price band re-check (less its read)", BandCheck.__call__)
        plan = parts.timed("planning (validate, round, guards, batches)", build_plan)
        with (
            _patched(BandCheck, "__call__", band),
            _patched(cycle_module, "build_plan", plan),
            parts.gc_apart("the cyclic garbage collector's pauses"),
        ):
            for _ in range(cycles):
                clock.advance(MINUTE)
                runner.run_cycle()
    orders = cycles * 100
    total = sum(v for k, v in parts.cpu.items() if k != _SIMULATOR)
    print(f"where botkit's overhead goes (CPU µs per order, {cycles} cycles timed per part):")
    for label, cpu in sorted(parts.cpu.items(), key=lambda kv: -kv[1]):
        if label != _SIMULATOR:
            print(f"  {cpu / orders * 1e6:6.1f}  {label}")
    print(f"  {total / orders * 1e6:6.1f}  in all (timing included)")
    print(f"  (the journal: {timed.commits / cycles:.0f} commits and"
          f" {timed.statements / cycles:.0f} statements a cycle)")  # fmt: skip
    print(f"  ({parts.cpu[_SIMULATOR] / orders * 1e6:.1f} µs per order in the {_SIMULATOR})")


def _timed_cycles(
    runner: Runner, clock: ManualClock, transport: TimedTransport, cycles: int
) -> tuple[float, float, float]:
    """(median CPU µs per order outside the simulator, median µs per order in the activity
    lookups, mean µs per order in the garbage collector's pauses) over ``cycles`` cycles of 100
    orders."""
    cache = runner.activity
    spent = [0.0]
    get = cache.get
    paused = [0.0, 0.0]

    def pause(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            paused[1] = time.thread_time()
        else:
            paused[0] += time.thread_time() - paused[1]

    def timed_get(strategy: str, window_ms: int) -> Any:
        started = time.thread_time()
        try:
            return get(strategy, window_ms)
        finally:
            spent[0] += time.thread_time() - started

    cache.get = timed_get  # type: ignore[method-assign]
    gc.callbacks.append(pause)
    overhead: list[float] = []
    lookups: list[float] = []
    try:
        for _ in range(cycles):
            clock.advance(MINUTE)
            inside_cpu = transport.cpu_seconds
            spent[0] = 0.0
            cpu = time.thread_time()
            runner.run_cycle()
            cpu = time.thread_time() - cpu
            overhead.append(cpu - (transport.cpu_seconds - inside_cpu))
            lookups.append(spent[0])
    finally:
        del cache.get
        gc.callbacks.remove(pause)
    per_order = 1e6 / 100
    return (
        statistics.median(overhead) * per_order,
        statistics.median(lookups) * per_order,
        paused[0] / cycles * per_order,
    )


def _long_running(day: int = 1_440) -> None:
    """The cycle's overhead fresh and after a day of cycles (the activity window full)."""
    with tempfile.TemporaryDirectory() as tmp:
        runner, clock, transport = _setup(Path(tmp), strategies=20, legs=5)
        runner.run_cycle()
        freeze_start_up()
        fresh = _timed_cycles(runner, clock, transport, 30)
        for _ in range(day - 31 - 30):
            clock.advance(MINUTE)
            runner.run_cycle()
        late = _timed_cycles(runner, clock, transport, 30)
    print("a long-running service (the cycle above; CPU µs per order, median of 30 cycles):")
    print("                        overhead  activity lookups  gc pauses (mean)")
    for label, (overhead, lookups, gc_pauses) in (
        ("cycles 2-31", fresh),
        (f"cycles {day - 29}-{day}", late),
    ):
        print(f"  {label:<20} {overhead:8.1f}  {lookups:16.2f}  {gc_pauses:16.2f}")
    print(
        f"  drift after a day    {late[0] - fresh[0]:+8.1f}  {late[1] - fresh[1]:+16.2f}"
        f"  {late[2] - fresh[2]:+16.2f}  (a day: the default activity window full)"
    )


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _memory(cycles: int = 10_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runner, clock, _ = _setup(Path(tmp), strategies=20, legs=1)
        tracemalloc.start()
        marks: list[tuple[int, float, float, float]] = []
        started = time.perf_counter()
        window: list[float] = []
        for n in range(1, cycles + 1):
            clock.advance(MINUTE)
            window.append(runner.run_cycle().seconds)
            if n in (100, 1_000, 5_000, cycles):
                gc.collect()
                heap = tracemalloc.get_traced_memory()[0] / 2**20
                marks.append((n, _rss_mib(), heap, statistics.median(window) * 1000))
                window.clear()
                print(f"  ... {n} cycles", flush=True)
        tracemalloc.stop()
        elapsed = time.perf_counter() - started
        size = sum(p.stat().st_size for p in Path(tmp).glob("journal.sqlite*")) / 2**20
        print(f"memory over {cycles} cycles of 20 strategies (20 orders a cycle), {elapsed:.0f} s:")
        for n, rss, heap, median in marks:
            print(
                f"  after {n:>6} cycles: max RSS {rss:6.1f} MiB, Python heap {heap:6.1f} MiB, "
                f"median cycle {median:5.1f} ms"
            )
        print(f"  journal size {size:.1f} MiB")


def main(argv: Any = None) -> None:
    configure_logging(level="WARNING", fmt="text")
    print(f"machine {_reference_s():.2f} s for the reference loop (bench_backtest._reference_s)")
    _cycle_overhead()
    _breakdown()
    if os.environ.get("BENCH_RUNNER_LONG", "1") != "0":
        _long_running()
    if os.environ.get("BENCH_RUNNER_MEMORY", "1") != "0":
        _memory()


if __name__ == "__main__":
    main()
