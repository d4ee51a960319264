"""The process rows of the fault matrix: the real ``botkit run`` as a subprocess against the
simulator served on loopback (``SimServer``, wall clock), killed and restarted.

* SIGKILL: the service is killed at a random moment of a cycle (batches held 50–150 ms by a
  latency fault so kills land mid-batch too), restarted, killed again…; at the end one more
  ``botkit run --once`` — whose start-up reconcile is the recovery path — and the tally.
* SIGTERM: the service is asked to stop while a batch is in flight (held 300 ms); it must
  finish the cycle, record every outcome and exit 0 — the journal is checked *without* any
  later reconcile.
* Two instances: a second ``botkit run`` on the journal a running one holds, while the first
  one's batches are held in flight by 429s; the second must refuse to start (one line, non-zero
  exit) and the first must run on undisturbed.

Every wait is bounded; the server binds 127.0.0.1 only.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from botkit.clock import WallClock
from botkit.journal import Journal
from botkit.sim.config import ApiKeyConfig
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimServer
from tests.reliability.harness import (
    PLACE,
    Recorder,
    Tally,
    matrix_sim_config,
    tally,
    write_strategy,
)

__all__ = [
    "KEY",
    "PASSPHRASE",
    "SECRET",
    "Service",
    "run_sigkill",
    "run_sigterm",
    "run_two_instances",
]

ROOT = Path(__file__).resolve().parents[2]
KEY, SECRET, PASSPHRASE = "matrix-key-7f3a", "matrix-secret-Q9/+=zz", "matrix-pass-phrase"
PERIOD_S = 2
START_TIMEOUT_S = 30.0


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class Service:
    """A loopback simulator, its recorder, and how to start ``botkit`` against it."""

    sim: SimHandle
    recorder: Recorder
    server: SimServer
    folder: Path
    env: dict[str, str]

    @property
    def journal(self) -> Path:
        return self.folder / "journal.sqlite"

    def start(self, *args: str, log: str = "run") -> subprocess.Popen[bytes]:
        out = (self.folder / f"{log}.out").open("ab")
        err = (self.folder / f"{log}.err").open("ab")
        try:
            return subprocess.Popen(
                [sys.executable, "-m", "botkit", "run", *args],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=err,
            )
        finally:
            out.close()
            err.close()

    def output(self, log: str = "run") -> str:
        parts = [self.folder / f"{log}.out", self.folder / f"{log}.err"]
        return "".join(p.read_text(errors="replace") for p in parts if p.exists())

    def placed(self) -> int:
        return sum(self.recorder.placements.values())


def make_service(folder: Path, *, extra_env: dict[str, str] | None = None) -> Service:
    config = matrix_sim_config()
    key = ApiKeyConfig(key=KEY, secret=SECRET, passphrase=PASSPHRASE)
    config = config.model_copy(update={"auth": config.auth.model_copy(update={"keys": [key]})})
    sim = make_sim(config, WallClock(), auto_step=False)
    recorder = Recorder(sim.http.api)
    sim.http.api = recorder
    strategies = folder / "strategies"
    write_strategy(strategies, every=f"{PERIOD_S}s")
    (folder / "botkit.toml").write_text("")
    server = SimServer(sim.http).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTKIT_", "NOTIFY_"))}
    env.update(
        BOTKIT_CONFIG=str(folder / "botkit.toml"),
        BOTKIT_EXCHANGE="live",
        BOTKIT_BASE_URL=server.url,
        BOTKIT_API_KEY=KEY,
        BOTKIT_API_SECRET=SECRET,
        BOTKIT_API_PASSPHRASE=PASSPHRASE,
        BOTKIT_STRATEGIES_DIR=str(strategies),
        BOTKIT_JOURNAL=str(folder / "journal.sqlite"),
        BOTKIT_REQUEST_TIMEOUT="2",
        BOTKIT_JOURNAL_SYNCHRONOUS="NORMAL",
        BOTKIT_LOG_FORMAT="json",
    )
    env.update(extra_env or {})
    return Service(sim, recorder, server, folder, env)


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _more_than(service: Service, count: int) -> Callable[[], bool]:
    return lambda: service.placed() > count


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def _tally(service: Service, row: str, *, faults: int, started: float) -> Tally:
    """The row's figures from the journal the runs left and the exchange's recorder."""
    with Journal(service.journal, clock=_wall_ms) as journal:
        slots = [r.slot for r in journal.orders()]
        span = max(slots) - min(slots) + 1 if slots else 0
        return tally(
            row,
            journal,
            service.recorder,
            slots=span,
            faults=faults,
            seconds=time.monotonic() - started,
        )


def run_sigkill(row: str, *, kills: int, seed: int = 7, folder: Path | None = None) -> Tally:
    """Kill ``botkit run`` ``kills`` times at random moments, restart it each time, finish with
    ``botkit run --once``; tally (the last run's start-up reconcile is the final reconcile)."""
    rng = random.Random(seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="botkit-matrix-kill-") as tmp:
        service = make_service(folder or Path(tmp))
        try:
            service.sim.faults.add(
                "latency", method="POST", path=PLACE, delay_ms=50, probability=1.0
            )
            service.sim.faults.add("latency", method="POST", path=PLACE, delay_ms=100, every=2)
            interrupted = 0
            for _ in range(kills):
                proc = service.start()
                try:  # up and placing, then a random moment within the next cycle
                    try:
                        _wait(_more_than(service, service.placed()), START_TIMEOUT_S, "orders")
                    except TimeoutError as exc:
                        tail = service.output()[-2000:]
                        raise TimeoutError(f"{exc}; the service said: {tail}") from None
                    time.sleep(rng.uniform(0.0, PERIOD_S * 1.2))
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
                finally:
                    _stop(proc)
                with Journal(service.journal, clock=_wall_ms) as journal:
                    interrupted += int(bool(journal.unsettled()))
            service.sim.faults.clear()
            final = service.start("--once", log="final")
            try:
                final.wait(timeout=60)
            finally:
                _stop(final)
            if final.returncode != 0:
                raise RuntimeError(f"the final run failed: {service.output('final')[-500:]}")
            result = _tally(service, row, faults=kills, started=started)
            result.notes.append(f"{kills} kills, {interrupted} of them mid-batch")
            if "Traceback" in service.output() + service.output("final"):
                result.notes.append("a traceback was printed")
                result.mismatches += 1  # fail the row: an operator must never see one
            return result
        finally:
            service.server.stop()


def run_sigterm(row: str, *, stops: int, folder: Path | None = None) -> Tally:
    """Ask ``botkit run`` to stop (SIGTERM) while a batch is in flight, ``stops`` times; the
    journal must be settled with no later reconcile, every run must exit 0."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="botkit-matrix-term-") as tmp:
        service = make_service(folder or Path(tmp))
        problems: list[str] = []
        try:
            service.sim.faults.add("latency", method="POST", path=PLACE, delay_ms=300)
            for n in range(stops):
                before = service.placed()
                proc = service.start(log=f"term{n}")
                try:
                    _wait(_more_than(service, before), START_TIMEOUT_S, "the first batch")
                    proc.send_signal(signal.SIGTERM)  # the next batch is on its way now
                    code = proc.wait(timeout=30)
                finally:
                    _stop(proc)
                text = service.output(f"term{n}")
                if code != 0:
                    problems.append(f"exit {code}")
                if "SIGTERM received" not in text or "Traceback" in text:
                    problems.append("no clean SIGTERM log")
            result = _tally(service, row, faults=stops, started=started)
        finally:
            service.server.stop()
    result.notes.append(f"{stops} stops" + (f"; {', '.join(problems)}" if problems else ""))
    if problems:
        result.mismatches += len(problems)
    return result


def run_two_instances(row: str, *, cycles: int = 3, folder: Path | None = None) -> Tally:
    """Start ``botkit run`` twice on one journal, the first one's batches held in flight by
    429s (``Retry-After`` 0.5 s); the second must refuse to start (a one-line error, exit not
    0), the first runs ``cycles`` periods more and is stopped (SIGTERM); a final
    ``botkit run --once`` reconciles; tally."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="botkit-matrix-two-") as tmp:
        service = make_service(folder or Path(tmp))
        problems: list[str] = []
        try:
            service.sim.faults.add(
                "rate_limit", method="POST", path=PLACE, every=2, retry_after=0.5
            )
            first = service.start(log="first")
            second: subprocess.Popen[bytes] | None = None
            try:
                _wait(_more_than(service, 0), START_TIMEOUT_S, "the first instance's orders")
                second = service.start(log="second")
                try:
                    code = second.wait(timeout=PERIOD_S * (cycles + 2))
                except subprocess.TimeoutExpired:
                    code = None
                    problems.append("the second instance was not refused: it ran alongside")
                else:
                    said = service.output("second")
                    last = said.strip().splitlines()[-1] if said.strip() else ""
                    refused = (
                        last.startswith("error: ")
                        and "journal" in last
                        and "already settled" not in said  # ran, then tripped over the first
                    )
                    if code == 0 or not refused or "Traceback" in said:
                        problems.append(f"the second instance was not refused: exit {code}, {last}")
                time.sleep(PERIOD_S * cycles if code is not None else 0)
                first.send_signal(signal.SIGTERM)
                if first.wait(timeout=60) != 0:
                    problems.append(f"the first instance exited {first.returncode}")
            finally:
                _stop(first)
                if second is not None:
                    _stop(second)
            service.sim.faults.clear()
            final = service.start("--once", log="final")
            try:
                final.wait(timeout=90)
            finally:
                _stop(final)
            if final.returncode != 0:
                problems.append(f"the final run exited {final.returncode}")
            if "Traceback" in service.output("first") + service.output("final"):
                problems.append("a traceback was printed")
            result = _tally(service, row, faults=service.sim.faults.total, started=started)
        finally:
            service.server.stop()
    result.notes.append("; ".join(problems) or "the second instance was refused")
    result.mismatches += len(problems)  # fail the row: each is a broken promise
    return result
