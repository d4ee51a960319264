"""A transient journal in no file (the backtest's temporary database) leaves its secondary
indexes out until a read needs them (:mod:`botkit.journal.deferred`): its writes pay for no
index its cycles never search, its reads answer as any journal's, and once built the schema is
the migrations' one, statement for statement and in the same order (``iterdump``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from botkit.journal import Journal, OrderFilter, OrderOutcome, Outcome
from botkit.journal.deferred import DEFERRED
from tests.journal.test_group_commit import T0, new, one_cycle
from tests.pipeline.helpers import ManualClock, intent


def _indexes(journal: Journal) -> set[str]:
    rows = journal._conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
    return {name for (name,) in rows}


def _play(journal: Journal, clock: ManualClock, first: int = 1) -> None:
    """Cycles, fires, orders (live and dry-run), sends, outcomes, free events."""
    for n in range(first, first + 8):
        cycle = one_cycle(journal, fired=n % 3 == 0)
        journal.add_orders(cycle, [new(n)], dry=n % 8 == 4)
        if n % 8 != 4:
            journal.mark_sent([intent(n).cl_ord_id])
        if n % 2:
            outcome = Outcome.FAILED if n == 5 else Outcome.ACCEPTED
            journal.settle([OrderOutcome(intent(n).cl_ord_id, outcome, ord_id=str(90 + n))])
        journal.record_event("retry", f"retry {n}", cl_ord_id=intent(n).cl_ord_id)
        clock.advance(60_000)


def _answers(journal: Journal) -> list[Any]:
    return [
        journal.unsettled(),
        journal.orders(OrderFilter(cycle_id=3)),
        journal.orders(OrderFilter(cl_ord_id=intent(4).cl_ord_id)),
        journal.events_for(intent(3).cl_ord_id),
        journal.cycles(),
        journal.latest_evaluations(),
        journal.recent_evaluations(fired_only=True),
        journal.activity("s1", T0),
        journal.trips(),
    ]


def _journal(transient: bool, clock: ManualClock) -> Journal:
    return Journal("", clock=clock, synchronous="OFF", group_rows=1000, transient=transient)


def test_the_indexes_wait_for_a_read_that_may_search_them() -> None:
    clock = ManualClock(T0)
    with _journal(True, clock) as journal:
        assert not _indexes(journal) & DEFERRED
        _play(journal, clock)
        journal.flush()
        # the reads of a backtest: by client order id, the recent failures since a time, and
        # every order for the result
        assert journal.known_ids([intent(1).cl_ord_id]) == {intent(1).cl_ord_id}
        failed = journal.orders(OrderFilter(outcome="failed", since_ms=T0, include_dry=False))
        assert [o.cl_ord_id for o in failed] == [intent(5).cl_ord_id]
        assert journal.ord_ids([intent(1).cl_ord_id]) == {intent(1).cl_ord_id: "91"}
        assert len(list(journal.iter_order_cells(OrderFilter(include_dry=False)))) == 7
        assert not _indexes(journal) & DEFERRED
        journal.unsettled()  # searches ``orders_unsettled``
        assert _indexes(journal) >= DEFERRED


def test_a_read_over_empty_tables_builds_nothing() -> None:
    clock = ManualClock(T0)
    with _journal(True, clock) as journal:
        journal.begin_cycle()  # a cycle's row: no deferred index covers ``cycles``
        assert journal.activity("s1", T0) == {}  # a backtest's start-up read
        assert journal.unsettled() == []
        assert not _indexes(journal) & DEFERRED


@pytest.mark.parametrize(
    "build",
    [
        lambda j: j.unsettled(),
        lambda j: j.events_for(intent(3).cl_ord_id),
        lambda j: j.prune(T0 + 3 * 60_000),
    ],
    ids=["read", "events", "prune"],
)
def test_once_built_the_journal_is_the_one_a_journal_keeping_its_indexes_leaves(
    build: Callable[[Journal], object],
) -> None:
    """The same answers before and after the build, and the same ``iterdump`` (rows, tables,
    indexes and triggers in the migrations' order) as a journal that kept its indexes."""
    dumps, answers = [], []
    for transient in (False, True):
        clock = ManualClock(T0)
        with _journal(transient, clock) as journal:
            _play(journal, clock)
            before = _answers(journal)
            build(journal)
            answers.append((before, _answers(journal)))
            _play(journal, clock, 9)  # written into the built indexes
            journal.flush()
            dumps.append(list(journal._conn.iterdump()))
    assert answers[1] == answers[0]
    assert dumps[1] == dumps[0]
    assert any("orders_unsettled" in line for line in dumps[1])


def test_a_read_while_every_order_is_read_one_at_a_time_answers_as_before() -> None:
    """A read that would build the indexes left out, made while ``iter_order_cells`` still
    walks the orders (its statement open: more orders than one fetch), answers from the tables
    as they are and builds them after the walk: SQLite refuses to create an index under an open
    statement (locked). Fails if the read builds them meanwhile."""

    def play(journal: Journal, clock: ManualClock) -> None:
        _play(journal, clock)
        journal.add_orders(one_cycle(journal), [new(n) for n in range(100, 2600)], dry=False)

    clock = ManualClock(T0)
    with _journal(False, clock) as plain:
        play(plain, clock)
        expected = _answers(plain)
        cells = list(plain.iter_order_cells())
    clock = ManualClock(T0)
    with _journal(True, clock) as journal:
        play(journal, clock)
        walked = journal.iter_order_cells()
        seen = [next(walked)]
        assert _answers(journal) == expected
        assert not _indexes(journal) & DEFERRED  # left for after the walk
        seen.extend(walked)
        assert seen == cells
        assert _answers(journal) == expected
        assert _indexes(journal) >= DEFERRED
