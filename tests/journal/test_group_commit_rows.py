"""Group commit stores exactly what write-through stores: the same calls, in any order, leave the
same rows with the same ids in every table, and every call answers the same on the way."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.errors import JournalError
from botkit.journal import Evaluated, Journal, NewOrder, OrderOutcome, Outcome, writes
from botkit.pipeline import GuardTrip
from tests.pipeline.helpers import ManualClock, intent

TABLES = ("cycles", "evaluations", "orders", "guard_trips", "events")
Op = tuple[Any, ...]

_inputs = st.dictionaries(
    st.sampled_from(["price.mark", "position.qty", "n", "note"]),
    st.one_of(st.decimals(allow_nan=False, places=2), st.integers(), st.text(max_size=3)),
    max_size=3,
)
_rule = st.tuples(
    st.sampled_from(["r1", "r2"]), st.booleans(), st.sampled_from(["", "cooldown"]), _inputs
)
_ops = st.one_of(
    st.tuples(st.just("begin"), st.booleans(), st.one_of(st.none(), st.integers(-50, 50))),
    st.tuples(st.just("end"), st.integers(-1, 9), st.sampled_from(["", "read failed"])),
    st.tuples(
        st.just("evaluate"),
        st.integers(-1, 9),
        st.sampled_from(["s1", "s2"]),
        st.lists(_rule, max_size=3),
        st.booleans(),
    ),
    st.tuples(st.just("event"), st.sampled_from(["note", "lookup"]), st.booleans()),
    st.tuples(st.just("orders"), st.integers(-1, 9), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("refuse"), st.integers(-1, 9)),
    st.tuples(
        st.just("duplicate"),
    ),
    st.tuples(st.just("sent"), st.integers(0, 20)),
    st.tuples(st.just("unknown"), st.integers(0, 20)),
    st.tuples(st.just("settle"), st.integers(0, 20), st.booleans()),
    st.tuples(st.just("trip"), st.integers(-1, 9)),
    st.tuples(st.just("read"), st.sampled_from(["cycles", "events", "activity", "orders", "ids"])),
    st.tuples(st.just("advance"), st.integers(1, 120_000)),
    st.tuples(st.just("prune"), st.integers(0, 200_000)),
    st.tuples(
        st.just("flush"),
    ),
)


class _Player:
    """Plays one operation at a time on ``journal``: one method per operation kind
    (``op_<kind>``), each returning what the call answered."""

    def __init__(self, journal: Journal, clock: ManualClock, *, hold: bool = True) -> None:
        self.journal = journal
        self.hold = hold
        self.clock = clock
        self.answers: list[Any] = []
        self.cycles: list[int] = []
        self.live: list[str] = []
        self.batch: list[str] = []  # the live ids of the latest op_orders
        self.serial = 0

    def play(self, op: Op) -> None:
        kind = op[0]
        try:
            answer = getattr(self, f"op_{kind}")(*op[1:])
        except JournalError:
            answer = "JournalError"
        journal = self.journal
        self.answers.append((kind, answer, journal.activity_revision, journal.has_unsettled()))

    def cycle_of(self, index: int) -> int | None:
        if index < 0 or not self.cycles:
            return None
        return self.cycles[index % len(self.cycles)]

    def new(self, *, dry: bool, **kw: Any) -> NewOrder:
        self.serial += 1
        i = intent(self.serial, inputs={"mark": "100"})
        return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)

    def op_begin(self, dry: bool, offset: int | None) -> int:
        cycle = self.journal.begin_cycle(dry=dry, clock_offset_ms=offset)
        self.cycles.append(cycle)
        return cycle

    def op_end(self, index: int, error: str) -> None:
        cycle = self.cycle_of(index)
        self.journal.end_cycle(999 if cycle is None else cycle, error=error)

    def op_evaluate(self, index: int, strategy: str, rules: list[Any], dry: bool) -> None:
        evaluated = [Evaluated(r, f, why, dict(inputs)) for r, f, why, inputs in rules]
        self.journal.record_evaluations(
            self.cycle_of(index), strategy=strategy, version="v1", rules=evaluated, dry=dry
        )

    def op_event(self, kind: str, with_detail: bool) -> None:
        detail = {"ids": self.live[-2:], "px": Decimal("1.5")} if with_detail else None
        self.journal.record_event(kind, f"{kind} #{len(self.answers)}", detail=detail)

    def op_orders(self, index: int, count: int, dry: bool) -> None:
        orders = [self.new(dry=dry) for _ in range(count)]
        if dry:
            orders = [NewOrder(o.intent, o.px, o.sz, outcome=Outcome.DRY_RUN) for o in orders]
        self.journal.add_orders(self.cycle_of(index), orders, dry=dry)
        self.live += [] if dry else [o.intent.cl_ord_id for o in orders]
        self.batch = [] if dry else [o.intent.cl_ord_id for o in orders]

    def op_refuse(self, index: int) -> None:
        refused = self.new(dry=False, reasons=("px_missing",), outcome=Outcome.REJECTED_LOCAL)
        self.journal.add_orders(self.cycle_of(index), [refused], dry=False)

    def op_duplicate(self) -> None:
        if self.live:
            again = intent(int(self.live[0].rsplit("-", 1)[1]))
            self.journal.add_orders(None, [NewOrder(again, again.px, again.sz)], dry=False)

    def op_sent(self, index: int) -> None:
        if self.live:
            self.journal.mark_sent([self.live[index % len(self.live)]], note="POST")

    def op_unknown(self, index: int) -> None:
        if self.live:
            self.journal.mark_unknown([self.live[index % len(self.live)]], "timeout")

    def op_settle(self, index: int, hold: bool = False) -> None:
        if self.live:
            cid = self.live[index % len(self.live)]
            outcome = OrderOutcome(cid, Outcome.ACCEPTED, ord_id=cid)
            self.journal.settle([outcome], hold=hold and self.hold)

    def op_life(self, count: int, sends: int, settle: int, hold: bool) -> Any:
        """A batch's life: added, sent ``sends`` times, settled (all, or ``settle`` of them)."""
        self.op_orders(-1, count, False)
        answers: list[Any] = [self.journal.known_ids([*self.batch, "nope"])]
        for _ in range(sends):
            self.op_sent_many(count)
        self.op_settle_many(settle, hold)
        answers.append(self.journal.ord_ids([*self.batch, "nope"]))
        return answers

    def op_sent_many(self, count: int) -> None:
        """The latest orders' batch (or some of it) is sent."""
        if self.batch:
            self.journal.mark_sent(self.batch[:count], note="POST")

    def op_sent_twice(self, count: int) -> None:
        """A send naming some orders twice (each naming counts an attempt)."""
        if self.batch:
            self.journal.mark_sent([*self.batch[:count], self.batch[0]], note="POST")

    def op_settle_many(self, count: int, hold: bool) -> None:
        outcomes = [
            OrderOutcome(cid, Outcome.REJECTED, code=51000 + n, msg=f"no {n}", reasons=("x",))
            if n % 2
            else OrderOutcome(cid, Outcome.ACCEPTED, ord_id=f"9{n}", resolved=n % 3 == 0)
            for n, cid in enumerate(self.batch[:count])
        ]
        if not outcomes:
            return
        self.journal.settle(outcomes, hold=hold and self.hold)

    def op_trip(self, index: int) -> None:
        trip = GuardTrip("max_position", "global", "s1", None, Decimal(5), None, "big")
        self.journal.record_trips(self.cycle_of(index), [trip])

    def op_read(self, what: str) -> Any:
        journal = self.journal
        readers: dict[str, Callable[[], Any]] = {
            "cycles": journal.cycles,
            "events": journal.events_after,
            "activity": lambda: journal.activity("s1", 0, include_dry=True),
            "orders": journal.orders,
            "ids": lambda: (
                journal.known_ids([*self.live[-3:], "nope"]),
                journal.ord_ids([*self.live[-3:], "nope"]),
            ),
        }
        return readers[what]()

    def op_advance(self, ms: int) -> None:
        self.clock.advance(ms)

    def op_prune(self, age_ms: int) -> Any:
        return self.journal.prune(before_ms=self.clock() - age_ms)

    def op_flush(self) -> None:
        self.journal.flush()


def _one_update_per_order(conn: sqlite3.Connection, ids: Sequence[str], now: int) -> None:
    conn.executemany(writes.SENT, [(now, cid) for cid in ids])


def _run(
    path: Path,
    ops: list[Op],
    group_rows: int,
    *,
    hold: bool = True,
    transient: bool = False,
    plain: bool = False,
) -> tuple[list[Any], dict[str, list[Any]]]:
    """Play ``ops``; return what each call answered and every table's rows after close
    (``hold=False``: every settle commits at once, whatever the op says; ``transient``: the
    orders too wait in memory, written once in their final form; ``plain``: a send mark and
    outcomes are one ``UPDATE`` per order, not one per batch)."""
    clock = ManualClock(1_000_000)
    with ExitStack() as stack:
        if plain:
            stack.enter_context(patch.object(writes, "UPDATE_FROM", False))
            stack.enter_context(patch.object(writes, "mark_sent", _one_update_per_order))
        journal = stack.enter_context(
            Journal(
                path, clock=clock, synchronous="OFF", group_rows=group_rows, transient=transient
            )
        )
        player = _Player(journal, clock, hold=hold)
        for op in ops:
            player.play(op)
    with sqlite3.connect(path) as conn:
        tables = {t: conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in TABLES}  # noqa: S608
    return player.answers, tables


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(_ops, max_size=30), group_rows=st.sampled_from([1, 2, 3, 5, 8, 1000]))
def test_group_commit_leaves_the_rows_and_ids_write_through_leaves(
    ops: list[Op], group_rows: int
) -> None:
    """And outcomes held for the next write (``settle(..., hold=True)``) leave what outcomes
    committed at once leave, in either mode; and so does a transient journal, whose orders wait
    in memory and are written once."""
    with tempfile.TemporaryDirectory() as tmp:
        expected = _run(Path(tmp) / "through.sqlite", ops, 0, hold=False, plain=True)
        batched = _run(Path(tmp) / "batched.sqlite", ops, 0, hold=False)
        held = _run(Path(tmp) / "held.sqlite", ops, 0)
        grouped = _run(Path(tmp) / "grouped.sqlite", ops, group_rows)
        transient = _run(Path(tmp) / "transient.sqlite", ops, group_rows, transient=True)
    assert batched == expected
    assert held == expected
    assert grouped == expected
    assert transient == expected


_order_ops = st.one_of(
    st.tuples(
        st.just("life"),
        st.integers(1, 4),
        st.integers(0, 2),
        st.integers(0, 5),
        st.booleans(),
    ),
    st.tuples(st.just("orders"), st.integers(-1, 9), st.integers(1, 4), st.booleans()),
    st.tuples(st.just("orders"), st.integers(-1, 9), st.integers(1, 4), st.just(False)),
    st.tuples(st.just("refuse"), st.integers(-1, 9)),
    st.tuples(st.just("duplicate")),
    st.tuples(st.just("sent_many"), st.integers(1, 5)),
    st.tuples(st.just("sent_twice"), st.integers(1, 3)),
    st.tuples(st.just("sent"), st.integers(0, 20)),
    st.tuples(st.just("settle_many"), st.integers(1, 5), st.booleans()),
    st.tuples(st.just("settle"), st.integers(0, 20), st.booleans()),
    st.tuples(st.just("unknown"), st.integers(0, 20)),
    st.tuples(st.just("begin"), st.booleans(), st.none()),
    st.tuples(st.just("end"), st.integers(-1, 9), st.just("")),
    st.tuples(st.just("event"), st.just("note"), st.booleans()),
    st.tuples(st.just("read"), st.sampled_from(["ids", "ids", "orders", "activity"])),
    st.tuples(st.just("advance"), st.integers(1, 1000)),
)
"""An order's life, mostly: added, sent (alone, in batches, again), settled (at once, held,
twice), in a transient journal's memory or already written."""


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(_order_ops, max_size=40), group_rows=st.sampled_from([4, 16, 1000]))
def test_a_transient_journal_writes_each_order_once_as_write_through_leaves_it(
    ops: list[Op], group_rows: int
) -> None:
    """A transient journal's orders wait in memory, are sent and settled there, and are
    written once in their final form: the same rows, ids and answers as write-through."""
    with tempfile.TemporaryDirectory() as tmp:
        expected = _run(Path(tmp) / "through.sqlite", ops, 0, hold=False, plain=True)
        batched = _run(Path(tmp) / "batched.sqlite", ops, 0, hold=False)
        held = _run(Path(tmp) / "held.sqlite", ops, 0)
        transient = _run(Path(tmp) / "transient.sqlite", ops, group_rows, transient=True)
    assert batched == expected
    assert held == expected
    assert transient == expected


def test_a_typical_run_of_cycles_leaves_the_same_rows(tmp_path: Path) -> None:
    """Quiet cycles, a fire, an order placed and settled, an end already written, a prune."""
    ops: list[Op] = []
    for n in range(12):
        ops += [("begin", False, -3), ("advance", 1)]
        fired = n % 5 == 4
        rules = [("r1", fired, "", {"price.mark": Decimal("60123.5") + n}), ("r2", False, "x", {})]
        ops.append(("evaluate", n, "s1", rules, False))
        if fired:
            ops += [("read", "activity"), ("orders", n, 2, False), ("sent", n), ("settle", n)]
        ops += [("end", n, ""), ("advance", 60_000)]
    ops += [("prune", 120_000), ("begin", True, None), ("read", "cycles")]
    ops += [("begin", False, None), ("duplicate",), ("end", -1, ""), ("read", "events")]
    ops += [("advance", 1), ("prune", 0), ("begin", False, None), ("end", -1, "")]
    for group_rows in (1, 4, 7, 64):
        expected = _run(tmp_path / f"t{group_rows}.sqlite", ops, 0)
        assert _run(tmp_path / f"g{group_rows}.sqlite", ops, group_rows) == expected
        assert _run(tmp_path / f"m{group_rows}.sqlite", ops, group_rows, transient=True) == expected
