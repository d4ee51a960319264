"""Schema version 7: the indexes the rules' activity reads begin with the time, so a commit's
entries are appended together instead of at one place per strategy; no index of ``orders`` or
``evaluations`` begins with the strategy; the activity still searches its window by index, and
a journal of version 6 opens with every read unchanged (and goes back to 6 with
:data:`ROLLBACK_TO_6`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from botkit.intents import Activity
from botkit.journal import (
    Evaluated,
    Journal,
    NewOrder,
    OrderFilter,
    OrderOutcome,
    Outcome,
    queries,
    strategies,
    views,
)
from botkit.journal.schema import MIGRATIONS, SCHEMA_VERSION
from tests.pipeline.helpers import ManualClock, intent

ROLLBACK_TO_6 = (
    "DROP INDEX orders_by_time_strategy",
    "DROP INDEX evaluations_fired_by_time",
    "CREATE INDEX evaluations_by_rule ON evaluations(strategy, rule, ts_ms)",
    "CREATE INDEX orders_by_time ON orders(ts_ms)",
    "CREATE INDEX evaluations_fired ON evaluations(strategy, ts_ms) WHERE fired = 1",
    "CREATE INDEX orders_by_strategy ON orders(strategy, ts_ms)",
    "PRAGMA user_version = 6",
)
"""Takes a journal of version 7 back to version 6 (docs/journal.md), as an older botkit, which
refuses a newer journal, needs it."""

STRATEGIES = ("s0", "s1", "s2")


def _indexes(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    return dict(
        conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?"
            " AND sql IS NOT NULL",
            (table,),
        ).fetchall()
    )


def test_no_index_of_orders_or_evaluations_begins_with_the_strategy(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        assert journal.schema_version == SCHEMA_VERSION == len(MIGRATIONS)  # 7 then; 8 since
        conn = journal._conn
        for table in ("orders", "evaluations"):
            for name, sql in _indexes(conn, table).items():
                assert "(strategy" not in sql.replace(" ", ""), name
        assert "orders_by_time_strategy" in _indexes(conn, "orders")
        assert _indexes(conn, "evaluations")["evaluations_fired_by_time"].endswith(
            "(ts_ms, strategy) WHERE fired = 1"
        )


@pytest.mark.parametrize("include_dry", [False, True])
def test_the_activity_searches_its_window_by_time(tmp_path: Path, include_dry: bool) -> None:
    seen: list[str] = []
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        journal._conn.set_trace_callback(seen.append)
        journal.activity("s1", 0, include_dry=include_dry)
        journal._conn.set_trace_callback(None)
        plans = [
            row[3]
            for sql in seen
            if sql.startswith("SELECT")
            for row in journal._conn.execute(f"EXPLAIN QUERY PLAN {sql}")
        ]
    assert "SEARCH evaluations USING INDEX evaluations_fired_by_time (ts_ms>?)" in plans
    assert "SEARCH orders USING INDEX orders_by_time_strategy (ts_ms>?)" in plans
    assert not [p for p in plans if p.startswith("SCAN")], plans


@pytest.mark.parametrize(
    "flt",
    [
        OrderFilter(since_ms=5),
        OrderFilter(strategy="s1", since_ms=5, include_dry=False),
        OrderFilter(outcome="failed", since_ms=5, include_dry=False),  # the rechecker's
        OrderFilter(symbol="BTC_USDT_PERP", since_ms=5, until_ms=9),
    ],
    ids=repr,
)
def test_a_read_since_a_time_searches_the_time_index(tmp_path: Path, flt: OrderFilter) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        sql, args = queries._orders_sql(flt)
        plans = [row[3] for row in journal._conn.execute(f"EXPLAIN QUERY PLAN {sql}", args)]
    assert plans[0].startswith("SEARCH orders USING INDEX orders_by_time_strategy (ts_ms>?"), plans


def _order(n: int, strategy: str, rule: str, **kw: Any) -> NewOrder:
    i = intent(n, strategy=strategy, rule=rule, inputs={"mark": str(n)})
    return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)


def _write(path: Path) -> None:
    """Cycles of three strategies: rules that fire or not, live orders accepted, rejected,
    failed or open, dry-run ones (one reusing a live id), refusals; the clock moving on,
    standing still and stepping back."""
    clock = ManualClock(10_000)
    n = 0
    with Journal(path, clock=clock) as j:
        for step, move in enumerate((60_000, 0, 60_000, -30_000, 60_000, 1, 60_000)):
            clock.advance(move)
            dry = step == 4
            cycle = j.begin_cycle(dry=dry)
            j.record_cycle_evaluations(
                cycle,
                [
                    (
                        s,
                        f"v{step}",
                        [
                            Evaluated("r1", (step + k) % 2 == 0, "" if k else "quiet", {"k": "1"}),
                            Evaluated("r2", (step + k) % 3 == 0),
                        ],
                    )
                    for k, s in enumerate(STRATEGIES)
                ],
                dry=dry,
            )
            orders = []
            for k, s in enumerate(STRATEGIES):
                n += 1
                orders.append(
                    _order(n, s, f"r{1 + k % 2}", outcome=Outcome.DRY_RUN if dry else None)
                )
            if dry:
                orders.append(_order(1, "s0", "r1", outcome=Outcome.DRY_RUN))
                j.add_orders(cycle, orders, dry=True)
            else:
                refused = _order(1000 + n, "s2", "r2", outcome=Outcome.REJECTED_LOCAL)
                j.add_orders(cycle, [refused, *orders], dry=False)
                ids = [o.intent.cl_ord_id for o in orders]
                j.mark_sent(ids[:2])
                verdicts = (Outcome.ACCEPTED, Outcome.REJECTED, Outcome.FAILED)
                j.settle([OrderOutcome(ids[0], verdicts[step % 3], ord_id=f"x{n}")])
                if step % 2:
                    j.settle([OrderOutcome(ids[1], Outcome.ACCEPTED, ord_id=f"y{n}")])
            j.end_cycle(cycle)
        j.record_event("note", "a line of no order")


IDS = ["s0-r1-1", "s1-r2-2", "s2-r1-3", "s0-r1-13", "s2-r2-1003", "nope"]
FILTERS = [
    OrderFilter(),
    OrderFilter(include_dry=False),
    OrderFilter(strategy="s1"),
    OrderFilter(strategy="s0", rule="r1", include_dry=False),
    OrderFilter(strategy="s2", include_dry=False, limit=2),
    OrderFilter(strategy="s2", since_ms=100_000),
    OrderFilter(strategy="s1", since_ms=100_000, until_ms=200_000, include_dry=False),
    OrderFilter(since_ms=130_000, outcome="failed", include_dry=False),
    OrderFilter(outcome="unsettled"),
    OrderFilter(cl_ord_id="s0-r1-1"),
    OrderFilter(cycle_id=3),
]
SINCE = (0, 70_000, 130_000, 200_000, 10**9)


def _activities(conn: sqlite3.Connection) -> list[Activity]:
    return [
        queries.activity(conn, s, since, include_dry=dry)
        for s in (*STRATEGIES, "none")
        for since in SINCE
        for dry in (False, True)
    ]


def _reads(conn: sqlite3.Connection) -> list[Any]:
    """Every read of orders and evaluations the journal makes (its methods call these)."""
    return [
        _activities(conn),
        [queries.select_orders(conn, f) for f in FILTERS],
        [list(queries.iter_order_cells(conn, f)) for f in FILTERS],
        views.latest_evaluations(conn, include_dry=False),
        views.latest_evaluations(conn, include_dry=True),
        views.recent_evaluations(conn, limit=5, fired_only=True, include_dry=False),
        views.recent_evaluations(conn, limit=100, fired_only=False, include_dry=True),
        strategies.select_strategies(conn, str.upper),
        {c: queries.events_for(conn, c) for c in IDS},
        queries.known_ids(conn, IDS),
        queries.ord_ids(conn, IDS),
        queries.cycle_summaries(conn),
        queries.events_after(conn, 0),
    ]


def test_a_journal_of_version_6_opens_with_every_read_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    _write(path)
    with sqlite3.connect(path) as conn:  # the file version 6 leaves
        for statement in ROLLBACK_TO_6:
            conn.execute(statement)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (6,)
        plans = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {_BY_STRATEGY}", (1, 2))]
        assert plans == ["SEARCH orders USING INDEX orders_by_strategy (strategy=? AND ts_ms>?)"]
        before = _reads(conn)
    with Journal(path, clock=ManualClock(10**6)) as journal:
        assert journal.schema_version == SCHEMA_VERSION  # 7 then; 8 since
        after = _reads(journal._conn)
    assert after == before
    activities = before[0]
    assert any(rule.orders for act in activities for rule in act.values())
    assert any(rule.fire_times_ms for act in activities for rule in act.values())
    assert all(before[1][:9])  # each filter but the id's and the cycle's finds orders


_BY_STRATEGY = "SELECT rule FROM orders WHERE strategy = ? AND ts_ms >= ? ORDER BY ts_ms, id"
