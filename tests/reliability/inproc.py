"""One matrix row in process: the real :class:`Runner` and :class:`Loop` against the in-process
simulator on a manual clock, with the fault plan of the row armed.

The wiring mirrors :func:`botkit.app.service.assemble` (the service's): the settings' client
(clock re-sync every 300 s, 10 s timeout unless the row says otherwise), the executor with its
default retry policy, the live execution adapter. Only time differs: the local clock is a
:class:`ManualClock` that sleeps advance, and the loop waits by moving it (exactly as
``RealTimeWaiter`` waits on the service's estimate of exchange time). Every loop is bounded in
cycles and in waits; nothing touches a socket.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from botkit.app.clients import make_client
from botkit.app.service import grace_ms
from botkit.clock import ManualClock
from botkit.journal import Journal
from botkit.live.client import ExchangeClient
from botkit.pipeline import GuardSettings
from botkit.rules.store import StrategyStore
from botkit.runner.cycle import CycleReport, Runner
from botkit.runner.execution import LiveExecution
from botkit.runner.loop import Loop
from botkit.runner.orders import Executor
from botkit.runner.reader import SnapshotReader
from botkit.settings import load_settings
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimServer
from botkit.sources import FileSource
from tests.reliability.harness import (
    LADDER_RUNGS,
    PERIOD_MS,
    Recorder,
    Tally,
    matrix_sim_config,
    tally,
    write_strategy,
)

__all__ = ["T0", "Arm", "InProcessRun", "Paper", "build_paper", "run_in_process"]

T0 = 1_763_000_000_000 - (1_763_000_000_000 % PERIOD_MS)
"""Local start time, on a minute boundary."""

Arm = Callable[[SimHandle, int], None]
"""``arm(sim, cycle)``: called before each cycle (cycle 0 before the first) to set the row's
faults; the start-up sync happens before cycle 0's arm, so skews set there are jumps."""


class _Waiter:
    """Waits by advancing the local clock to the service's estimate of ``target_ms``."""

    def __init__(self, clock: ManualClock, now_ms: Callable[[], int], max_waits: int) -> None:
        self.clock = clock
        self.now_ms = now_ms
        self.waits = 0
        self.max_waits = max_waits
        self.on_exhausted: Callable[[], None] = lambda: None

    def wait_until(self, target_ms: int, wake: threading.Event) -> None:
        self.waits += 1
        if self.waits > self.max_waits:  # a loop that stopped making progress: end the row
            self.on_exhausted()
            return
        if wake.is_set():
            return
        self.clock.advance(max(1, target_ms - self.now_ms()))


@dataclass
class InProcessRun:
    tally: Tally
    reports: list[CycleReport]


def run_in_process(
    row: str,
    arm: Arm,
    *,
    cycles: int,
    seed: int = 1,
    timeout_s: float = 10.0,
    loopback: bool = False,
    folder: Path | None = None,
    extra_strategies: Mapping[str, str] | None = None,
    refusals: bool = True,
) -> InProcessRun:
    """Run ``cycles`` cycles of the ladder strategy under the row's faults; tally the result.

    ``loopback`` serves the simulator on 127.0.0.1 (uvicorn) instead of the in-process transport
    (the socket-level faults: real dropped connections and read timeouts). ``extra_strategies``
    (file name → text) run beside the ladder; ``refusals=False`` makes the row red when the
    exchange refuses any order (a row whose load botkit must check locally).
    """
    with tempfile.TemporaryDirectory(prefix="botkit-matrix-") as tmp:
        folder = Path(folder or tmp)
        for name, text in (extra_strategies or {}).items():
            (folder / "strategies").mkdir(parents=True, exist_ok=True)
            (folder / "strategies" / name).write_text(text)
        run = _run(row, arm, cycles, seed, timeout_s, loopback, folder)
    if not refusals:
        run.tally.refusals_allowed = False
    return run


@dataclass
class Paper:
    """The service wired in process on a manual clock (see the module doc)."""

    clock: ManualClock
    sim: SimHandle
    recorder: Recorder
    client: ExchangeClient
    journal: Journal
    executor: Executor
    runner: Runner
    sleep: Callable[[float], None]
    server: SimServer | None = None

    def local_ms(self) -> int:
        return self.clock.now_ms() - self.clock.offset_ms

    def loop(
        self, cycles: int, on_cycle: Callable[[CycleReport], None], max_waits: int | None = None
    ) -> Loop:
        """A :class:`Loop` on this service whose waits move the clock (bounded)."""
        waiter = _Waiter(self.clock, self.runner.now_ms, max_waits or cycles * 4 + 10)
        loop = Loop(
            self.runner,
            waiter,
            sync=self.client.clock.maybe_resync,
            on_cycle=on_cycle,
            retry_sync_s=0.0,
            sleep=self.sleep,
        )
        waiter.on_exhausted = loop.request_stop
        return loop

    def close(self) -> None:
        self.client.close()
        self.journal.close()
        if self.server is not None:
            self.server.stop()


def build_paper(
    folder: Path,
    *,
    seed: int = 1,
    timeout_s: float = 10.0,
    loopback: bool = False,
    rungs: int = LADDER_RUNGS,
    monotonic: Callable[[], float] | None = None,
) -> Paper:
    """Wire the ladder strategy, the simulator (and its recorder), client, journal, executor
    and runner in ``folder``; ``monotonic`` times the cycles (default: the manual clock)."""
    clock = ManualClock(T0)

    def local_ms() -> int:
        return clock.now_ms() - clock.offset_ms

    def sleep(seconds: float) -> None:
        clock.advance(max(0, round(seconds * 1000)))

    config = matrix_sim_config().model_copy(update={"seed": seed})
    sim = make_sim(config, clock, sleep=sleep, auto_step=False)
    recorder = Recorder(sim.http.api)
    sim.http.api = recorder
    strategies = folder / "strategies"
    write_strategy(strategies, rungs=rungs)
    server = SimServer(sim.http).start() if loopback else None
    key = sim.credential
    where: dict[str, object] = (
        {
            "exchange": "live",
            "base_url": server.url,
            "api_key": key.key,
            "api_secret": key.secret.get_secret_value(),
            "api_passphrase": key.passphrase.get_secret_value(),
        }
        if server is not None
        else {"exchange": "sim"}
    )
    settings = load_settings(
        env_file=None,
        config=_empty_config(folder),
        request_timeout=timeout_s,
        journal=folder / "journal.sqlite",
        strategies_dir=strategies,
        **where,
    )
    client = make_client(
        settings, transport=None if server else sim.transport, local_clock=local_ms
    )
    journal = Journal(folder / "journal.sqlite", clock=local_ms, synchronous="OFF")
    executor = Executor(
        client,
        journal,
        resync=client.resync_clock,
        sleep=sleep,
        rng=random.Random(seed),
        batch_rate=None,
        monotonic=lambda: local_ms() / 1000,
        reconcile_grace_ms=grace_ms(settings),
    )
    runner = Runner(
        port=client,
        store=StrategyStore(FileSource([strategies])),
        journal=journal,
        execution=LiveExecution(executor, client, journal),
        now_ms=client.clock.now_ms,
        guards=GuardSettings.from_settings(settings),
        reader=SnapshotReader(client, sleep=sleep),
        clock_offset_ms=lambda: client.clock.offset_ms if client.clock.last_sync else None,
        monotonic=monotonic or (lambda: local_ms() / 1000),
    )
    return Paper(clock, sim, recorder, client, journal, executor, runner, sleep, server)


def _run(
    row: str,
    arm: Arm,
    cycles: int,
    seed: int,
    timeout_s: float,
    loopback: bool,
    folder: Path,
) -> InProcessRun:
    started = time.monotonic()
    paper = build_paper(folder, seed=seed, timeout_s=timeout_s, loopback=loopback)
    sim = paper.sim
    reports: list[CycleReport] = []
    jumps = 0

    def on_cycle(report: CycleReport) -> None:
        nonlocal jumps
        reports.append(report)
        if len(reports) < cycles:
            skew = sim.faults.skew_ms
            arm(sim, len(reports))
            jumps += int(sim.faults.skew_ms != skew)

    loop = paper.loop(cycles, on_cycle)
    try:
        paper.client.clock.resync()
        arm(sim, 0)
        jumps = int(sim.faults.skew_ms != 0)
        loop.run(cycles)
        # The end of the run: faults gone, the service restarts (start-up reconcile, which
        # sleeps out the grace of requests that may still be in flight).
        faults = sim.faults.total + jumps
        sim.faults.clear()
        paper.executor.reconcile(wait=True)
        last_ms = max((r.now_ms for r in reports), default=T0)
        slots = (last_ms // PERIOD_MS) - (T0 // PERIOD_MS) + 1
        result = tally(
            row,
            paper.journal,
            paper.recorder,
            slots=slots,
            faults=faults,
            seconds=time.monotonic() - started,
        )
    finally:
        paper.close()
    errors = {r.error.split(":")[0] for r in reports if r.error}
    if errors:
        result.notes.append("cycle errors: " + "; ".join(sorted(errors)))
    return InProcessRun(result, reports)


def _empty_config(folder: Path) -> Path:
    path = folder / "botkit.toml"
    path.write_text("")
    return path
