"""A batch's send mark and its outcomes are one ``UPDATE`` each, not one per order (the rows
they leave: the write-mode property tests in ``test_group_commit_rows.py``, against one
``UPDATE`` per order)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from botkit.journal import Journal, NewOrder, OrderOutcome, Outcome, writes
from tests.pipeline.helpers import ManualClock, intent


def _orders(first: int, count: int) -> list[NewOrder]:
    out = []
    for n in range(first, first + count):
        i = intent(n, inputs={"mark": "100"})
        out.append(NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}))
    return out


class _Counting:
    """The journal's connection, noting each run of an ``UPDATE`` of ``orders`` (an
    ``executemany`` runs its statement once per row) by the start of its ``SET``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.updates: list[str] = []

    def _note(self, sql: str, times: int) -> None:
        if sql.startswith("UPDATE orders"):
            self.updates += [sql.split(" SET ")[1][:14]] * times

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self._note(sql, 1)
        return self.conn.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        rows = list(parameters)
        self._note(sql, len(rows))
        return self.conn.executemany(sql, rows)


@pytest.mark.skipif(not writes.UPDATE_FROM, reason="SQLite before 3.33: one UPDATE per order")
def test_a_batch_s_send_mark_and_held_outcomes_are_one_update_each(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        first, second = _orders(0, 10), _orders(10, 10)
        journal.add_orders(1, [*first, *second], dry=False)
        ids = [o.intent.cl_ord_id for o in first]
        counting = _Counting(journal._conn)
        journal._conn = counting  # type: ignore[assignment]
        journal.mark_sent(ids)
        journal.settle(
            [OrderOutcome(c, Outcome.ACCEPTED, ord_id=f"9{n}") for n, c in enumerate(ids)],
            hold=True,
        )
        journal.mark_sent([o.intent.cl_ord_id for o in second])  # with the held outcomes
        journal._conn = counting.conn
        assert counting.updates == ["state = CASE W", "state = 'final", "state = CASE W"]
        assert [o.attempts for o in journal.orders()] == [1] * 20
        assert [o.ord_id for o in journal.orders()] == [f"9{n}" for n in range(10)] + [""] * 10


def test_a_send_naming_an_order_twice_counts_two_attempts(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        journal.add_orders(1, _orders(0, 2), dry=False)
        a, b = (o.cl_ord_id for o in journal.orders())
        journal.mark_sent([a, b, a])
        assert [o.attempts for o in journal.orders()] == [2, 1]
