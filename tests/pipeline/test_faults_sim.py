"""Fault cases against the simulator's fault injection, through the real client, in process and
over loopback HTTP (uvicorn).

In every case: no client order id placed twice, every order exactly one final outcome in the
journal, and the exchange's view equals the journal's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.journal import Journal, Outcome
from botkit.live.client import ExchangeClient
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimServer
from tests.pipeline.simharness import (
    PLACE,
    PlacementRecorder,
    check_invariants,
    client_for,
    ladder,
    run_pipeline,
    static_config,
)

T0 = 1_700_000_000_000


@dataclass
class Rig:
    sim: SimHandle
    clock: ManualClock
    client: ExchangeClient
    journal: Journal
    recorder: PlacementRecorder
    sleeps: list[float]
    resyncs: list[int]

    def run(self, count: int = 25, *, concurrency: int = 1) -> object:
        def resync() -> object:
            self.resyncs.append(1)
            return self.client.resync_clock()

        return run_pipeline(
            self.client,
            self.journal,
            ladder(count),
            resync=resync,
            sleep=self.sleeps.append,
            concurrency=concurrency,
        )


@pytest.fixture(scope="module")
def loopback() -> Iterator[SimServer]:
    with SimServer(make_sim(static_config(), ManualClock(T0), auto_step=False).http) as server:
        yield server


@pytest.fixture(params=["inprocess", "loopback"])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    clock = ManualClock(T0)
    sim_sleeps: list[float] = []
    sim = make_sim(static_config(), clock, sleep=sim_sleeps.append, auto_step=False)
    recorder = PlacementRecorder(sim.http.api)
    sim.http.api = recorder
    if request.param == "loopback":
        server: SimServer = request.getfixturevalue("loopback")
        server.use(sim.http)
        url, transport, timeout = server.url, None, 1.0
    else:
        url, transport, timeout = SIM_BASE_URL, sim.transport, 1.0
    client = client_for(
        url,
        sim.config,
        local=lambda: clock.now_ms() - clock.offset_ms,
        transport=transport,
        timeout=timeout,
    )
    with Journal(tmp_path / "journal.sqlite", clock=clock.now_ms) as journal:
        yield Rig(sim, clock, client, journal, recorder, [], [])
    client.close()


def outcomes(report: object) -> list[Outcome]:
    return [o.outcome for o in report.outcomes]  # type: ignore[attr-defined]


def test_no_fault_places_every_order_once(rig: Rig) -> None:
    report = rig.run()
    assert outcomes(report) == [Outcome.ACCEPTED] * 25
    assert rig.sleeps == []
    check_invariants(rig.journal, rig.client, rig.recorder)


def test_server_clock_seven_seconds_ahead_on_the_first_try(rig: Rig) -> None:
    rig.client.resync_clock()  # in sync ...
    rig.clock.offset_ms = 7_000  # ... then the server clock jumps ahead
    report = rig.run()
    assert rig.resyncs == [1], "one re-sync, then every batch goes through"
    assert outcomes(report) == [Outcome.ACCEPTED] * 25
    assert rig.sleeps == [0.0]
    assert rig.sim.faults.counts == {}
    check_invariants(rig.journal, rig.client, rig.recorder)


def test_429_burst_waits_as_told(rig: Rig) -> None:
    rig.sim.faults.add("rate_limit", method="POST", path=PLACE, times=3, retry_after=0.25)
    report = rig.run()
    assert rig.sleeps == [0.25, 0.25, 0.25]
    assert outcomes(report) == [Outcome.ACCEPTED] * 25
    check_invariants(rig.journal, rig.client, rig.recorder)


@pytest.mark.parametrize("kind", ["http_500", "http_503"])
def test_server_errors_are_looked_up_and_resent_only_after_the_acceptance_window(
    rig: Rig, kind: str
) -> None:
    # a 5xx does not prove the batch was refused: look its orders up; not found, wait until the
    # request can no longer be accepted (15 s: 5 s window + 10 s timeout), look again, re-send
    rig.sim.faults.add(kind, method="POST", path=PLACE, times=2)
    report = rig.run()
    assert len(rig.sleeps) == 2
    assert all(14 < s <= 15 for s in rig.sleeps), rig.sleeps
    assert outcomes(report) == [Outcome.ACCEPTED] * 25
    check_invariants(rig.journal, rig.client, rig.recorder)


@pytest.mark.parametrize(
    ("kind", "options", "resent"),
    [
        ("drop_after", {}, False),
        ("truncated", {}, False),
        ("latency", {"delay_ms": 1_500}, False),  # past the client's timeout
        ("drop_before", {}, True),
        ("html", {}, True),
    ],
    ids=["dropped_after_accept", "truncated_body", "timeout", "dropped_before", "html_page"],
)
def test_ambiguous_answers_are_settled_by_lookup_never_blindly_resent(
    rig: Rig, kind: str, options: dict[str, int], resent: bool
) -> None:
    rig.sim.faults.add(kind, method="POST", path=PLACE, nth=2, **options)
    report = rig.run()
    assert outcomes(report) == [Outcome.ACCEPTED] * 25
    resolved = [o.cl_ord_id for o in report.outcomes if o.resolved]  # type: ignore[attr-defined]
    assert resolved == ([] if resent else [f"ladder-buy-{n}" for n in range(10, 20)])
    check_invariants(rig.journal, rig.client, rig.recorder)


def test_lookups_survive_their_own_faults(rig: Rig) -> None:
    rig.sim.faults.add("drop_after", method="POST", path=PLACE, nth=1)
    rig.sim.faults.add("http_503", method="GET", path="/v3/trade/order/opens", times=2)
    report = rig.run(10)
    assert outcomes(report) == [Outcome.ACCEPTED] * 10
    check_invariants(rig.journal, rig.client, rig.recorder)


def test_concurrent_batches_under_faults(rig: Rig) -> None:
    rig.sim.faults.add("drop_after", method="POST", path=PLACE, every=3)
    rig.sim.faults.add("rate_limit", method="POST", path=PLACE, nth=2, retry_after=0.1)
    report = rig.run(50, concurrency=3)
    assert outcomes(report) == [Outcome.ACCEPTED] * 50
    check_invariants(rig.journal, rig.client, rig.recorder)
