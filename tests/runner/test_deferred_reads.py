"""Each part of the snapshot is read when first asked for, at most once per cycle; a deferred
read that fails ends the cycle as a failed read."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.errors import ReadFailed, ServerUnavailable
from botkit.exchange.models import Balance, PositionMode
from botkit.runner.reader import SnapshotReader
from botkit.sim.faults import FaultKind
from botkit.snapshot import Part, Snapshot
from tests.reads import SnapshotReads
from tests.runner.conftest import Rig

BALANCE = ("GET", "/v3/account/balance")
TICKERS = ("GET", "/v3/market/tickers")
POSITIONS = ("GET", "/v3/trade/position/opens")

HOLDER = """\
    strategy: {name}
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: add-when-holding
        when: position.qty != 0 and account.availMgn > 100 and price.mark > 0
        place:
          order: {{side: BUY, type: LIMIT, px: price.mark * 0.9, sz: 1}}
"""

MARGIN = """\
    strategy: {name}
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: rich
        when: account.availMgn > 100000000
        place:
          order: {{side: BUY, type: LIMIT, px: price.mark * 0.9, sz: 1}}
"""


def test_a_condition_that_stops_early_reads_only_what_it_looked_at(rig: Rig) -> None:
    rig.write("holder.yaml", HOLDER.format(name="holder"))
    report = rig.runner.run_cycle()  # flat account: position.qty != 0 is false
    assert report.ok
    assert rig.transport.calls[POSITIONS] == 1
    assert rig.transport.calls[BALANCE] == 0
    assert rig.transport.calls[TICKERS] == 0


def test_each_part_is_read_once_however_many_strategies_ask(rig: Rig) -> None:
    for name in ("a", "b", "c"):
        rig.write(f"{name}.yaml", MARGIN.format(name=name))
    report = rig.runner.run_cycle()
    assert report.ok
    assert len(report.evaluations) == 3
    assert rig.transport.calls[BALANCE] == 1


def test_a_deferred_read_failing_during_evaluation_ends_the_cycle_as_a_failed_read(
    rig: Rig,
) -> None:
    rig.write("margin.yaml", MARGIN.format(name="margin"))
    waits: list[float] = []
    rig.runner.reader = SnapshotReader(rig.client, sleep=waits.append)
    rig.runner.reader.instruments(rig.clock.now_ms())
    rig.sim.faults.add(FaultKind.HTTP_500, path="/v3/account/balance", times=4)
    report = rig.runner.run_cycle()
    assert report.error.startswith("read failed:")
    assert waits == [0.2, 0.4, 0.8]  # retried like any read
    assert any(c.error.startswith("read failed") for c in rig.journal.cycles())
    assert rig.runner.next_due_ms() == rig.clock.now_ms() + 30_000  # tried again soon
    rig.advance(30_000)
    assert rig.runner.run_cycle().ok


def _balance() -> Balance:
    return Balance(eq=Decimal(5), availMgn=Decimal(5))


def test_a_snapshot_built_by_hand_holds_its_values() -> None:
    snap = Snapshot(1, _balance(), {}, {})
    assert snap.balance.eq == Decimal(5)
    assert (snap.positions, snap.open_orders, snap.limit_prices) == ([], [], {})
    assert snap.position_mode is PositionMode.ONE_WAY
    assert [getattr(snap, p) is not None for p in Part] == [True] * len(Part)  # no source
    with pytest.raises(AttributeError, match="read-only"):
        snap.now_ms = 2


def test_a_deferred_part_is_read_once_and_only_when_asked_for() -> None:
    given = Snapshot(7, _balance(), {}, {})
    source = SnapshotReads(given, Part.POSITIONS, ServerUnavailable("503"))
    snap = Snapshot.deferred(7, {}, source).with_position_mode(PositionMode.HEDGE)
    assert source.calls == []  # nothing is read up front
    assert snap.balance is snap.balance
    assert snap.position_mode is PositionMode.HEDGE
    assert source.calls == ["balance"]
    with pytest.raises(ReadFailed):
        _ = snap.positions
    with pytest.raises(ReadFailed):  # a failed read is not kept as a value
        _ = snap.positions
    assert source.calls == ["balance", "positions", "positions"]
    assert snap.fills == []
    assert source.calls[-1] == "fills"


def test_prefetch_reads_the_parts_named_once_each_and_raises_the_failed_one() -> None:
    given = Snapshot(7, _balance(), {}, {})
    source = SnapshotReads(given, Part.POSITIONS, ServerUnavailable("503"))
    snap = Snapshot.deferred(7, {}, source)
    snap.prefetch(Part.TICKERS, Part.BALANCE)
    snap.prefetch(Part.BALANCE)
    assert source.calls == ["tickers", "balance"]
    assert snap.fetched(Part.BALANCE)
    assert not snap.fetched(Part.OPEN_ORDERS)
    with pytest.raises(ReadFailed) as raised:
        snap.prefetch(Part.OPEN_ORDERS, Part.POSITIONS, Part.FILLS)
    assert raised.value.part == "positions"
    assert str(raised.value) == str(ServerUnavailable("503"))
    assert source.calls[2:] == ["open_orders", "positions"]  # stopped at the failed read
    again = snap.reread(Part.BALANCE)
    _ = again.balance
    assert source.calls[-1] == "balance"
    assert snap.fetched(Part.BALANCE)  # the copy read again; the original kept its value


def test_a_fire_whose_planner_read_fails_leaves_no_trace_and_fires_on_the_retry(
    rig: Rig,
) -> None:
    from tests.runner.conftest import ONE_ORDER, open_orders

    rig.write("one.yaml", ONE_ORDER)
    rig.runner.reader = SnapshotReader(rig.client, sleep=lambda _s: None)
    rig.runner.reader.instruments(rig.clock.now_ms())
    rig.sim.faults.add(FaultKind.HTTP_500, path="/v3/trade/position/opens", times=4)
    failed = rig.runner.run_cycle()
    assert failed.error.startswith("read failed:")
    assert sum(c.fired for c in rig.journal.cycles()) == 0  # no fire journaled
    rig.advance(30_000)  # the retry, still in the same one-minute slot
    retry = rig.runner.run_cycle()
    assert retry.ok
    assert retry.evaluations[0].results[0].fired
    assert len(open_orders(rig)) == 1


def test_a_quiet_cycle_with_the_kill_switch_on_reads_nothing_more(rig: Rig) -> None:
    from botkit.pipeline import GuardSettings, RiskLimits

    rig.runner.guards = GuardSettings(limits=RiskLimits(), kill_switch=True)
    rig.write("quiet.yaml", MARGIN.format(name="quiet"))  # reads the balance only
    rig.sim.faults.add(FaultKind.HTTP_500, path="/v3/trade/position/opens")
    report = rig.runner.run_cycle()  # nothing for the kill switch to stop: no position read
    assert report.ok, report.error
    assert report.plan is not None
    assert report.plan.kill_switch
    assert rig.transport.calls[POSITIONS] == 0
