"""The indexes of ``orders`` and ``events`` (schema version 5): none repeats another, an
intent's and an outcome's event line stay out of ``events_by_order``, every read still finds
its rows by an index, an order's history is what the plain query over every line finds, and a
journal of version 4 opens with every answer unchanged."""

from __future__ import annotations

import json
import sqlite3
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botkit.journal import EventRecord, Journal, NewOrder, OrderFilter, OrderOutcome, Outcome
from botkit.journal.queries import _orders_sql, select_orders
from botkit.journal.schema import MIGRATIONS, ORDER_ROW_KINDS, SCHEMA_VERSION
from tests.pipeline.helpers import ManualClock, intent

D = Decimal


def new(n: int, *, rule: str = "r1", strategy: str = "s1", **kw: Any) -> NewOrder:
    i = intent(n, rule=rule, strategy=strategy, inputs={"mark": "100"})
    return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)


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


def test_the_event_lines_written_with_an_order_s_row_stay_out_of_events_by_order(
    path: Path,
) -> None:
    """``events_by_order`` took each intent's and outcome's line at its strategy's place."""
    Journal(path, clock=ManualClock(1)).close()
    with sqlite3.connect(path) as conn:
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'events_by_order'"
        ).fetchone()
    # version 6 states version 5's condition as one ``<>`` per kind (test_event_index_condition)
    assert sql.endswith("WHERE kind <> 'intent' AND kind <> 'rejected_local' AND kind <> 'outcome'")
    assert ORDER_ROW_KINDS == ("intent", "rejected_local", "outcome")


@pytest.mark.parametrize("kind", ORDER_ROW_KINDS)
def test_record_event_refuses_the_kinds_written_with_an_order_s_row(path: Path, kind: str) -> None:
    with Journal(path, clock=ManualClock(1)) as journal, pytest.raises(ValueError, match=kind):
        journal.record_event(kind, "text", cl_ord_id="s1-r1-0")


def test_an_intent_is_written_to_no_index_that_repeats_another(path: Path) -> None:
    """An index keyed by strategy or client order id takes a cycle's intents at one page per
    strategy: ``orders_by_id`` (the live unique index's key) and ``orders_by_rule``
    (``orders_by_strategy``'s key and more) are gone; dry-run rows keep an index by id."""
    Journal(path, clock=ManualClock(1)).close()
    indexes = _indexes(path)
    assert sorted(indexes) == [  # version 7: time first (test_time_first_indexes)
        "orders_by_cycle",
        "orders_by_time_strategy",
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


@pytest.mark.parametrize(
    "flt", [f for f in FILTERS if f.strategy is None or f.since_ms is not None], ids=repr
)
def test_every_read_by_id_strategy_or_rule_searches_an_index(path: Path, flt: OrderFilter) -> None:
    """(Reads by strategy with no time scan since version 7: test_time_first_indexes.)"""
    with Journal(path, clock=ManualClock(1)) as journal:
        plans = _plans(journal._conn, flt)
    assert not any(p.startswith("SCAN orders") and "USING" not in p for p in plans), plans


def _version_4(path: Path) -> None:
    """Undo version 5 by hand: the file main's code (schema version 4) leaves."""
    with sqlite3.connect(path) as conn:
        conn.execute("DROP INDEX orders_dry_by_id")
        conn.execute("DROP INDEX events_by_order")
        for statement in MIGRATIONS[0]:
            if any(f"{name} " in statement for name in _V4_ONLY):
                conn.execute(statement)
        conn.execute("PRAGMA user_version = 4")


_V4_ONLY = ("orders_by_id", "orders_by_rule", "events_by_order")


def _plain_history(conn: sqlite3.Connection, cl_ord_id: str) -> list[EventRecord]:
    """An order's history as the journal read it up to version 4: every line naming it."""
    rows = conn.execute(
        "SELECT id, ts_ms, cycle_id, kind, strategy, rule, cl_ord_id, text, detail FROM events"
        " WHERE cl_ord_id = ? OR (cl_ord_id = '' AND detail LIKE ?) ORDER BY id",
        (cl_ord_id, f'%"{cl_ord_id}"%'),
    )
    return [
        EventRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8])) for r in rows
    ]


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


IDS = ["s1-r1-0", "s1-r1-1", "s1-r2-2", "s2-r1-3", "s1-r1-9", "nope"]
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
        histories = {c: _plain_history(conn, c) for c in IDS}
        assert "orders_by_id" in _indexes(path)
    with Journal(path, clock=ManualClock(2_000)) as journal:
        assert journal.schema_version == SCHEMA_VERSION  # 5 then; 6 since
        after = [journal.orders(flt) for flt in ANSWERS]
        assert {c: journal.events_for(c) for c in IDS} == histories
        assert all(histories[c] for c in IDS[:-1])
        assert journal.order("s1-r1-0") == before[ANSWERS.index(OrderFilter())][0]
        assert journal.known_ids(["s1-r1-0", "s1-r1-9", "nope"]) == {"s1-r1-0"}
        journal.settle([OrderOutcome("s1-r1-1", Outcome.FAILED, error="never placed")])
    assert after == before
    assert [len(a) for a in after[:2]] == [2, 1]  # a live and a dry-run row share an id
    assert "orders_by_id" not in _indexes(path)
    assert "orders_dry_by_id" in _indexes(path)


class _History:
    """Plays order lives on a journal: intents (live, dry-run reusing live ids, refused), sends
    of one or several orders, unknown fates, lookups, held and committed outcomes, repairs,
    with the clock standing still, moving on or stepping back between calls."""

    def __init__(self, journal: Journal, clock: ManualClock) -> None:
        self.journal = journal
        self.clock = clock
        self.ids: list[str] = []
        self.open: list[str] = []
        self.failed: list[str] = []
        self.n = 0

    def new(self, *, strategy: str, **kw: Any) -> NewOrder:
        self.n += 1
        return new(self.n, strategy=strategy, **kw)

    def play(self, op: tuple[Any, ...]) -> None:
        j, kind = self.journal, op[0]
        if kind == "orders":
            orders = [self.new(strategy=f"s{k % 3}") for k in range(op[1])]
            j.add_orders(1, orders, dry=False)
            self.ids += [o.intent.cl_ord_id for o in orders]
            self.open += [o.intent.cl_ord_id for o in orders]
        elif kind == "refuse":
            refused = self.new(
                strategy="s1", reasons=("px_off_tick",), outcome=Outcome.REJECTED_LOCAL
            )
            j.add_orders(1, [refused], dry=False)
            self.ids.append(refused.intent.cl_ord_id)
        elif kind == "dry" and self.ids:
            n = int(self.ids[op[1] % len(self.ids)].rsplit("-", 1)[1])  # a live order's id
            strategy = self.ids[op[1] % len(self.ids)].split("-", 1)[0]
            outcome = Outcome.REJECTED_LOCAL if op[2] else Outcome.DRY_RUN
            reasons = ("px_off_tick",) if op[2] else ()
            dry = new(n, strategy=strategy, outcome=outcome, reasons=reasons)
            j.add_orders(2, [dry], dry=True)
        elif kind == "send" and self.open:
            j.mark_sent(self.open[: op[1]], note="POST /v3/trade/orders")
        elif kind == "unknown" and self.open:
            j.mark_unknown(self.open[: op[1]], "connection lost")
        elif kind == "lookup" and self.open:
            cid = self.open[op[1] % len(self.open)]
            j.record_event("lookup", f"looked {cid} up", cl_ord_id=cid)
        elif kind == "settle" and self.open:
            chosen, self.open = self.open[: op[1]], self.open[op[1] :]
            outcome = Outcome.FAILED if op[3] else Outcome.ACCEPTED
            j.settle(
                [OrderOutcome(c, outcome, ord_id="" if op[3] else "9") for c in chosen], hold=op[2]
            )
            if op[3]:
                self.failed += chosen
        elif kind == "repair" and self.failed:
            j.repair(self.failed.pop(0), "42", "found later")
        elif kind == "advance":
            self.clock.advance(op[1])


_history_ops = st.one_of(
    st.tuples(st.just("orders"), st.integers(1, 4)),
    st.tuples(st.just("refuse")),
    st.tuples(st.just("dry"), st.integers(0, 9), st.booleans()),
    st.tuples(st.just("send"), st.integers(1, 3)),
    st.tuples(st.just("unknown"), st.integers(1, 2)),
    st.tuples(st.just("lookup"), st.integers(0, 9)),
    st.tuples(st.just("settle"), st.integers(1, 3), st.booleans(), st.booleans()),
    st.tuples(st.just("repair")),
    st.just(("orders", 1)),
    st.just(("settle", 1, False, True)),
    st.tuples(st.just("advance"), st.sampled_from([0, 0, 1, 1000, -1000])),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(_history_ops, max_size=40))
def test_an_order_s_history_is_every_line_that_names_it(tmp_path: Path, ops: list[Any]) -> None:
    """``events_for`` (the index for most lines, the row's times for its intent's and
    outcome's, a scan for a repaired order's) against the plain query over every line."""
    clock = ManualClock(1_000_000)
    path = tmp_path / f"history-{uuid.uuid4().hex}.sqlite"
    with Journal(path, clock=clock) as journal:
        history = _History(journal, clock)
        for op in ops:
            history.play(op)
        journal.flush()
        for cid in [*history.ids, "nope"]:
            assert journal.events_for(cid) == _plain_history(journal._conn, cid), cid


def test_a_repaired_order_s_history_keeps_the_outcome_it_had(tmp_path: Path) -> None:
    """A repair moves ``outcome_ms`` (the time the history finds an outcome's line at)."""
    clock = ManualClock(1_000_000)
    with Journal(tmp_path / "j.sqlite", clock=clock) as journal:
        history = _History(journal, clock)
        for op in [("orders", 2), ("send", 2), ("advance", 5), ("settle", 2, True, True)]:
            history.play(op)
        clock.advance(60_000)
        history.play(("repair",))
        kinds = [e.kind for e in journal.events_for(history.ids[0])]
        assert kinds == ["intent", "sent", "outcome", "repaired"]
        for cid in history.ids:
            assert journal.events_for(cid) == _plain_history(journal._conn, cid)


def test_a_dry_run_refusal_reusing_a_live_id_is_in_that_id_s_history(tmp_path: Path) -> None:
    clock = ManualClock(1_000_000)
    with Journal(tmp_path / "j.sqlite", clock=clock) as journal:
        history = _History(journal, clock)
        for op in [("orders", 1), ("advance", 1000), ("dry", 0, True), ("advance", 1000)]:
            history.play(op)
        history.play(("dry", 0, False))
        kinds = [e.kind for e in journal.events_for(history.ids[0])]
        assert kinds == ["intent", "rejected_local", "dry_run"]
        assert journal.events_for(history.ids[0]) == _plain_history(journal._conn, history.ids[0])
