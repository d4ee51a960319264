"""The executor and reconcile against a fake exchange, with a real journal on disk."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.errors import OutcomeUnknown, ReadTimedOut
from botkit.exchange.models import OrderRequest
from botkit.journal import Journal, NewOrder, OrderFilter, OrderOutcome, OrderState, Outcome
from botkit.pipeline import RiskLimits, build_plan
from botkit.runner.orders import Executor, RetryPolicy, reconcile, record_dry_run
from tests.pipeline.fakes import FakeExchange
from tests.pipeline.helpers import FakeSleep, ManualClock, intent, snapshot


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def journal(tmp_path: Path, clock: ManualClock) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.sqlite", clock=clock) as j:
        yield j


def executor(ex: FakeExchange, journal: Journal, **kw: object) -> Executor:
    return Executor(
        ex,
        journal,
        sleep=FakeSleep(),
        rng=random.Random(0),
        policy=RetryPolicy(jitter=0.0),
        batch_rate=None,
        **kw,  # type: ignore[arg-type]
    )


def assert_one_final_outcome_each(journal: Journal) -> None:
    rows = journal.orders(OrderFilter(include_dry=False))
    assert rows
    assert all(r.outcome is not None and r.state is OrderState.FINAL for r in rows)


def test_intent_is_committed_before_the_request_leaves(journal: Journal, tmp_path: Path) -> None:
    seen: list[tuple[str, OrderState | None]] = []

    def check(orders: Sequence[OrderRequest]) -> None:
        # a second connection sees only what was committed
        with Journal(tmp_path / "journal.sqlite", clock=lambda: 0) as other:
            for o in orders:
                rec = other.order(o.clOrdId or "")
                seen.append((o.clOrdId or "", None if rec is None else rec.state))

    ex = FakeExchange(on_place=check)
    plan = build_plan([intent(n) for n in range(3)], snapshot())
    report = executor(ex, journal).run(plan, cycle_id=journal.begin_cycle())
    assert seen == [(f"s1-r1-{n}", OrderState.SENT) for n in range(3)]
    assert report.count(Outcome.ACCEPTED) == 3
    rec = journal.order("s1-r1-0")
    assert rec is not None
    assert rec.ord_id == ex.ord_ids["s1-r1-0"]
    assert rec.request == {
        "clOrdId": "s1-r1-0", "mgnMode": "CROSS", "posSide": "BOTH", "px": "100.0", "side": "BUY",
        "sz": "1", "symbol": "BTC_USDT_PERP", "type": "LIMIT",
    }  # fmt: skip
    assert_one_final_outcome_each(journal)


def test_refusals_and_guard_trips_are_journaled_with_reasons_and_figures(
    journal: Journal,
) -> None:
    plan = build_plan(
        [intent(0, px=None), intent(1, sz="100")],
        snapshot(),
        limits=RiskLimits(max_notional_per_order=Decimal(5)),
    )
    ex = FakeExchange()
    cycle = journal.begin_cycle()
    executor(ex, journal).run(plan, cycle_id=cycle)
    assert not ex.calls
    refused = journal.orders(OrderFilter(outcome="rejected_local"))
    assert [r.reasons[0].split(":")[0] for r in refused] == [
        "px_missing",
        "guard_max_notional_per_order",
    ]
    (trip,) = journal.trips(cycle_id=cycle)
    assert (trip.guard, trip.limit, trip.value) == ("max_notional_per_order", "5", "10.0000")
    assert_one_final_outcome_each(journal)


def test_dry_run_journals_the_plan_flagged_dry_and_sends_nothing(journal: Journal) -> None:
    ex = FakeExchange()
    plan = build_plan([intent(0, px="100.05")], snapshot())
    report = record_dry_run(journal, plan, cycle_id=journal.begin_cycle(dry=True))
    assert report.dry
    assert not ex.calls
    (row,) = journal.orders()
    assert row.dry
    assert row.outcome is Outcome.DRY_RUN
    assert row.notes == ("px 100.05 -> 100.0 (step 0.1)",)
    # the same decision may still go live afterwards
    executor(ex, journal).run(plan, cycle_id=journal.begin_cycle())
    assert ex.calls == [("s1-r1-0",)]


def test_the_same_decision_is_never_sent_twice(journal: Journal) -> None:
    ex = FakeExchange()
    plan = build_plan([intent(0), intent(1)], snapshot())
    executor(ex, journal).run(plan, cycle_id=journal.begin_cycle())
    again = executor(ex, journal).run(plan, cycle_id=journal.begin_cycle())
    assert len(ex.calls) == 1
    assert again.skipped == ("s1-r1-0", "s1-r1-1")
    replanned = executor(ex, journal).run(build_plan([intent(0), intent(2)], snapshot()))
    assert replanned.skipped == ("s1-r1-0",)
    assert ex.calls[-1] == ("s1-r1-2",)  # the rest of the plan still goes


def test_already_sent_ids_are_skipped_not_refused(journal: Journal) -> None:
    """(Was a planner test with ``already_sent``, which only tests passed: the executor asks
    the journal which ids it already holds.)"""
    ex = FakeExchange()
    executor(ex, journal).run(build_plan([intent(0)], snapshot()))
    report = executor(ex, journal).run(build_plan([intent(0), intent(1)], snapshot()))
    assert report.skipped == ("s1-r1-0",)
    assert ex.calls[-1] == ("s1-r1-1",)
    assert report.refused == 0


def test_unsettled_orders_are_reconciled_before_anything_new_is_sent(
    journal: Journal, clock: ManualClock
) -> None:
    ex = FakeExchange(
        [("after", OutcomeUnknown("dropped"))], lookup_errors=[ReadTimedOut("lookup")] * 3
    )
    first = executor(ex, journal).run(build_plan([intent(0)], snapshot()), cycle_id=None)
    assert first.unsettled == ("s1-r1-0",)
    rec = journal.order("s1-r1-0")
    assert rec is not None
    assert rec.state is OrderState.UNKNOWN
    assert rec.outcome is None
    clock.advance(5_000)  # the next cycle, within the grace: the request may be in flight
    early = executor(ex, journal).run(build_plan([], snapshot()), cycle_id=None)
    assert early.reconciled.pending == ("s1-r1-0",)
    assert ex.lookups == [], "not looked up while it may still be in flight"
    clock.advance(10_000)
    order_of_calls: list[str] = []
    ex.on_place = lambda orders: order_of_calls.append("place")
    second = executor(ex, journal).run(build_plan([intent(1)], snapshot()), cycle_id=None)
    assert [o.outcome for o in second.reconciled.settled] == [Outcome.ACCEPTED]
    assert ex.lookups[0] == "s1-r1-0"
    assert order_of_calls == ["place"]
    assert ex.calls[-1] == ("s1-r1-1",)
    assert_one_final_outcome_each(journal)


def test_concurrent_batches_settle_every_order(journal: Journal) -> None:
    ex = FakeExchange(reject=lambda o: (10014, "band") if o.clOrdId == "s1-r1-7" else None)
    plan = build_plan([intent(n) for n in range(35)], snapshot())
    report = executor(ex, journal, concurrency=3).run(plan, cycle_id=None)
    assert len(ex.calls) == 4
    assert report.count(Outcome.ACCEPTED) == 34
    assert report.count(Outcome.REJECTED) == 1
    assert [o.cl_ord_id for o in report.outcomes] == [o.cl_ord_id for o in plan.accepted]
    assert_one_final_outcome_each(journal)


def test_concurrent_batches_commit_each_batch_s_outcomes_as_it_returns(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches sent side by side have no next send mark for their outcomes to ride with: each
    batch's are committed as it returns (a held one would wait for the slowest batch)."""
    committed: list[bool] = []
    settle = journal.settle

    def settle_and_look(outcomes: Sequence[OrderOutcome], *, hold: bool = False) -> None:
        settle(outcomes, hold=hold)
        with Journal(tmp_path / "journal.sqlite", clock=lambda: 0) as other:  # what is committed
            for out in outcomes:
                record = other.order(out.cl_ord_id)
                committed.append(record is not None and record.outcome is not None)

    monkeypatch.setattr(journal, "settle", settle_and_look)
    plan = build_plan([intent(n) for n in range(25)], snapshot())
    executor(FakeExchange(), journal, concurrency=2).run(plan, cycle_id=None)
    assert len(committed) == 25
    assert all(committed)


# --- reconcile ---------------------------------------------------------------------------


def _journal_intents(journal: Journal, n: int) -> None:
    plan = build_plan([intent(i) for i in range(n)], snapshot())
    rows = [NewOrder(o.intent, o.request.px, o.request.sz, wire=o.wire()) for o in plan.accepted]
    journal.add_orders(None, rows, dry=False)


def test_reconcile_settles_found_orders_accepted_and_missing_ones_failed(
    journal: Journal,
) -> None:
    _journal_intents(journal, 3)
    journal.mark_sent(["s1-r1-0", "s1-r1-1"])  # c2 never left (crash before sending)
    ex = FakeExchange()
    ex.place_orders([build_plan([intent(0)], snapshot()).accepted[0].request])
    report = reconcile(journal, ex)
    assert [(o.cl_ord_id, o.outcome) for o in report.settled] == [
        ("s1-r1-0", Outcome.ACCEPTED),
        ("s1-r1-1", Outcome.FAILED),
        ("s1-r1-2", Outcome.FAILED),
    ]
    assert report.settled[0].ord_id == ex.ord_ids["s1-r1-0"]
    assert "never placed" in report.settled[1].error
    assert "before the request left" in report.settled[2].error
    assert_one_final_outcome_each(journal)
    assert reconcile(journal, ex).settled == ()


def test_start_up_reconcile_sleeps_out_the_grace(journal: Journal, clock: ManualClock) -> None:
    _journal_intents(journal, 1)
    journal.mark_sent(["s1-r1-0"])
    clock.advance(1_000)
    sleep = FakeSleep(clock)
    ex = FakeExchange()
    report = Executor(ex, journal, sleep=sleep, batch_rate=None).reconcile()
    assert sleep.calls == [14.0], "default grace 15 s"
    assert [o.outcome for o in report.settled] == [Outcome.FAILED]


def test_reconcile_waits_for_requests_that_may_still_be_in_flight(
    journal: Journal, clock: ManualClock
) -> None:
    _journal_intents(journal, 1)
    journal.mark_sent(["s1-r1-0"])
    clock.advance(2_000)
    sleep = FakeSleep(clock)
    reconcile(journal, FakeExchange(), clock=clock, grace_ms=10_000, sleep=sleep)
    assert sleep.calls == [8.0]


def test_reconcile_keeps_orders_whose_lookup_fails(journal: Journal) -> None:
    _journal_intents(journal, 1)
    ex = FakeExchange(lookup_errors=[ReadTimedOut("down")] * 10)
    report = reconcile(journal, ex, sleep=FakeSleep())
    assert report.pending == ("s1-r1-0",)
    assert not report.clean
    assert [r.cl_ord_id for r in journal.unsettled()] == ["s1-r1-0"]
