"""``Journal.has_unsettled``: the query-free answer the executor's per-cycle reconcile relies on
agrees with the ``unsettled()`` query after every kind of write, and across a reopen."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from botkit.errors import JournalError
from botkit.journal import Journal, NewOrder, OrderOutcome, Outcome
from tests.pipeline.helpers import ManualClock, intent


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1_000_000)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


@pytest.fixture
def journal(path: Path, clock: ManualClock) -> Iterator[Journal]:
    with Journal(path, clock=clock) as j:
        yield j


def new(n: int, **kw: object) -> NewOrder:
    i = intent(n, rule="r1", strategy="s1")
    return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)  # type: ignore[arg-type]


def agrees(journal: Journal) -> bool:
    return journal.has_unsettled() == bool(journal.unsettled())


def test_a_new_journal_has_nothing_unsettled(journal: Journal) -> None:
    assert not journal.has_unsettled()
    assert agrees(journal)


def test_a_live_intent_is_unsettled_until_its_outcome_is_settled(journal: Journal) -> None:
    journal.add_orders(None, [new(0), new(1)], dry=False)
    assert journal.has_unsettled()
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="1")])
    assert journal.has_unsettled()
    assert agrees(journal)
    journal.settle([OrderOutcome("s1-r1-1", Outcome.FAILED, error="never placed")])
    assert not journal.has_unsettled()
    assert agrees(journal)


def test_refusals_and_dry_runs_are_never_unsettled(journal: Journal) -> None:
    journal.add_orders(None, [new(0, outcome=Outcome.REJECTED_LOCAL, reasons=("tick",))], dry=False)
    journal.add_orders(None, [new(1, outcome=Outcome.DRY_RUN)], dry=True)
    assert not journal.has_unsettled()
    assert agrees(journal)


def test_a_failed_write_changes_nothing(journal: Journal) -> None:
    journal.add_orders(None, [new(0)], dry=False)
    with pytest.raises(JournalError):
        journal.add_orders(None, [new(1), new(0)], dry=False)  # a known id: rolled back
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="1")])
    with pytest.raises(JournalError):
        journal.settle([OrderOutcome("s1-r1-0", Outcome.FAILED, error="twice")])
    assert not journal.has_unsettled()
    assert agrees(journal)


def test_a_reopened_journal_counts_what_the_last_run_left_unsettled(
    path: Path, clock: ManualClock
) -> None:
    with Journal(path, clock=clock) as j:
        j.add_orders(None, [new(0)], dry=False)
    with Journal(path, clock=clock) as j:
        assert j.has_unsettled()
        j.settle([OrderOutcome("s1-r1-0", Outcome.FAILED, error="never placed")])
        assert not j.has_unsettled()


def test_a_settle_by_another_process_leaves_the_answer_on_the_safe_side(
    path: Path, clock: ManualClock, journal: Journal
) -> None:
    journal.add_orders(None, [new(0)], dry=False)
    with Journal(path, clock=clock) as other:
        other.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="1")])
    assert journal.has_unsettled()  # too high is safe: the caller queries and finds none
    assert journal.unsettled() == []
