"""Outcomes held for the journal's next write (``settle(..., hold=True)``, what the executor does
for every batch but the last) and a write-through cycle's rows waiting for its next write:
checked at the call, seen by every read, committed with the next write, lost by a crash only
as *sent without an outcome* (which reconcile settles by lookup), never an intent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from botkit.errors import JournalError
from botkit.journal import Evaluated, Journal, OrderOutcome, OrderState, Outcome
from tests.journal.test_group_commit import T0, count, new
from tests.pipeline.helpers import ManualClock, intent


def outcome(n: int) -> OrderOutcome:
    cid = intent(n).cl_ord_id
    return OrderOutcome(cid, Outcome.ACCEPTED, ord_id=f"9{n}")


def committed_outcomes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(outcome) FROM orders").fetchone()[0])


@pytest.mark.parametrize("group_rows", [0, 1000])
def test_held_outcomes_are_committed_with_the_next_send_mark(
    tmp_path: Path, group_rows: int
) -> None:
    path = tmp_path / "journal.sqlite"
    with Journal(path, clock=ManualClock(T0), group_rows=group_rows) as journal:
        journal.add_orders(None, [new(1), new(2)], dry=False)
        journal.mark_sent([intent(1).cl_ord_id])
        journal.settle([outcome(1)], hold=True)
        assert committed_outcomes(path) == 0  # another process does not see it yet
        with pytest.raises(JournalError, match="already settled"):  # checked at the call
            journal.settle([outcome(1)], hold=True)
        with pytest.raises(JournalError, match="already settled"):
            journal.settle([outcome(1)])
        journal.mark_sent([intent(2).cl_ord_id])  # the next batch's send mark
        assert committed_outcomes(path) == 1
        assert [r.cl_ord_id for r in journal.unsettled()] == [intent(2).cl_ord_id]
        journal.settle([outcome(2)], hold=True)
        assert journal.ord_ids([intent(2).cl_ord_id]) == {intent(2).cl_ord_id: "92"}
        assert committed_outcomes(path) == 2
        assert not journal.has_unsettled()


def test_a_held_outcome_twice_in_one_call_or_unknown_is_refused(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(T0)) as journal:
        journal.add_orders(None, [new(1)], dry=False)
        with pytest.raises(JournalError):
            journal.settle([outcome(1), outcome(1)], hold=True)
        with pytest.raises(JournalError):
            journal.settle([outcome(7)], hold=True)
        journal.settle([outcome(1)], hold=True)
        assert [r.outcome for r in journal.orders()] == [Outcome.ACCEPTED]  # a read flushes


def test_a_crash_loses_held_outcomes_as_sent_orders_without_outcome(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal = Journal(path, clock=ManualClock(T0))
    journal.add_orders(None, [new(1)], dry=False)
    journal.mark_sent([intent(1).cl_ord_id])
    journal.settle([outcome(1)], hold=True)
    # the process dies here: no close, nothing more written (the connection dropped unwritten)
    journal._conn.close()
    with Journal(path, clock=ManualClock(T0)) as again:
        (left,) = again.unsettled()
        assert left.state is OrderState.SENT  # for reconcile to look up
        assert again.has_unsettled()


def test_a_write_through_cycle_waits_for_its_next_write(tmp_path: Path) -> None:
    """Its row and evaluations go with the intents' commit (or the cycle's end): one commit
    for a quiet cycle, none before the first order."""
    path = tmp_path / "journal.sqlite"
    with Journal(path, clock=ManualClock(T0)) as journal:
        cycle = journal.begin_cycle()
        journal.record_evaluations(
            cycle, strategy="s", version="v", rules=[Evaluated("r", True, inputs={"x": "1"})]
        )
        assert (count(path, "cycles"), count(path, "evaluations")) == (0, 0)
        journal.add_orders(cycle, [new(1)], dry=False)
        assert (count(path, "cycles"), count(path, "evaluations")) == (1, 1)
        assert journal.activity("s", 0)["r"].fire_times_ms == (T0,)
        quiet = journal.begin_cycle()
        assert quiet == cycle + 1
        journal.end_cycle(quiet)
        assert count(path, "cycles") == 2


def test_a_transient_journal_holds_outcomes_of_written_and_waiting_orders_together() -> None:
    """One settle naming an order already written and one still waiting in a transient
    journal: both are open orders, and both settle."""
    with Journal("", clock=ManualClock(T0), group_rows=1000, transient=True) as journal:
        journal.add_orders(None, [new(1)], dry=False)
        journal.flush()  # order 1 is in the table now
        journal.add_orders(None, [new(2)], dry=False)  # order 2 waits in memory
        journal.settle([outcome(1), outcome(2)], hold=True)
        assert {r.cl_ord_id: r.outcome for r in journal.orders()} == {
            intent(1).cl_ord_id: Outcome.ACCEPTED,
            intent(2).cl_ord_id: Outcome.ACCEPTED,
        }
