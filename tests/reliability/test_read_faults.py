"""Defects the fault matrix found in the read path, each pinned by the test that failed first.

1. A server clock that jumps past the 5 s rule made every signed read fail until the periodic
   re-sync (5 minutes by default; never with on-demand syncing): an expired answer now makes
   the clock due for a re-sync before the next signed request.
2. One transient error on any of a cycle's reads (429, 5xx, a lost connection, an expired
   timestamp) lost the whole cycle: reads are idempotent and are now retried with backoff,
   honouring Retry-After, within a bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.errors import ServerUnavailable, TimestampExpired
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.runner.reader import ReadPolicy, SnapshotReader
from botkit.sim.inprocess import SimHandle, make_sim
from tests.pipeline.simharness import static_config
from tests.runner.conftest import ONE_ORDER, Rig, make_rig

T0 = 1_763_000_000_000


@pytest.fixture
def sim_client() -> Iterator[tuple[SimHandle, ManualClock, ExchangeClient]]:
    clock = ManualClock(T0)
    sim = make_sim(static_config(), clock, auto_step=False)
    key = sim.credential
    client = ExchangeClient(
        SIM_BASE_URL,
        key=key.key,
        secret=key.secret,
        passphrase=key.passphrase,
        clock=ClockSync(local=lambda: clock.now_ms() - clock.offset_ms, interval_ms=300_000),
        transport=sim.transport,
    )
    yield sim, clock, client
    client.close()


def test_an_expired_answer_makes_the_next_signed_request_resync_first(
    sim_client: tuple[SimHandle, ManualClock, ExchangeClient],
) -> None:
    sim, _clock, client = sim_client
    client.resync_clock()
    sim.faults.set_skew(7_000)  # the server clock jumps 7 s ahead
    with pytest.raises(TimestampExpired):
        client.balance()
    client.balance()  # re-synced on its own: no 5-minute wait for the periodic re-sync
    assert client.clock.offset_ms == 7_000


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path)
    r.write("one.yaml", ONE_ORDER)
    yield r
    r.client.close()
    r.journal.close()


def _reader(rig: Rig, sleeps: list[float]) -> SnapshotReader:
    return SnapshotReader(rig.client, sleep=sleeps.append)


def test_transient_read_errors_are_retried_within_the_cycle(rig: Rig) -> None:
    sleeps: list[float] = []
    rig.runner.reader = _reader(rig, sleeps)
    rig.client.resync_clock()
    rig.sim.faults.add("http_503", method="GET", path="/v3/market/tickers", times=2)
    rig.sim.faults.add(
        "rate_limit", method="GET", path="/v3/trade/order/opens", times=1, retry_after=0.3
    )
    rig.sim.faults.add("drop_before", method="GET", path="/v3/trade/position/opens", nth=1)
    report = rig.runner.run_cycle()
    assert report.ok, report.error
    assert report.execution is not None
    assert len(report.execution.outcomes) == 1
    # in the order the cycle asks: open orders (keep_open), tickers (twice), positions
    assert sleeps == [0.3, 0.2, 0.4, 0.2]


def test_a_clock_jump_costs_no_cycle(rig: Rig) -> None:
    rig.runner.reader = _reader(rig, [])
    rig.client.resync_clock()
    rig.sim.faults.set_skew(-7_000)
    report = rig.runner.run_cycle()
    assert report.ok, report.error


def test_read_retries_are_bounded(rig: Rig) -> None:
    sleeps: list[float] = []
    rig.runner.reader = SnapshotReader(rig.client, ReadPolicy(attempts=3), sleep=sleeps.append)
    rig.client.resync_clock()
    rig.sim.faults.add("http_500", method="GET", path="/v3/market/tickers")
    report = rig.runner.run_cycle()
    assert "read failed" in report.error
    assert len(sleeps) == 2
    with pytest.raises(ServerUnavailable):
        rig.client.tickers()
