"""A process SIGKILLed after a batch's answer came back and before its outcomes were committed.

The executor holds a batch's outcomes (``Journal.settle(..., hold=True)``) for the cycle's end, and
the send marks of the cycle's batches were reserved with its intents (one commit). Between two
batches the child reads the price band for the next one; the simulator holds that read back (a
latency fault) and the child is killed while it waits. The journal then holds both batches as
*sent without an outcome*: the first reached the exchange, which accepted some of its orders and
refused the others; the second never left. The restarted child's
start-up reconcile must settle them right: every accepted order found by lookup (``accepted``,
with the exchange's ``ordId``), every refused one ``failed`` only because the exchange does not
have it (it cannot rest), the second batch ``failed`` (not at the exchange), no order sent twice.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
    exchange_orders,
    static_config,
)
from tests.pipeline.test_sigkill import _child, _wall_ms

REFUSED_CODE = 51008


class RefusingRecorder(PlacementRecorder):
    """Counts placements like :class:`PlacementRecorder`, and refuses (code 51008, not placed)
    the orders at odd positions of the first batch request."""

    def __init__(self, api: Any) -> None:
        super().__init__(api)
        self.refused: list[str] = []
        self._first = True

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        if not (method == "POST" and path == PLACE and self._first):
            return super().call(method, path, query, body)
        self._first = False
        assert isinstance(body, list)
        kept = [item for n, item in enumerate(body) if n % 2 == 0]
        placed = iter(super().call(method, path, query, kept))
        answers = []
        for n, item in enumerate(body):
            if n % 2 == 0:
                answers.append(next(placed))
            else:
                cid = item["clOrdId"]
                self.refused.append(cid)
                self.rejected[cid] += 1
                answers.append(
                    {"clOrdId": cid, "ordId": "", "code": REFUSED_CODE, "msg": "refused"}
                )
        return answers


@pytest.mark.slow
def test_a_kill_before_the_held_outcomes_are_committed_leaves_them_to_reconcile(
    tmp_path: Path,
) -> None:
    config = static_config()
    sim = make_sim(config, WallClock(), auto_step=False)
    recorder = RefusingRecorder(sim.http.api)
    sim.http.api = recorder
    # the band read before the second batch: the child waits here, batch 1 answered
    band = sim.faults.add(
        "latency", method="GET", path="/v3/market/limitPrice", nth=2, delay_ms=30_000
    )
    journal_path = tmp_path / "journal.sqlite"
    with SimServer(sim.http) as server:
        child = _child(server.url, journal_path, 15)
        deadline = time.monotonic() + 30
        while band.fired < 1:  # batch 1 answered and its outcomes handed to the journal
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never read the band a second time"
            time.sleep(0.01)
        with Journal(journal_path, clock=_wall_ms) as journal:
            held = journal.orders()
        os.kill(child.pid, signal.SIGKILL)
        child.communicate(timeout=10)
        assert child.returncode == -signal.SIGKILL

        # the outcomes were held: every order is sent (the intents' commit reserved both
        # batches' sends), none has an outcome; batch 1 is what reached the exchange
        assert len(held) == 15
        assert all(r.state is OrderState.SENT and r.outcome is None for r in held), held
        assert len(recorder.refused) == 5
        assert sum(recorder.placed.values()) == 5
        sent = set(recorder.refused) | set(recorder.placed)
        first = [r for r in held if r.cl_ord_id in sent]
        unsent = [r for r in held if r.cl_ord_id not in sent]
        assert len(first) == 10

        sim.faults.clear()
        restarted = _child(server.url, journal_path, 15)  # start-up reconcile, same decision
        _, err = restarted.communicate(timeout=60)
        assert restarted.returncode == 0, err.decode()

        client = client_for(server.url, config)
        at_exchange = exchange_orders(client)
        with Journal(journal_path, clock=_wall_ms) as journal:
            rows = {r.cl_ord_id: r for r in journal.orders()}
            for row in first:
                after = rows[row.cl_ord_id]
                if row.cl_ord_id in recorder.refused:  # refused: not at the exchange
                    assert row.cl_ord_id not in at_exchange
                    assert after.outcome is Outcome.FAILED
                    assert "never placed" in after.error
                else:  # accepted, resting: found by lookup, never called failed
                    assert after.outcome is Outcome.ACCEPTED
                    assert after.resolved
                    assert after.ord_id == at_exchange[row.cl_ord_id]
            for row in unsent:  # reserved, never sent: not at the exchange, never sent later
                after = rows[row.cl_ord_id]
                assert row.cl_ord_id not in at_exchange
                assert after.outcome is Outcome.FAILED
                assert recorder.placed[row.cl_ord_id] == 0
            check_invariants(journal, client, recorder)
        client.close()
