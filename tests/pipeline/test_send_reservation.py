"""The sends of a cycle reserved with its intents: one commit before the first request, the send
marks and outcomes held for the cycle's end.

What must keep holding (each test below fails when one part of the scheme is taken away):

* when a request leaves, its orders are committed as sent, with a send time no earlier than the
  request's (the grace reconcile counts from it then covers the request) — also when the
  reservation ran out between two batches;
* the rows the journal ends up with are those of a commit per batch;
* a cycle cut short writes the batches it never sent back as never sent;
* a crash before the cycle's end loses only held rows: restarted, reconcile settles every order
  as the exchange has it (never ``failed`` for one that rests).
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from botkit.errors import OutcomeUnknown, RateLimited, StopRequested
from botkit.exchange.models import OrderRequest
from botkit.journal import Journal, Outcome
from botkit.pipeline import build_plan
from botkit.runner.orders import Executor, RetryPolicy, reconcile
from botkit.runner.orders import execute as execute_module
from tests.pipeline.fakes import FakeExchange
from tests.pipeline.helpers import FakeSleep, ManualClock, intent, snapshot

GRACE_MS = 15_000
STEP_MS = 1_500
"""The clock moves this much at each request: the third batch leaves after the reservation."""


def _executor(ex: FakeExchange, journal: Journal, clock: ManualClock) -> Executor:
    return Executor(
        ex,
        journal,
        sleep=FakeSleep(clock),
        rng=random.Random(0),
        policy=RetryPolicy(jitter=0.0),
        batch_rate=None,
        reconcile_grace_ms=GRACE_MS,
        monotonic=lambda: clock() / 1000,
    )


def _committed(path: Path, table: str) -> list[tuple[Any, ...]]:
    """The rows of ``table`` another connection sees: only what was committed."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()  # noqa: S608
    finally:
        conn.close()


def _states(path: Path) -> dict[str, tuple[str, int, int | None, str | None]]:
    """clOrdId -> (state, attempts, sent_ms, outcome), as committed."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT cl_ord_id, state, attempts, sent_ms, outcome FROM orders")
        return {cid: (state, n, sent, out) for cid, state, n, sent, out in rows}
    finally:
        conn.close()


def _plan(count: int) -> Any:
    return build_plan([intent(n) for n in range(count)], snapshot())


def test_each_request_leaves_with_its_orders_committed_sent_no_later_than_their_send_time(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    clock = ManualClock()
    seen: list[tuple[int, dict[str, tuple[str, int, int | None, str | None]]]] = []

    def check(orders: Sequence[OrderRequest]) -> None:
        seen.append((clock(), {o.clOrdId or "": _states(path)[o.clOrdId or ""] for o in orders}))
        seen[-1][1]["*all"] = ("", len(_states(path)), None, None)
        clock.advance(STEP_MS)

    ex = FakeExchange(on_place=check)
    with Journal(path, clock=clock) as journal:
        report = _executor(ex, journal, clock).run(_plan(25), cycle_id=journal.begin_cycle())
    assert report.count(Outcome.ACCEPTED) == 25
    assert len(seen) == 3  # three batches, the third after the reservation's end
    for sent_at, committed in seen:
        assert committed.pop("*all")[1] == 25  # every intent of the cycle, before any request
        for cid, (state, attempts, sent_ms, outcome) in committed.items():
            assert state == "sent", cid
            assert attempts == 1, cid
            assert outcome is None, cid
            assert sent_ms is not None, cid
            assert sent_ms >= sent_at, (cid, sent_ms, sent_at)
    # in the end each order's send time is its request's, as a commit per batch writes it
    start = seen[0][0]
    final = _states(path)
    for n in range(25):
        state, attempts, sent_ms, outcome = final[f"s1-r1-{n}"]
        assert (state, attempts, outcome) == ("final", 1, "accepted")
        assert sent_ms == start + (n // 10) * STEP_MS


def _run_cycle(
    path: Path, script: list[Any], monkeypatch: pytest.MonkeyPatch, *, reserve: bool
) -> None:
    if not reserve:
        monkeypatch.setattr(execute_module, "SEND_RESERVE_MS", 0)
    clock = ManualClock()
    ex = FakeExchange(
        script,
        reject=lambda o: (51008, "refused") if (o.clOrdId or "").endswith("7") else None,
        on_place=lambda orders: clock.advance(STEP_MS),
    )
    with Journal(path, clock=clock) as journal:
        executor = _executor(ex, journal, clock)
        executor.run(_plan(45), cycle_id=journal.begin_cycle())
        journal.end_cycle(1)
        executor.run(_plan(12), cycle_id=journal.begin_cycle())  # the same decision again
        journal.end_cycle(2)
    monkeypatch.undo()


@pytest.mark.parametrize(
    "script",
    [
        [],
        ["ok", RateLimited("429", retry_after=0.5)],  # the second batch sent twice
        ["ok", "ok", ("after", OutcomeUnknown("dropped"))],  # looked up, found
        [OutcomeUnknown("dropped")],  # looked up, not found, re-sent after the grace
    ],
    ids=["plain", "retried", "unknown-found", "unknown-resent"],
)
def test_the_rows_are_those_of_a_commit_per_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: list[Any]
) -> None:
    reserved, per_batch = tmp_path / "reserved.sqlite", tmp_path / "per_batch.sqlite"
    _run_cycle(reserved, list(script), monkeypatch, reserve=True)
    _run_cycle(per_batch, list(script), monkeypatch, reserve=False)
    for table in ("cycles", "orders", "events", "evaluations", "guard_trips"):
        assert _committed(reserved, table) == _committed(per_batch, table), table
    assert _committed(reserved, "orders")


def test_a_cycle_cut_short_writes_its_unsent_batches_back_as_never_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cut(path: Path, reserve: bool) -> dict[str, tuple[str, int, int | None, str | None]]:
        if not reserve:
            monkeypatch.setattr(execute_module, "SEND_RESERVE_MS", 0)
        clock = ManualClock()
        ex = FakeExchange(["ok", "ok", StopRequested("SIGTERM")])
        with Journal(path, clock=clock) as journal:
            with pytest.raises(StopRequested):
                _executor(ex, journal, clock).run(_plan(45), cycle_id=journal.begin_cycle())
            states = _states(path)  # committed by the executor itself, before close
        monkeypatch.undo()
        return states

    states = cut(tmp_path / "reserved.sqlite", reserve=True)
    assert states == cut(tmp_path / "per_batch.sqlite", reserve=False)
    for n in range(45):
        state, attempts, sent_ms, outcome = states[f"s1-r1-{n}"]
        if n < 20:  # answered: their held outcomes are written
            assert (state, attempts, outcome) == ("final", 1, "accepted")
        elif n < 30:  # its request was cut short as it left: left for reconcile
            assert (state, attempts, outcome) == ("sent", 1, None)
        else:  # never sent: the reservation taken back
            assert (state, attempts, sent_ms, outcome) == ("intent", 0, None, None)
    events = _committed(tmp_path / "reserved.sqlite", "events")
    assert [e for e in events if e[3] == "sent"] == [
        e for e in _committed(tmp_path / "per_batch.sqlite", "events") if e[3] == "sent"
    ]
    assert len([e for e in events if e[3] == "sent"]) == 3  # no send claimed for batches 4, 5


def test_a_crash_before_the_cycle_s_end_leaves_what_reconcile_settles_right(
    tmp_path: Path,
) -> None:
    path, crashed = tmp_path / "journal.sqlite", tmp_path / "crashed.sqlite"
    clock = ManualClock()
    calls = 0
    crash_ms = 0

    def crash_at_the_fourth_request(orders: Sequence[OrderRequest]) -> None:
        nonlocal calls, crash_ms
        calls += 1
        if calls == 4:  # what a SIGKILL now would leave: the committed state
            crash_ms = clock()
            source, target = sqlite3.connect(path), sqlite3.connect(crashed)
            source.backup(target)
            source.close()
            target.close()
        clock.advance(STEP_MS)

    ex = FakeExchange(
        reject=lambda o: (51008, "refused") if (o.clOrdId or "").endswith("3") else None,
        on_place=crash_at_the_fourth_request,
    )
    with Journal(path, clock=clock) as journal:
        _executor(ex, journal, clock).run(_plan(45), cycle_id=journal.begin_cycle())

    # the crashed journal: batches 1 and 2's outcomes went with batch 3's mark (committed: it
    # left after the reservation's end); batch 3's are held, lost; every other order is sent
    # (reserved) without an outcome
    states = _states(crashed)
    assert all(states[f"s1-r1-{n}"][3] is not None for n in range(20))
    assert all(states[f"s1-r1-{n}"][:2] == ("sent", 1) for n in range(20, 45))
    assert all(states[f"s1-r1-{n}"][3] is None for n in range(20, 45))
    # the exchange processed batches 1 to 4 before the crash and nothing after
    ex.orders = {c: o for c, o in ex.orders.items() if int(c.rsplit("-", 1)[1]) < 40}
    # restarted at once: before the end of the reservation the crashed journal holds
    restart = ManualClock(crash_ms + 100)
    assert max(sent for _, _, sent, _ in states.values() if sent is not None) > restart()
    sleep = FakeSleep(restart)
    with Journal(crashed, clock=restart) as journal:
        report = reconcile(journal, ex, clock=restart, grace_ms=GRACE_MS, sleep=sleep)
        rows = {r.cl_ord_id: r for r in journal.orders()}
    assert not report.pending
    assert sleep.calls == [GRACE_MS / 1000]  # the grace from the restart, never longer
    for n in range(45):
        row = rows[f"s1-r1-{n}"]
        if f"s1-r1-{n}" in ex.orders:  # rests at the exchange: found, never failed
            assert row.outcome is Outcome.ACCEPTED
            assert row.resolved or n < 20  # batches 1 and 2 were settled before the crash
            assert row.ord_id == ex.ord_ids[row.cl_ord_id]
        elif n < 20:  # refused, settled before the crash
            assert row.outcome is Outcome.REJECTED
        else:  # refused, or never sent: not at the exchange
            assert row.outcome is Outcome.FAILED


class _CountingCommits:
    """The journal's connection, counting its commits."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.commits = 0

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.commits += sql == "COMMIT"
        return self.conn.execute(sql, parameters)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_a_cycle_sent_within_its_reservation_commits_twice(tmp_path: Path) -> None:
    """The intents with their reserved sends, then the cycle's end with the send marks and
    every batch's outcomes (a commit per batch before: 8 for these 5 batches)."""
    clock = ManualClock()
    with Journal(tmp_path / "journal.sqlite", clock=clock) as journal:
        executor = _executor(FakeExchange(), journal, clock)
        warm_up = journal.begin_cycle()  # a fresh executor's first cycle reads the journal
        executor.run(_plan(1), cycle_id=warm_up)
        journal.end_cycle(warm_up)
        clock.advance(60_000)
        counting = _CountingCommits(journal._conn)
        journal._conn = counting  # type: ignore[assignment]
        cycle = journal.begin_cycle()
        plan = build_plan([intent(n) for n in range(100, 145)], snapshot())
        report = executor.run(plan, cycle_id=cycle)
        journal.end_cycle(cycle)
        journal._conn = counting.conn
        assert report.count(Outcome.ACCEPTED) == 45
        assert counting.commits == 2
        assert all(r.outcome is Outcome.ACCEPTED and r.attempts == 1 for r in journal.orders())
