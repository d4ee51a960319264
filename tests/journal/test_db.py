"""The journal database: migrations, WAL, one final outcome per order, activity, prune, filters."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.errors import JournalError
from botkit.intents import RuleActivity
from botkit.journal import (
    SCHEMA_VERSION,
    Evaluated,
    Journal,
    NewOrder,
    OrderFilter,
    OrderOutcome,
    Outcome,
)
from botkit.journal.schema import MIGRATIONS
from tests.pipeline.helpers import ManualClock, intent

D = Decimal


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1_000_000)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "var" / "journal.sqlite"


@pytest.fixture
def journal(path: Path, clock: ManualClock) -> Iterator[Journal]:
    with Journal(path, clock=clock) as j:
        yield j


def new(n: int, *, rule: str = "r1", strategy: str = "s1", **kw: object) -> NewOrder:
    i = intent(n, rule=rule, strategy=strategy, inputs={"mark": "100"})
    return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)  # type: ignore[arg-type]


def test_a_new_journal_is_migrated_to_the_latest_schema_in_wal_mode(
    journal: Journal, path: Path
) -> None:
    assert journal.schema_version == SCHEMA_VERSION
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_reopening_keeps_the_records(path: Path, clock: ManualClock) -> None:
    with Journal(path, clock=clock) as j:
        j.add_orders(None, [new(0)], dry=False)
    with Journal(path, clock=clock) as j:
        assert [o.cl_ord_id for o in j.unsettled()] == ["s1-r1-0"]


def test_a_journal_from_a_newer_botkit_is_refused(path: Path, clock: ManualClock) -> None:
    Journal(path, clock=clock).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(JournalError, match="upgrade botkit"):
        Journal(path, clock=clock)


def test_an_unopenable_path_is_a_journal_error(tmp_path: Path, clock: ManualClock) -> None:
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(JournalError, match="cannot open"):
        Journal(tmp_path / "dir.sqlite", clock=clock)


def test_an_order_has_exactly_one_final_outcome(journal: Journal, path: Path) -> None:
    journal.add_orders(None, [new(0)], dry=False)
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="42")])
    with pytest.raises(JournalError, match="already settled"):
        journal.settle([OrderOutcome("s1-r1-0", Outcome.FAILED, error="late")])
    with sqlite3.connect(path) as conn, pytest.raises(sqlite3.IntegrityError, match="final"):
        conn.execute("UPDATE orders SET outcome = 'failed'")
    rec = journal.order("s1-r1-0")
    assert rec is not None
    assert (rec.outcome, rec.ord_id) == (Outcome.ACCEPTED, "42")


def test_a_live_client_order_id_is_journaled_once_dry_runs_may_repeat(journal: Journal) -> None:
    journal.add_orders(None, [new(0, outcome=Outcome.DRY_RUN)], dry=True)
    journal.add_orders(None, [new(0, outcome=Outcome.DRY_RUN)], dry=True)
    journal.add_orders(None, [new(0)], dry=False)
    with pytest.raises(JournalError):
        journal.add_orders(None, [new(0)], dry=False)
    assert journal.known_ids(["s1-r1-0", "s1-r1-1"]) == {"s1-r1-0"}


def test_records_carry_the_injected_time(journal: Journal, clock: ManualClock) -> None:
    cycle = journal.begin_cycle(clock_offset_ms=-12)
    journal.add_orders(cycle, [new(0)], dry=False)
    clock.advance(250)
    journal.mark_sent(["s1-r1-0"])
    clock.advance(250)
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="1")])
    rec = journal.order("s1-r1-0")
    assert rec is not None
    assert (rec.ts_ms, rec.sent_ms, rec.outcome_ms) == (1_000_000, 1_000_250, 1_000_500)
    assert journal.cycles()[0].clock_offset_ms == -12


def test_activity_lists_fires_and_live_orders_per_rule(
    journal: Journal, clock: ManualClock
) -> None:
    cycle = journal.begin_cycle()
    journal.record_evaluations(
        cycle,
        strategy="s1",
        version="abc",
        rules=[Evaluated("r1", True, inputs={"x": "1"}), Evaluated("r2", False, "cooldown")],
    )
    journal.add_orders(cycle, [new(0), new(1), new(2, rule="r2")], dry=False)
    journal.add_orders(
        cycle, [new(3, reasons=("px_missing: …",), outcome=Outcome.REJECTED_LOCAL)], dry=False
    )
    journal.settle([OrderOutcome("s1-r1-1", Outcome.REJECTED, code=10014, msg="band")])
    clock.advance(1000)
    journal.record_evaluations(
        None, strategy="s1", version="abc", rules=[Evaluated("r1", True)], dry=True
    )
    activity = journal.activity("s1", since_ms=0)
    assert activity == {
        "r1": RuleActivity(fire_times_ms=(1_000_000,), orders=((1_000_000, "s1-r1-0"),)),
        "r2": RuleActivity(fire_times_ms=(), orders=((1_000_000, "s1-r2-2"),)),
    }
    assert journal.activity("s1", since_ms=1_000_001) == {}
    assert journal.activity("s1", 0, include_dry=True)["r1"].fire_times_ms == (
        1_000_000,
        1_001_000,
    )
    assert journal.activity("other", 0) == {}


def test_filters_narrow_the_orders(journal: Journal, clock: ManualClock) -> None:
    c1 = journal.begin_cycle()
    journal.add_orders(c1, [new(0), new(1, rule="r2")], dry=False)
    clock.advance(10_000)
    c2 = journal.begin_cycle()
    journal.add_orders(c2, [new(2, strategy="s2")], dry=False)
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="9")])

    def ids(**kw: object) -> list[str]:
        return [o.cl_ord_id for o in journal.orders(OrderFilter(**kw))]  # type: ignore[arg-type]

    assert ids() == ["s1-r1-0", "s1-r2-1", "s2-r1-2"]
    assert ids(strategy="s1") == ["s1-r1-0", "s1-r2-1"]
    assert ids(rule="r2") == ["s1-r2-1"]
    assert ids(outcome="accepted") == ["s1-r1-0"]
    assert ids(outcome="unsettled") == ["s1-r2-1", "s2-r1-2"]
    assert ids(since_ms=1_005_000) == ["s2-r1-2"]
    assert ids(until_ms=1_005_000) == ["s1-r1-0", "s1-r2-1"]
    assert ids(cycle_id=c2) == ["s2-r1-2"]
    assert ids(symbol="ETH_USDT_PERP") == []
    assert ids(limit=1) == ["s2-r1-2"]


def test_cycle_summary_counts_outcomes_and_trips(journal: Journal) -> None:
    from botkit.pipeline import GuardTrip

    cycle = journal.begin_cycle()
    journal.record_evaluations(
        cycle, strategy="s1", version="v", rules=[Evaluated("r1", True), Evaluated("r2", False)]
    )
    journal.add_orders(cycle, [new(0), new(1)], dry=False)
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="1")])
    journal.record_trips(
        cycle, [GuardTrip("max_position", "global", "s1", "s1-r1-9", D(5), D(6), "too big")]
    )
    journal.end_cycle(cycle)
    (summary,) = journal.cycles()
    assert (summary.evaluations, summary.fired, summary.orders, summary.trips) == (2, 1, 2, 1)
    assert summary.by_outcome == {"accepted": 1, "unsettled": 1}
    (trip,) = journal.trips()
    assert (trip.limit, trip.value) == ("5", "6")


def test_prune_never_drops_unsettled_orders(journal: Journal, clock: ManualClock) -> None:
    old = journal.begin_cycle()
    journal.add_orders(old, [new(0), new(1)], dry=False)
    journal.mark_sent(["s1-r1-1"])
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="1")])
    journal.end_cycle(old)
    clock.advance(86_400_000)
    journal.add_orders(journal.begin_cycle(), [new(2)], dry=False)
    report = journal.prune(before_ms=clock() - 1000)
    assert report.orders == 1
    assert report.kept_unsettled == 1
    assert [o.cl_ord_id for o in journal.orders()] == ["s1-r1-1", "s1-r1-2"]
    assert [o.cl_ord_id for o in journal.unsettled()] == ["s1-r1-1", "s1-r1-2"]
    kept_events = [e for e in journal.events_after(0) if e.cl_ord_id == "s1-r1-1"]
    assert kept_events, "the unsettled order's history stays"
    assert [c.id for c in journal.cycles()] == [old, old + 1], "a cycle with kept orders stays"


def test_events_follow_every_write_in_order(journal: Journal) -> None:
    cycle = journal.begin_cycle(dry=False)
    journal.add_orders(cycle, [new(0, notes=("px 100.05 -> 100.0 (step 0.1)",))], dry=False)
    journal.mark_sent(["s1-r1-0"])
    journal.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="77")])
    texts = [e.text for e in journal.events_after(0)]
    assert texts == [
        "intent BUY 1 BTC_USDT_PERP LIMIT @ 100 (rounded px 100.05 -> 100.0 (step 0.1))",
        "sent 1 order(s)",
        "accepted ordId 77",
    ]
    last = journal.last_event_id()
    assert journal.events_after(last) == []


def test_a_cycle_is_in_the_running_log_only_when_it_ends_with_an_error(journal: Journal) -> None:
    quiet = journal.begin_cycle(dry=False, clock_offset_ms=12)
    journal.end_cycle(quiet)
    failed = journal.begin_cycle(dry=False)
    journal.end_cycle(failed, error="read failed: 503")
    events = journal.events_after(0)
    assert [(e.kind, e.cycle_id, e.text) for e in events] == [
        ("cycle_error", failed, f"cycle {failed} ends with error: read failed: 503")
    ]
    cycles = {c.id: c for c in journal.cycles()}
    assert (cycles[quiet].clock_offset_ms, cycles[quiet].error) == (12, "")
    assert cycles[failed].error == "read failed: 503"


def test_migrations_apply_in_order_and_a_failed_one_changes_nothing(
    path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import botkit.journal.db as db

    Journal(path, clock=clock).close()
    v2 = ("ALTER TABLE orders ADD COLUMN venue TEXT NOT NULL DEFAULT ''",)
    broken = ("CREATE TABLE notes (id INTEGER PRIMARY KEY)", "THIS IS NOT SQL")
    monkeypatch.setattr(db, "MIGRATIONS", (*MIGRATIONS, v2, broken))
    monkeypatch.setattr(db, "SCHEMA_VERSION", SCHEMA_VERSION + 2)
    with pytest.raises(JournalError, match="cannot open"):
        Journal(path, clock=clock)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
        columns = [row[1] for row in conn.execute("PRAGMA table_info(orders)")]
        assert "venue" in columns
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "notes" not in tables, "the failed migration was rolled back whole"


def test_a_temporary_journal_holds_its_pages_outside_the_process_and_reads_back(
    clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``""``: SQLite's private temporary database (a backtest's default journal): no file of
    its own at any path, its rollback journal in memory, every row read back as from a file."""
    monkeypatch.chdir(tmp_path)
    with Journal("", clock=clock) as j:
        j.add_orders(None, [new(0), new(1)], dry=False)
        j.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="42")])
        assert [r.cl_ord_id for r in j.orders()] == ["s1-r1-0", "s1-r1-1"]
        assert j._conn.execute("PRAGMA journal_mode").fetchone()[0] == "memory"
    assert list(tmp_path.iterdir()) == []


def _temporary_files() -> list[str]:
    """The files SQLite opened for itself and deleted at once (``etilqs_*``) that this process
    still holds open."""
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return [link for link in links if "etilqs_" in link]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_statement_journal_stays_in_memory(clock: ManualClock, tmp_path: Path) -> None:
    """A statement that changes several rows inside a transaction (the journal's grouped
    inserts and updates) keeps a statement journal to undo itself alone: held in memory, not
    in a temporary file opened, written and deleted for each transaction (issue 20)."""
    with Journal(tmp_path / "j.sqlite", clock=clock) as j:
        conn = j._conn
        conn.execute("CREATE TABLE scratch (x INTEGER PRIMARY KEY, y UNIQUE, z BLOB)")
        rows = [(n, n, bytes(3000)) for n in range(40)]  # a page each: past 64 KiB in all
        conn.executemany("INSERT INTO scratch VALUES (?, ?, ?)", rows)
        before = _temporary_files()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO scratch VALUES (40, 40, NULL)")
        conn.execute("UPDATE scratch SET y = y + 100")
        during = _temporary_files()
        conn.execute("COMMIT")
        assert conn.execute("SELECT SUM(y) FROM scratch").fetchone() == (41 * 100 + 820,)
    assert during == before
