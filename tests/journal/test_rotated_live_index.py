"""Schema version 8: the live unique index of client order ids is keyed by the id rotated past
its 12-character tag (``bk`` + the strategy's 6 + the rule's 4), so a cycle's intents are
appended together instead of at one place per strategy. It refuses exactly the ids the
column's index refused, every statement that looks a live order up by its id searches it, and a
journal of version 7 opens with every read unchanged (and goes back to 7 with
:data:`ROLLBACK_TO_7`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.errors import DuplicateOrderId
from botkit.journal import Journal, NewOrder, OrderFilter, OrderOutcome, Outcome, queries, writes
from botkit.journal.schema import LIVE_KEY, SCHEMA_VERSION, live_key, rotated
from botkit.rules.ids import client_order_id
from tests.journal import test_time_first_indexes as v7
from tests.pipeline.helpers import ManualClock, intent

ROLLBACK_TO_7 = (
    "DROP INDEX orders_cl_ord_id_live",
    "CREATE UNIQUE INDEX orders_cl_ord_id_live ON orders(cl_ord_id) WHERE dry = 0",
    "PRAGMA user_version = 7",
)
"""Takes a journal of version 8 back to version 7 (docs/journal.md), as an older botkit, which
refuses a newer journal, needs it."""

STRATEGIES = ("alpha", "beta", "gamma")


def _id(strategy: str, n: int) -> str:
    return client_order_id(strategy, "r1", 29_000_000 + n // 3, n % 3)


def _order(strategy: str, n: int, *, cid: str = "", **kw: Any) -> NewOrder:
    i = intent(n, strategy=strategy, cl_ord_id=cid or _id(strategy, n), inputs={"n": str(n)})
    return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)


def _live_index(conn: sqlite3.Connection) -> str:
    (sql,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'orders_cl_ord_id_live'"
    ).fetchone()
    return str(sql)


def test_the_live_index_is_keyed_by_the_id_rotated_past_its_tag(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1)) as journal:
        assert journal.schema_version == SCHEMA_VERSION == 8
        sql = _live_index(journal._conn)
    assert sql == f"CREATE UNIQUE INDEX orders_cl_ord_id_live ON orders({LIVE_KEY}) WHERE dry = 0"
    assert rotated("cl_ord_id") == LIVE_KEY
    cid = client_order_id("alpha", "r1", 29_000_000, 4)
    assert len(cid) > 12
    assert live_key(cid) == cid[12:] + cid[:12]
    assert live_key(cid).startswith("-")  # the slot (a time) first, the tag last


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_characters="\x00")))
def test_the_key_in_python_is_the_index_s_key_in_sql(cid: str) -> None:
    with sqlite3.connect(":memory:") as conn:
        (key,) = conn.execute(f"SELECT {rotated('?1')}", (cid,)).fetchone()
    assert key == live_key(cid)
    assert len(key) == len(cid)
    if len(cid) <= 12:
        assert key == cid


_ID_CHARS = st.sampled_from("ab-_0")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(_ID_CHARS, min_size=10, max_size=16), max_size=12))
def test_the_key_refuses_exactly_what_the_column_refused(ids: list[str]) -> None:
    """Every id's insert, one at a time, is refused by the keyed index exactly when the
    column's index refused it (the rotation is one-to-one), and a dry-run row never is."""
    with sqlite3.connect(":memory:") as conn:
        for name, key in (("by_column", "cl_ord_id"), ("by_key", LIVE_KEY)):
            conn.execute(f"CREATE TABLE {name} (cl_ord_id TEXT NOT NULL, dry INTEGER NOT NULL)")
            conn.execute(f"CREATE UNIQUE INDEX {name}_live ON {name}({key}) WHERE dry = 0")
        for cid in ids:
            refused = []
            for name in ("by_column", "by_key"):
                conn.execute(f"INSERT INTO {name} VALUES (?, 1)", (cid,))  # noqa: S608
                try:
                    conn.execute(f"INSERT INTO {name} VALUES (?, 0)", (cid,))  # noqa: S608
                except sqlite3.IntegrityError as exc:
                    refused.append(exc.sqlite_errorcode)
                else:
                    refused.append(0)
            assert refused[0] == refused[1], cid
            assert refused[0] in (0, sqlite3.SQLITE_CONSTRAINT_UNIQUE)


@contextmanager
def _journal(kind: str, tmp_path: Path, clock: ManualClock) -> Iterator[Journal]:
    if kind == "transient":
        with Journal("", clock=clock, transient=True, group_rows=64) as journal:
            yield journal
    else:
        group = 64 if kind == "group" else 0
        with Journal(tmp_path / "j.sqlite", clock=clock, group_rows=group) as journal:
            yield journal


KINDS = ("write-through", "group", "transient")


@pytest.mark.parametrize("kind", KINDS)
def test_a_live_id_held_is_refused_as_a_duplicate(tmp_path: Path, kind: str) -> None:
    clock = ManualClock(10_000)
    with _journal(kind, tmp_path, clock) as journal:
        cycle = journal.begin_cycle(dry=False)
        first = [_order(s, n) for n, s in enumerate(STRATEGIES)]
        journal.add_orders(cycle, first, dry=False)
        # the same tag, another slot; another tag, the same slot and leg: both new ids
        same_tag = _order("alpha", 30)
        same_tail = _order("delta", 0, cid=client_order_id("delta", "r1", 29_000_000, 0))
        assert same_tail.intent.cl_ord_id[12:] == first[0].intent.cl_ord_id[12:]
        journal.add_orders(cycle, [same_tag, same_tail], dry=False, reserve_ms=5_000)
        journal.release_sends()
        again = _order("gamma", 90)
        for batch, reserve in (
            ([again, _order("beta", 1)], 0),  # held before
            ([again, _order("beta", 1)], 5_000),
            ([again, again], 0),  # named twice
        ):
            with pytest.raises(DuplicateOrderId):
                journal.add_orders(cycle, batch, dry=False, reserve_ms=reserve)
        # a dry-run plan may repeat a live id
        journal.add_orders(cycle, [_order("beta", 1, outcome=Outcome.DRY_RUN)], dry=True)
        live = OrderFilter(include_dry=False)
        assert [o.cl_ord_id for o in journal.orders(live)] == [
            *(o.intent.cl_ord_id for o in first),
            same_tag.intent.cl_ord_id,
            same_tail.intent.cl_ord_id,
        ]
        assert journal.known_ids([_id("beta", 1), again.intent.cl_ord_id]) == {_id("beta", 1)}
        assert len(journal.orders(OrderFilter(cl_ord_id=_id("beta", 1)))) == 2  # live + dry run
        assert len(journal.orders(OrderFilter(cl_ord_id=_id("beta", 1), include_dry=False))) == 1


def _exercise(journal: Journal, clock: ManualClock) -> list[str]:
    """Every write and read of a live order by its client order id, through the journal."""
    cycle = journal.begin_cycle(dry=False)
    orders = [_order(STRATEGIES[n % 3], n) for n in range(6)]
    ids = [o.intent.cl_ord_id for o in orders]
    journal.add_orders(cycle, orders[:3], dry=False)
    journal.add_orders(cycle, orders[3:], dry=False, reserve_ms=5_000)
    journal.mark_sent([ids[3]])  # a reserved order: its mark, the others' reservation on
    journal.release_sends()
    journal.mark_sent(ids[:2])
    journal.mark_sent([ids[2], ids[2]])  # named twice: counted twice
    journal.settle([OrderOutcome(ids[0], Outcome.ACCEPTED, ord_id="o0")], hold=True)
    journal.settle(
        [
            OrderOutcome(ids[1], Outcome.REJECTED, msg="no"),
            OrderOutcome(ids[2], Outcome.FAILED, error="down"),
        ]
    )
    journal.mark_unknown([ids[3]], "no answer")
    journal.flush()
    clock.advance(1_000)
    assert journal.repair(ids[2], "o2", "seen at the exchange")
    journal.add_orders(cycle, [_order("alpha", 0, outcome=Outcome.DRY_RUN)], dry=True)
    journal.end_cycle(cycle)
    return ids


def _direct(conn: sqlite3.Connection, ids: list[str]) -> None:
    """The statements the journal's paths above may not reach, called directly (each rolled
    back)."""
    conn.execute("SAVEPOINT direct")
    writes.check_open(conn, ids[4:5], path="j")
    writes.resend_reserved(conn, ids[4:], 99)
    writes.release_sends(conn, ids[4:])
    writes.unreserve_attempts(conn, ids[4:])
    writes.mark_sent(conn, ids[4:], 99)
    writes.mark_sent(conn, [ids[4], ids[4]], 99)  # named twice: one statement each
    writes.update_sent(conn, [(99, ids[4]), (99, ids[5])])
    rows = [("accepted", "x", None, "", "", 1, "[]", 99, cid) for cid in ids[4:]]
    conn.execute("SAVEPOINT settled")
    writes.update_outcomes(conn, rows, path="j")
    conn.execute("ROLLBACK TO settled")
    writes.update_outcomes(conn, rows, path="j", sent=[(98, ids[4])])
    conn.execute("ROLLBACK TO direct")
    conn.execute("RELEASE direct")
    for flt in (
        OrderFilter(cl_ord_id=ids[0]),
        OrderFilter(cl_ord_id=ids[0], include_dry=False),
        OrderFilter(cl_ord_id=ids[3], outcome="unsettled"),
        OrderFilter(cl_ord_id=ids[3], include_dry=False, outcome="unsettled"),
        OrderFilter(cl_ord_id=ids[0], outcome="accepted", limit=1),
        OrderFilter(cl_ord_id=ids[0], since_ms=0, until_ms=10**9),
    ):
        queries.select_orders(conn, flt)
        list(queries.iter_order_cells(conn, flt))
    queries.events_for(conn, ids[0])
    queries.known_ids(conn, ids)
    queries.ord_ids(conn, ids)


_LOOKUP = re.compile(r"^(SELECT\b.*\bFROM orders|UPDATE orders)\b.*\bWHERE\b.*\bcl_ord_id\b", re.S)


def _template(sql: str) -> str:
    """A traced statement without its values (the same statement however many rows)."""
    sql = re.sub(r"'[^']*'|\b\d+\b|NULL", "v", sql)
    return re.sub(r"\((v, )*v\)(, \((v, )*v\))*", "(...)", sql)


@pytest.mark.parametrize("update_from", [True, False], ids=["update-from", "one-by-one"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_lookup_of_a_live_order_by_its_id_searches_the_keyed_index(
    tmp_path: Path, kind: str, update_from: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "UPDATE_FROM", update_from)
    seen: list[str] = []
    clock = ManualClock(10_000)
    with _journal(kind, tmp_path, clock) as journal:
        conn = journal._conn
        conn.set_trace_callback(seen.append)
        ids = _exercise(journal, clock)
        with journal._lock:
            _direct(conn, ids)
        journal.orders(OrderFilter(cl_ord_id=ids[0]))
        journal.events_for(ids[0])
        conn.set_trace_callback(None)
        lookups = [sql for sql in seen if _LOOKUP.match(sql)]
        plans = {
            _template(sql): [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
            for sql in lookups
        }
    for template, plan in plans.items():
        assert any("USING INDEX orders_cl_ord_id_live (<expr>=?)" in p for p in plan), (
            template,
            plan,
        )
        assert not any(p.startswith("SCAN orders") for p in plan), (template, plan)
    # every kind of lookup was seen: the reads (orders by id with and without dry runs, the
    # events' times, known ids, exchange ids, open ids, a repair's) and the writes (send marks
    # one by one, in a list and from values; reservations on, released, attempts taken back;
    # outcomes one by one and from values, with and without a send time; unknown; repaired)
    # every kind of lookup was seen: the reads (orders by id, with and without dry runs; the
    # events' times; known ids, exchange ids, open ids; a repair's) and the writes (send marks
    # one by one, in a list and from values; reservations extended, released, attempts taken
    # back; outcomes one by one and from values, with a send time; unknown; repaired)
    required = [
        "FROM orders WHERE ((substr(cl_ord_id, v) ||",  # by id, dry runs too
        "FROM orders WHERE substr(cl_ord_id, v) ||",  # a live order by id
        "SELECT ts_ms, outcome_ms FROM orders WHERE (substr(",  # events_for
        "SELECT cl_ord_id FROM orders WHERE dry = v AND substr(",  # known_ids
        "SELECT cl_ord_id, ord_id FROM orders WHERE dry = v AND substr(",  # ord_ids
        "SELECT cl_ord_id FROM orders WHERE dry = v AND outcome IS v AND substr(",  # check_open
        "SELECT outcome, error, msg, strategy, rule, ts_ms FROM orders WHERE substr(",  # repair
        "UPDATE orders SET outcome = v, ord_id = v, resolved = v, error = v",  # repair
        "UPDATE orders SET state = v, error = v WHERE substr(",  # mark_unknown
        "UPDATE orders SET sent_ms = v WHERE dry = v AND substr(",  # resend_reserved
        "UPDATE orders SET attempts = attempts - v WHERE dry = v AND substr(",  # unreserve
        "THEN v ELSE state END, attempts = attempts - v, sent_ms = v WHERE dry = v AND substr(",
        "attempts + v, sent_ms = v WHERE substr(cl_ord_id, v) || substr(cl_ord_id, v, v) =",
        "attempts + v, sent_ms = v WHERE substr(cl_ord_id, v) || substr(cl_ord_id, v, v) IN",
        "outcome_ms = v WHERE substr(cl_ord_id, v) ||",  # SETTLE
    ]
    if update_from:
        required += [
            "sent_ms = v.column1 FROM (VALUES (...)) AS v WHERE substr(orders.cl_ord_id",
            "outcome_ms = v.column8 FROM (VALUES (...)) AS v WHERE substr(orders.cl_ord_id",
            "sent_ms = COALESCE(v.column10, sent_ms) FROM (VALUES (...)) AS v WHERE substr(",
        ]
    else:
        required.append("END, sent_ms = v WHERE substr(cl_ord_id, v) ||")  # update_sent
    missing = [r for r in required if not any(r in template for template in plans)]
    assert not missing, missing


def _reads(conn: sqlite3.Connection, ids: list[str]) -> list[Any]:
    filters = [
        OrderFilter(cl_ord_id=cid, include_dry=dry, outcome=outcome)
        for cid in ids
        for dry in (False, True)
        for outcome in (None, "unsettled", "accepted")
    ]
    return [
        v7._reads(conn),
        [queries.select_orders(conn, f) for f in filters],
        [list(queries.iter_order_cells(conn, f)) for f in filters],
        {c: queries.events_for(conn, c) for c in ids},
        queries.known_ids(conn, ids),
        queries.ord_ids(conn, ids),
    ]


def test_a_journal_of_version_7_opens_with_every_read_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    v7._write(path)
    clock = ManualClock(10**6)
    with Journal(path, clock=clock) as journal:
        ids = _exercise(journal, clock)
    ids += ["short", "", "bk" + "x" * 30, "nope-" + ids[0]]
    with sqlite3.connect(path) as conn:  # the file version 7 leaves
        for statement in ROLLBACK_TO_7:
            conn.execute(statement)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (7,)
        assert _live_index(conn).endswith("ON orders(cl_ord_id) WHERE dry = 0")
        before = _reads(conn, ids)
    with Journal(path, clock=clock) as journal:
        assert journal.schema_version == SCHEMA_VERSION == 8
        assert LIVE_KEY in _live_index(journal._conn)
        after = _reads(journal._conn, ids)
        assert journal.known_ids(ids) == set(ids[:6])
        with pytest.raises(DuplicateOrderId):  # the migrated index refuses what it held
            journal.add_orders(None, [_order("alpha", 0)], dry=False)
    assert after == before
    assert all(before[1][6 * k] for k in range(6))  # each live id's first read finds it
    assert before[4] == set(ids[:6])
