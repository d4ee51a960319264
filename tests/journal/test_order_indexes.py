"""The indexes of ``orders`` (schema version 5): none repeats another, every read still finds its
rows by an index, and a journal of version 4 opens with every answer unchanged."""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.journal import Journal, NewOrder, OrderFilter, OrderOutcome, Outcome
from botkit.journal.queries import _orders_sql, select_orders
from botkit.journal.schema import MIGRATIONS
from tests.pipeline.helpers import ManualClock, intent

D = Decimal


def new(n: int, *, rule: str = "r1", strategy: str = "s1", **kw: object) -> NewOrder:
    i = intent(n, rule=rule, strategy=strategy, inputs={"mark": "100"})
    return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)  # type: ignore[arg-type]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


def _indexes(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(
            conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'orders'"
                " AND sql IS NOT NULL"
            ).fetchall()
        )


def test_an_intent_is_written_to_no_index_that_repeats_another(path: Path) -> None:
    """An index keyed by strategy or client order id takes a cycle's intents at one page per
    strategy: ``orders_by_id`` (the live unique index's key) and ``orders_by_rule``
    (``orders_by_strategy``'s key and more) are gone; dry-run rows keep an index by id."""
    Journal(path, clock=ManualClock(1)).close()
    indexes = _indexes(path)
    assert sorted(indexes) == [
        "orders_by_cycle",
        "orders_by_strategy",
        "orders_by_time",
        "orders_cl_ord_id_live",
        "orders_dry_by_id",
        "orders_unsettled",
    ]
    assert "WHERE dry <> 0" in indexes["orders_dry_by_id"]


def _plans(conn: sqlite3.Connection, flt: OrderFilter) -> list[str]:
    sql, args = _orders_sql(flt)
    return [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, args)]


FILTERS = [
    OrderFilter(cl_ord_id="s1-r1-0"),
    OrderFilter(cl_ord_id="s1-r1-0", include_dry=False),
    OrderFilter(cl_ord_id="s1-r1-0", outcome="unsettled"),
    OrderFilter(cl_ord_id="s1-r1-0", outcome="accepted"),
    OrderFilter(cl_ord_id="s1-r1-0", limit=1),
    OrderFilter(strategy="s1", rule="r1"),
    OrderFilter(strategy="s1", rule="r1", include_dry=False, limit=2),
    OrderFilter(strategy="s1", since_ms=5),
    OrderFilter(outcome="unsettled"),
]


@pytest.mark.parametrize("flt", FILTERS, ids=repr)
def test_every_read_by_id_strategy_or_rule_searches_an_index(path: Path, flt: OrderFilter) -> None:
    with Journal(path, clock=ManualClock(1)) as journal:
        plans = _plans(journal._conn, flt)
    assert not any(p.startswith("SCAN orders") and "USING" not in p for p in plans), plans


def _version_4(path: Path) -> None:
    """Undo version 5 by hand: the file main's code (schema version 4) leaves."""
    with sqlite3.connect(path) as conn:
        conn.execute("DROP INDEX orders_dry_by_id")
        for statement in MIGRATIONS[0]:
            if "orders_by_id " in statement or "orders_by_rule " in statement:
                conn.execute(statement)
        conn.execute("PRAGMA user_version = 4")


def _write(path: Path) -> None:
    clock = ManualClock(1_000)
    with Journal(path, clock=clock) as j:
        j.add_orders(1, [new(0), new(1), new(2, rule="r2"), new(3, strategy="s2")], dry=False)
        j.add_orders(
            2, [new(0, outcome=Outcome.DRY_RUN), new(9, outcome=Outcome.DRY_RUN)], dry=True
        )
        j.mark_sent(["s1-r1-0", "s1-r1-1"])
        clock.advance(500)
        j.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="77")])


ANSWERS = [
    *FILTERS,
    OrderFilter(),
    OrderFilter(cl_ord_id="s1-r1-9"),
    OrderFilter(cl_ord_id="s1-r1-9", include_dry=False),
    OrderFilter(cl_ord_id="s1-r2-2", include_dry=True, outcome="unsettled"),
    OrderFilter(strategy="s1", rule="r2"),
    OrderFilter(strategy="s2", rule="r1", include_dry=False),
]


def test_a_journal_of_version_4_opens_with_every_answer_unchanged(path: Path) -> None:
    _write(path)
    _version_4(path)
    with sqlite3.connect(path) as conn:
        before = [select_orders(conn, flt) for flt in ANSWERS]
        assert "orders_by_id" in _indexes(path)
    with Journal(path, clock=ManualClock(2_000)) as journal:
        assert journal.schema_version == 5
        after = [journal.orders(flt) for flt in ANSWERS]
        assert journal.order("s1-r1-0") == before[ANSWERS.index(OrderFilter())][0]
        assert journal.known_ids(["s1-r1-0", "s1-r1-9", "nope"]) == {"s1-r1-0"}
        journal.settle([OrderOutcome("s1-r1-1", Outcome.FAILED, error="never placed")])
    assert after == before
    assert [len(a) for a in after[:2]] == [2, 1]  # a live and a dry-run row share an id
    assert "orders_by_id" not in _indexes(path)
    assert "orders_dry_by_id" in _indexes(path)
