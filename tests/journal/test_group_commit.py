"""Group commit (``Journal(..., group_rows=N)``): bookkeeping rows wait in memory, but every read
sees them, an intent is never committed without everything journaled before it, close writes
them, and a crash loses only bookkeeping rows not yet written — never an intent."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from botkit.errors import JournalError
from botkit.intents import RuleActivity
from botkit.journal import Evaluated, Journal, NewOrder, OrderState
from tests.pipeline.helpers import ManualClock, intent

T0 = 1_000_000


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


@pytest.fixture
def journal(path: Path) -> Iterator[Journal]:
    with Journal(path, clock=ManualClock(T0), group_rows=1000) as j:
        yield j


def new(n: int) -> NewOrder:
    i = intent(n, inputs={"mark": "100"})
    return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id})


def count(path: Path, table: str) -> int:
    """Rows another connection (another process) sees committed."""
    with sqlite3.connect(path) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608


def one_cycle(journal: Journal, *, fired: bool = False) -> int:
    cycle = journal.begin_cycle()
    journal.record_evaluations(
        cycle,
        strategy="s1",
        version="v",
        rules=[Evaluated("r1", fired, inputs={"x": "1"}), Evaluated("r2", False, "cooldown")],
    )
    journal.end_cycle(cycle)
    return cycle


def test_bookkeeping_rows_wait_until_group_rows_are_pending(path: Path) -> None:
    with Journal(path, clock=ManualClock(T0), group_rows=5) as journal:
        for _ in range(4):
            journal.begin_cycle()  # a cycle row each (a quiet cycle writes no event)
        assert (count(path, "cycles"), count(path, "events")) == (0, 0)
        journal.record_event("note", "fifth row")  # 5 >= 5: written
        assert (count(path, "cycles"), count(path, "events")) == (4, 1)


def test_every_read_sees_the_rows_still_pending(journal: Journal, path: Path) -> None:
    revision = journal.activity_revision
    cycle = one_cycle(journal, fired=True)
    journal.record_event("note", "hello", detail={"k": "v"})
    assert count(path, "events") == 0
    assert journal.activity_revision != revision, "a buffered fire is news for the activity cache"
    assert journal.activity("s1", 0) == {"r1": RuleActivity(fire_times_ms=(T0,))}
    (summary,) = journal.cycles()
    assert (summary.id, summary.finished_ms, summary.evaluations, summary.fired) == (
        cycle,
        T0,
        2,
        1,
    )
    texts = [e.text for e in journal.events_after(0)]
    assert texts == ["s1/r1 fired", "hello"]
    assert journal.last_event_id() == 2
    assert count(path, "events") == 2, "the read wrote them"


def test_an_intent_commits_together_with_everything_journaled_before_it(
    journal: Journal, path: Path
) -> None:
    cycle = journal.begin_cycle()
    journal.record_evaluations(cycle, strategy="s1", version="v", rules=[Evaluated("r1", True)])
    assert count(path, "evaluations") == 0
    journal.add_orders(cycle, [new(0)], dry=False)
    assert (count(path, "cycles"), count(path, "evaluations"), count(path, "orders")) == (1, 1, 1)
    assert count(path, "events") == 2  # fired, intent


def test_a_failed_order_write_commits_none_of_the_rows_before_it_and_keeps_them(
    journal: Journal, path: Path
) -> None:
    journal.add_orders(None, [new(0)], dry=False)
    cycle = journal.begin_cycle()
    with pytest.raises(JournalError):
        journal.add_orders(cycle, [new(1), new(0)], dry=False)  # a known id: rolled back
    assert (count(path, "cycles"), count(path, "orders")) == (0, 1), "one transaction"
    journal.add_orders(cycle, [new(1)], dry=False)
    assert (count(path, "cycles"), count(path, "orders")) == (1, 2)
    assert [e.cycle_id for e in journal.events_after(0)][1] == cycle  # its intent's event


def test_close_writes_the_pending_rows(path: Path) -> None:
    with Journal(path, clock=ManualClock(T0), group_rows=1000) as journal:
        one_cycle(journal)
        assert count(path, "cycles") == 0
    assert (count(path, "cycles"), count(path, "evaluations"), count(path, "events")) == (1, 2, 0)


def test_a_crash_loses_only_bookkeeping_not_yet_written_never_an_intent(path: Path) -> None:
    """The bot is killed (no close) after an intent and later quiet cycles."""
    script = textwrap.dedent(
        f"""
        import os, sys
        from botkit.journal import Evaluated, Journal, NewOrder
        from tests.pipeline.helpers import ManualClock, intent
        journal = Journal(sys.argv[1], clock=ManualClock({T0}), group_rows=1000)
        cycle = journal.begin_cycle()
        journal.record_evaluations(cycle, strategy="s1", version="v",
                                   rules=[Evaluated("r1", True)])
        i = intent(0)
        journal.add_orders(cycle, [NewOrder(i, i.px, i.sz)], dry=False)
        journal.mark_sent([i.cl_ord_id])
        journal.end_cycle(cycle)
        for _ in range(3):
            journal.record_evaluations(journal.begin_cycle(), strategy="s1", version="v",
                                       rules=[Evaluated("r1", False)])
        os._exit(9)
        """
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script, str(path)], cwd=root, check=False)
    assert done.returncode == 9
    with Journal(path, clock=ManualClock(T0)) as journal:
        (order,) = journal.unsettled()
        assert (order.cl_ord_id, order.state) == ("s1-r1-0", OrderState.SENT)
        (cycle,) = journal.cycles()
        assert (cycle.evaluations, cycle.fired, cycle.orders) == (1, 1, 1)
        assert cycle.finished_ms is None, "its end and the quiet cycles were not yet written"
        assert journal.begin_cycle() == cycle.id + 1


def test_cycle_ids_go_on_from_the_table(path: Path) -> None:
    with Journal(path, clock=ManualClock(T0)) as journal:
        first = one_cycle(journal)
    with Journal(path, clock=ManualClock(T0), group_rows=10) as journal:
        assert one_cycle(journal) == first + 1


@pytest.mark.parametrize("bad", [-1, True, 2.0, "8"])
def test_group_rows_must_be_a_row_count(path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="group_rows"):
        Journal(path, clock=ManualClock(T0), group_rows=bad)  # type: ignore[arg-type]


def test_write_through_is_the_default(path: Path) -> None:
    with Journal(path, clock=ManualClock(T0)) as journal:
        assert journal.group_rows == 0
        one_cycle(journal)
        journal.record_event("note", "hello")
        assert (count(path, "cycles"), count(path, "evaluations"), count(path, "events")) == (
            1,
            2,
            1,
        )


def test_the_order_id_lookups_answer_without_writing_the_pending_rows(
    journal: Journal, path: Path
) -> None:
    """``known_ids`` / ``ord_ids`` read the orders table alone, which group commit never holds:
    they answer from what is written and leave the bookkeeping rows waiting (a backtest asks
    at every plan; issue 20)."""
    cycle = one_cycle(journal, fired=True)
    journal.add_orders(cycle, [new(1)], dry=False)  # its transaction writes the pending rows
    assert count(path, "cycles") == 1
    one_cycle(journal)
    taken = intent(1).cl_ord_id
    assert journal.known_ids([taken, intent(2).cl_ord_id]) == {taken}
    assert journal.ord_ids([taken, intent(2).cl_ord_id]) == {taken: ""}
    assert count(path, "cycles") == 1  # the second cycle still waits
    assert len(journal.cycles()) == 2  # a read of the bookkeeping still sees it
    assert count(path, "cycles") == 2
