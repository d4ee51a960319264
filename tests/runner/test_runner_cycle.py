"""The runner's cycle against the in-process simulator: orders, dry runs, reloads, failures."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from botkit.journal import OrderFilter, Outcome
from botkit.pipeline import GuardSettings, RiskLimits
from botkit.runner.reader import SnapshotReader
from botkit.service.metrics import Metrics
from botkit.sim.faults import FaultKind
from tests.runner.conftest import ONE_ORDER, Rig, make_rig, open_orders

MINUTE = 60_000


def test_a_firing_rule_places_its_order_and_the_journal_records_the_outcome(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    report = rig.runner.run_cycle()
    assert report.ok
    assert report.due == ("one-order",)
    orders = open_orders(rig)
    assert [(o.px, o.sz) for o in orders] == [(Decimal("59400.0"), Decimal("2"))]
    rows = rig.journal.orders(OrderFilter())
    assert [(r.cl_ord_id, r.outcome) for r in rows] == [(orders[0].clOrdId, Outcome.ACCEPTED)]
    assert rows[0].ord_id == orders[0].ordId


def test_keep_open_does_not_replace_resting_orders_in_later_cycles(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert report.plan is not None
    assert report.plan.accepted == ()
    assert len(open_orders(rig)) == 1


def test_a_strategy_is_evaluated_once_per_period(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    first = rig.runner.run_cycle()
    again = rig.runner.run_cycle()
    assert first.cycle_id is not None
    assert again.cycle_id is None  # not due yet: no cycle, nothing read
    assert rig.runner.next_due_ms() == first.now_ms + MINUTE


def test_dry_run_reads_but_sends_nothing_and_journals_the_plan(dry_rig: Rig) -> None:
    dry_rig.write("one.yaml", ONE_ORDER)
    report = dry_rig.runner.run_cycle()
    assert report.plan is not None
    assert len(report.plan.accepted) == 1
    assert open_orders(dry_rig) == []
    assert ("POST", "/v3/trade/orders") not in dry_rig.transport.calls
    assert ("GET", "/v3/trade/position/opens") in dry_rig.transport.calls  # the account is read
    rows = dry_rig.journal.orders(OrderFilter(include_dry=True))
    assert [r.outcome for r in rows] == [Outcome.DRY_RUN]


def test_each_endpoint_is_read_once_per_cycle_however_many_strategies(rig: Rig) -> None:
    for n in range(5):
        rig.write(f"s{n}.yaml", ONE_ORDER.replace("one-order", f"strategy-{n}"))
    rig.runner.run_cycle()  # first cycle also reads instruments for the checks
    rig.transport.calls.clear()
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert len(report.due) == 5
    reads = {k: v for k, v in rig.transport.calls.items() if k[0] == "GET"}
    assert reads, "the cycle read nothing"
    assert all(count == 1 for count in reads.values()), reads
    assert ("GET", "/v3/market/allInstruments") not in reads  # cached


def test_a_valid_change_takes_effect_at_the_next_cycle(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    rig.write(
        "one.yaml",
        ONE_ORDER.replace("keep_open: true", "keep_open: false").replace("sz: 2", "sz: 3"),
    )
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert report.reload is not None
    assert [s.name for s in report.reload.changed] == ["one-order"]
    assert sorted(o.sz for o in open_orders(rig)) == [Decimal(2), Decimal(3)]


def test_an_invalid_change_keeps_the_last_good_version_and_says_where(rig: Rig) -> None:
    path = rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    rig.write("one.yaml", ONE_ORDER.replace("when: price.mark > 0", "when: price.mrak > 0"))
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert report.reload is not None
    assert report.reload.errors
    message = str(report.reload.errors[0])
    assert message.startswith(f"{path}:6:17: ")
    assert "did you mean 'mark'" in message
    assert report.due == ("one-order",)  # the last good version still runs


def test_a_deleted_file_stops_the_strategy_and_cancels_its_orders(rig: Rig) -> None:
    path = rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    assert len(open_orders(rig)) == 1
    path.unlink()
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert report.reload is not None
    assert [s.name for s in report.reload.removed] == ["one-order"]
    assert report.cycle_id is None
    assert open_orders(rig) == []


def test_a_failing_read_is_journaled_and_the_next_cycle_goes_on(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    sleeps: list[float] = []
    rig.runner.reader = SnapshotReader(rig.client, sleep=sleeps.append)
    rig.runner.reader.instruments(rig.clock.now_ms())
    fault = rig.sim.faults.add(FaultKind.HTTP_500, path="/v3/trade/position/opens")
    failed = rig.runner.run_cycle()
    assert failed.error.startswith("read failed:")
    assert fault.fired == 4  # the read was tried 4 times (ReadPolicy.attempts), then given up
    assert sleeps == [0.2, 0.4, 0.8]
    rig.sim.faults.remove(fault)
    cycles = rig.journal.cycles(limit=5)
    assert any(c.error.startswith("read failed") for c in cycles)
    rig.advance(MINUTE)
    assert rig.runner.run_cycle().ok
    assert len(open_orders(rig)) == 1


def test_the_kill_switch_stops_orders_but_not_reads(tmp_path: Path) -> None:
    r = make_rig(tmp_path, guards=GuardSettings(limits=RiskLimits(), kill_switch=True))
    try:
        r.write("one.yaml", ONE_ORDER)
        report = r.runner.run_cycle()
        assert report.plan is not None
        assert report.plan.kill_switch
        assert open_orders(r) == []
        assert ("GET", "/v3/trade/position/opens") in r.transport.calls
        trips = r.journal.trips()
        assert trips
        assert trips[0].guard == "kill_switch"
    finally:
        r.client.close()
        r.journal.close()


def test_a_cycle_is_counted_in_the_metrics(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    rig.runner.metrics = Metrics()
    rig.runner.run_cycle()
    registry = rig.runner.metrics.registry
    assert registry.get_sample_value("botkit_orders_total", {"outcome": "accepted"}) == 1.0
    assert registry.get_sample_value("botkit_cycle_duration_seconds_count") == 1.0
    last = registry.get_sample_value("botkit_last_successful_cycle_timestamp_seconds")
    assert last == rig.clock.now_ms() / 1000
