"""Issue 14 item 7: a stop request cuts every wait of a cycle short (one mechanism, the service's
:class:`Stop`, injected as ``sleep``): a 429's minute-long ``Retry-After`` does not hold a
SIGTERM, and the orders whose fate is open stay unsettled for the next start's reconcile."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.clock import ManualClock, Stop
from botkit.errors import StopRequested
from botkit.journal import Journal
from botkit.sim.inprocess import make_sim
from tests.pipeline.simharness import PLACE, client_for, ladder, run_pipeline, static_config

T0 = 1_763_000_000_000


def test_a_stop_ends_a_retry_after_wait_at_once_and_leaves_the_orders_for_reconcile(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    sim = make_sim(static_config(), clock, auto_step=False)
    rule = sim.faults.add("rate_limit", method="POST", path=PLACE, retry_after=60)
    stop = Stop()
    stop.set()  # SIGTERM came while the batch was on the wire
    with (
        client_for(
            "http://sim.invalid", sim.config, local=clock.now_ms, transport=sim.transport
        ) as client,
        Journal(tmp_path / "j.sqlite", clock=clock.now_ms) as journal,
    ):
        with pytest.raises(StopRequested):
            run_pipeline(client, journal, ladder(3), sleep=stop.sleep)
        rows = journal.orders()
    assert rule.seen == 1  # no retry was sent
    assert len(rows) == 3
    assert all(r.outcome is None for r in rows)  # unsettled: the next start looks them up


def test_stop_sleep_sleeps_until_asked_to_stop() -> None:
    stop = Stop()
    stop.sleep(0)  # not asked: returns
    stop.set()
    with pytest.raises(StopRequested):
        stop.sleep(3600)
