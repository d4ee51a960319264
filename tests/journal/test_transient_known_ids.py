"""A transient journal (the backtest's) keeps its live client order ids in memory: which ids
it holds (the executor's skip of a decision taken twice, and the unique-id refusal of
``add_orders``) is answered without reading the table — the same answers as the table's."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.errors import JournalError
from botkit.journal import Journal, OrderOutcome, Outcome
from tests.journal.test_group_commit import T0, new
from tests.pipeline.helpers import ManualClock, intent


def _selects(journal: Journal) -> list[str]:
    seen: list[str] = []
    journal._conn.set_trace_callback(
        lambda sql: seen.append(sql) if sql.lstrip().upper().startswith("SELECT") else None
    )
    return seen


def test_a_transient_journal_knows_its_ids_without_reading_the_table() -> None:
    with Journal("", clock=ManualClock(T0), group_rows=1000, transient=True) as journal:
        journal.add_orders(None, [new(1)], dry=False)
        journal.flush()  # order 1 is in the table, order 2 waits in memory
        journal.add_orders(None, [new(2)], dry=False)
        journal.add_orders(None, [new(3)], dry=True)  # a dry-run order is not a live id
        seen = _selects(journal)
        ids = [intent(n).cl_ord_id for n in (1, 2, 3, 4)]
        assert journal.known_ids(ids) == set(ids[:2])
        with pytest.raises(JournalError, match="UNIQUE constraint failed"):
            journal.add_orders(None, [new(4), new(1)], dry=False)
        journal.add_orders(None, [new(4)], dry=False)  # the refused call added nothing
        assert journal.known_ids(ids) == set(ids[:2] + ids[3:])
        assert seen == []


def test_a_transient_journal_opened_over_live_orders_knows_them(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with Journal(path, clock=ManualClock(T0)) as journal:
        journal.add_orders(None, [new(1)], dry=False)
        journal.add_orders(None, [new(2)], dry=True)
    with Journal(path, clock=ManualClock(T0), group_rows=1000, transient=True) as journal:
        ids = [intent(n).cl_ord_id for n in (1, 2)]
        assert journal.known_ids(ids) == {ids[0]}
        with pytest.raises(JournalError, match="UNIQUE constraint failed"):
            journal.add_orders(None, [new(1)], dry=False)
        journal.add_orders(None, [new(2)], dry=False)  # only a dry-run row held this id


@pytest.mark.parametrize("transient", [False, True])
def test_a_pruned_order_s_id_is_no_longer_known(transient: bool) -> None:
    clock = ManualClock(T0)
    with Journal("", clock=clock, group_rows=1000, transient=transient) as journal:
        journal.add_orders(None, [new(1)], dry=False)
        journal.settle([OrderOutcome(intent(1).cl_ord_id, Outcome.ACCEPTED, ord_id="91")])
        clock.advance(60_000)
        journal.add_orders(None, [new(2)], dry=False)  # unsettled: prune keeps it anyway
        journal.prune(T0 + 1)
        ids = [intent(n).cl_ord_id for n in (1, 2)]
        assert journal.known_ids(ids) == {ids[1]}
        journal.add_orders(None, [new(1)], dry=False)  # its id is free again, as in the table
        assert journal.known_ids(ids) == set(ids)
