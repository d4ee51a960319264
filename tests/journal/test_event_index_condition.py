"""``events_by_order``'s condition (schema version 6): version 5's ``kind NOT IN (...)`` as one
``<>`` per kind (SQLite evaluated the ``NOT IN`` for every event row written by building a table
of its list). The index holds the same lines, an order's history reads it as before, and a
journal of version 5 opens with every history unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from botkit.journal import Journal, OrderOutcome, Outcome
from botkit.journal.queries import _OTHER_LINES, NOT_ROW_KINDS
from botkit.journal.schema import MIGRATIONS, SCHEMA_VERSION
from tests.journal.test_order_indexes import _plain_history, new
from tests.pipeline.helpers import ManualClock

_IDS = ["s1-r1-0", "s1-r1-1", "s1-r2-2", "s2-r1-3", "nope"]
_V5_INDEX = MIGRATIONS[4][-1]


def _write(path: Path) -> None:
    clock = ManualClock(1_000)
    with Journal(path, clock=clock) as j:
        j.add_orders(1, [new(0), new(1), new(2, rule="r2"), new(3, strategy="s2")], dry=False)
        j.add_orders(2, [new(0, outcome=Outcome.DRY_RUN)], dry=True)
        j.mark_sent(["s1-r1-0", "s1-r1-1"])
        j.record_event("lookup", "looked s1-r1-1 up", cl_ord_id="s1-r1-1")
        clock.advance(500)
        j.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="77")])
        j.settle([OrderOutcome("s1-r1-1", Outcome.FAILED, error="never placed")])
        j.repair("s1-r1-1", "78", "found later")


def _indexed_lines(conn: sqlite3.Connection, condition: str) -> list[tuple[str, int]]:
    """The entries of ``events_by_order`` (a covering read of it under ``condition``)."""
    return conn.execute(
        f"SELECT cl_ord_id, id FROM events INDEXED BY events_by_order WHERE {condition}"  # noqa: S608
        " ORDER BY cl_ord_id, id"
    ).fetchall()


def test_the_index_s_condition_is_one_test_per_kind(tmp_path: Path) -> None:
    Journal(tmp_path / "j.sqlite", clock=ManualClock(1)).close()
    with sqlite3.connect(tmp_path / "j.sqlite") as conn:
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'events_by_order'"
        ).fetchone()
    assert sql.endswith("WHERE kind <> 'intent' AND kind <> 'rejected_local' AND kind <> 'outcome'")
    assert sql.endswith(f"WHERE {NOT_ROW_KINDS}")


def test_an_order_s_other_lines_are_read_by_the_index(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        plans = [
            row[3]
            for row in journal._conn.execute("EXPLAIN QUERY PLAN " + _OTHER_LINES, ("x", "%x%"))
        ]
    assert plans.count("SEARCH events USING INDEX events_by_order (cl_ord_id=?)") == 2, plans


def test_a_journal_of_version_5_opens_with_every_history_and_indexed_line_unchanged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite"
    _write(path)
    with sqlite3.connect(path) as conn:  # undo version 6 by hand: the file version 5 leaves
        conn.execute("DROP INDEX events_by_order")
        conn.execute(_V5_INDEX)
        conn.execute("PRAGMA user_version = 5")
    with sqlite3.connect(path) as conn:
        histories = {c: _plain_history(conn, c) for c in _IDS}
        lines = _indexed_lines(conn, "kind NOT IN ('intent', 'rejected_local', 'outcome')")
    assert lines  # sends, a lookup, a repair
    with Journal(path, clock=ManualClock(2_000)) as journal:
        assert journal.schema_version == SCHEMA_VERSION  # 6 then; 7 since
        assert {c: journal.events_for(c) for c in _IDS} == histories
        assert _indexed_lines(journal._conn, NOT_ROW_KINDS) == lines
