"""A process SIGKILLed between writing its intents and recording their results, then restarted.

The child process drives the pipeline against ``SimServer`` on loopback; the first batch is
processed by the exchange but its answer is held back (a latency fault), and the child is killed
while it waits. The restarted child runs the same decision again: start-up reconcile settles every
intent by lookup before anything is sent, and the same client order ids are never sent again.
The intents' commit reserved the sends of both batches (no commit per batch): the journal holds
all 15 as *sent* (may have left), and reconcile finds which did.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from botkit.clock import WallClock
from botkit.journal import Journal, OrderState, Outcome
from botkit.sim.inprocess import make_sim
from botkit.sim.server import SimServer
from tests.pipeline.simharness import (
    PLACE,
    PlacementRecorder,
    check_invariants,
    client_for,
    static_config,
)

ROOT = Path(__file__).resolve().parents[2]


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _child(url: str, journal: Path, count: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTKIT_")}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.pipeline.simharness", url, str(journal), str(count)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_sigkill_while_waiting_then_restart_settles_everything(tmp_path: Path) -> None:
    config = static_config()
    sim = make_sim(config, WallClock(), auto_step=False)
    recorder = PlacementRecorder(sim.http.api)
    sim.http.api = recorder
    sim.faults.add("latency", method="POST", path=PLACE, delay_ms=3_000)
    journal_path = tmp_path / "journal.sqlite"
    with SimServer(sim.http) as server:
        child = _child(server.url, journal_path, 15)
        deadline = time.monotonic() + 30
        while sum(recorder.placed.values()) < 10:  # the exchange has processed batch 1
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never sent its first batch"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.communicate(timeout=10)
        assert child.returncode == -signal.SIGKILL

        with Journal(journal_path, clock=_wall_ms) as journal:
            # the intents' commit reserved the sends of both batches: all 15 may have left
            states = sorted(r.state.value for r in journal.unsettled())
            assert states == [OrderState.SENT.value] * 15

        sim.faults.clear()
        restarted = _child(server.url, journal_path, 15)  # the same decision, after a restart
        _, err = restarted.communicate(timeout=60)
        assert restarted.returncode == 0, err.decode()

        client = client_for(server.url, config)
        with Journal(journal_path, clock=_wall_ms) as journal:
            rows = journal.orders()
            accepted = [r for r in rows if r.outcome is Outcome.ACCEPTED]
            failed = [r for r in rows if r.outcome is Outcome.FAILED]
            assert len(accepted) == 10
            assert all(r.resolved for r in accepted)
            assert len(failed) == 5  # batch 2, never sent: not at the exchange
            assert all("never placed" in r.error for r in failed)
            assert not any(recorder.placed[r.cl_ord_id] for r in failed)
            check_invariants(journal, client, recorder)
        client.close()
