"""Settling orders this journal added and has not settled runs no ``SELECT``: the journal knows
them open (one process writes a journal). The ``UPDATE`` that writes the outcomes checks it
changed each order it names, so an order another writer settled in between is a
:class:`JournalError` there, with nothing written — as the ``SELECT`` refused it before
(issue 20)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from botkit.errors import JournalError
from botkit.journal import Journal, NewOrder, OrderOutcome, Outcome
from tests.pipeline.helpers import ManualClock, intent


def _orders(first: int, count: int) -> list[NewOrder]:
    out = []
    for n in range(first, first + count):
        i = intent(n, inputs={"mark": "100"})
        out.append(NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}))
    return out


def _accepted(orders: list[NewOrder]) -> list[OrderOutcome]:
    return [
        OrderOutcome(o.intent.cl_ord_id, Outcome.ACCEPTED, ord_id=f"9{n}")
        for n, o in enumerate(orders)
    ]


class _Selects:
    """The journal's connection, counting the ``SELECT``s it runs."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.selects = 0

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.selects += sql.startswith("SELECT")
        return self.conn.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        return self.conn.executemany(sql, parameters)


@pytest.mark.parametrize("hold", [True, False])
def test_settling_orders_this_journal_added_reads_nothing(tmp_path: Path, hold: bool) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        first, second = _orders(0, 10), _orders(10, 10)
        journal.add_orders(1, [*first, *second], dry=False)
        counting = _Selects(journal._conn)
        journal._conn = counting  # type: ignore[assignment]
        journal.mark_sent([o.intent.cl_ord_id for o in first])
        journal.settle(_accepted(first), hold=hold)
        journal.mark_sent([o.intent.cl_ord_id for o in second])
        journal.settle(_accepted(second)[:4], hold=hold)
        journal._conn = counting.conn
        assert counting.selects == 0
        rows = journal.orders()
        assert [r.outcome for r in rows] == [Outcome.ACCEPTED] * 14 + [None] * 6
        assert [r.ord_id for r in rows[:14]] == [f"9{n}" for n in (*range(10), *range(4))]


@pytest.mark.parametrize("hold", [True, False])
def test_an_order_settled_twice_is_still_refused_at_the_call(tmp_path: Path, hold: bool) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        orders = _orders(0, 3)
        journal.add_orders(1, orders, dry=False)
        journal.settle(_accepted(orders)[:1], hold=hold)
        for again in (_accepted(orders)[:2], [_accepted(orders)[1]] * 2):
            with pytest.raises(JournalError, match="already settled"):
                journal.settle(again, hold=hold)
        with pytest.raises(JournalError, match="already settled"):  # unknown
            journal.settle([OrderOutcome("nobody-1", Outcome.FAILED)], hold=hold)
        journal.settle(_accepted(orders)[1:], hold=hold)
        assert [r.outcome for r in journal.orders()] == [Outcome.ACCEPTED] * 3


def _events(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute("SELECT kind, cl_ord_id FROM events ORDER BY id"))


def test_an_order_another_writer_settled_meanwhile_fails_the_write_that_holds_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite"
    mine = Journal(path, clock=ManualClock(1))
    other = Journal(path, clock=ManualClock(1))  # no process lock: a second writer
    orders = _orders(0, 2)
    mine.add_orders(1, orders, dry=False)
    other.settle(_accepted(orders)[:1])  # behind this journal's back
    before = _events(path)
    with pytest.raises(JournalError, match="another process writes this journal"):
        mine.settle(_accepted(orders))  # committed at once: refused, nothing written
    assert _events(path) == before
    mine.settle(_accepted(orders)[1:], hold=True)  # held: the order is this journal's own
    mine.settle(_accepted(orders)[:1], hold=True)  # held: refused where it is written
    with pytest.raises(JournalError, match="another process writes this journal"):
        mine.flush()
    assert _events(path) == before
    other.close()
    with pytest.raises(JournalError, match="another process writes this journal"):
        mine.close()  # the held rows are written last: refused again, the file closed
    assert _events(path) == before
