"""Group commit stores exactly what write-through stores: the same calls, in any order, leave the
same rows with the same ids in every table, and every call answers the same on the way."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.errors import JournalError
from botkit.journal import Evaluated, Journal, NewOrder, OrderOutcome, Outcome
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
    st.tuples(st.just("settle"), st.integers(0, 20)),
    st.tuples(st.just("trip"), st.integers(-1, 9)),
    st.tuples(st.just("read"), st.sampled_from(["cycles", "events", "activity", "orders"])),
    st.tuples(st.just("advance"), st.integers(1, 120_000)),
    st.tuples(st.just("prune"), st.integers(0, 200_000)),
    st.tuples(
        st.just("flush"),
    ),
)


def _run(path: Path, ops: list[Op], group_rows: int) -> tuple[list[Any], dict[str, list[Any]]]:
    """Play ``ops``; return what each call answered and every table's rows after close."""
    clock = ManualClock(1_000_000)
    answers: list[Any] = []
    cycles: list[int] = []
    live: list[str] = []
    serial = 0

    def cycle_of(index: int) -> int | None:
        if index < 0 or not cycles:
            return None
        return cycles[index % len(cycles)]

    def new(*, dry: bool, **kw: Any) -> NewOrder:
        nonlocal serial
        serial += 1
        i = intent(serial, inputs={"mark": "100"})
        return NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}, **kw)

    with Journal(path, clock=clock, synchronous="OFF", group_rows=group_rows) as journal:
        for op in ops:
            kind = op[0]
            try:
                answer: Any = None
                if kind == "begin":
                    answer = journal.begin_cycle(dry=op[1], clock_offset_ms=op[2])
                    cycles.append(answer)
                elif kind == "end":
                    cycle = cycle_of(op[1])
                    journal.end_cycle(999 if cycle is None else cycle, error=op[2])
                elif kind == "evaluate":
                    rules = [Evaluated(r, f, why, dict(inputs)) for r, f, why, inputs in op[3]]
                    journal.record_evaluations(
                        cycle_of(op[1]), strategy=op[2], version="v1", rules=rules, dry=op[4]
                    )
                elif kind == "event":
                    detail = {"ids": live[-2:], "px": Decimal("1.5")} if op[2] else None
                    journal.record_event(op[1], f"{op[1]} #{len(answers)}", detail=detail)
                elif kind == "orders":
                    orders = [new(dry=op[3]) for _ in range(op[2])]
                    if op[3]:
                        orders = [NewOrder(o.intent, o.px, o.sz, outcome=Outcome.DRY_RUN)
                                  for o in orders]  # fmt: skip
                    journal.add_orders(cycle_of(op[1]), orders, dry=op[3])
                    live += [] if op[3] else [o.intent.cl_ord_id for o in orders]
                elif kind == "refuse":
                    refused = new(
                        dry=False, reasons=("px_missing",), outcome=Outcome.REJECTED_LOCAL
                    )
                    journal.add_orders(cycle_of(op[1]), [refused], dry=False)
                elif kind == "duplicate" and live:
                    again = intent(int(live[0].rsplit("-", 1)[1]))
                    journal.add_orders(None, [NewOrder(again, again.px, again.sz)], dry=False)
                elif kind == "sent" and live:
                    journal.mark_sent([live[op[1] % len(live)]], note="POST")
                elif kind == "unknown" and live:
                    journal.mark_unknown([live[op[1] % len(live)]], "timeout")
                elif kind == "settle" and live:
                    cid = live[op[1] % len(live)]
                    journal.settle([OrderOutcome(cid, Outcome.ACCEPTED, ord_id=cid)])
                elif kind == "trip":
                    trip = GuardTrip("max_position", "global", "s1", None, Decimal(5), None, "big")
                    journal.record_trips(cycle_of(op[1]), [trip])
                elif kind == "read":
                    readers: dict[str, Callable[[], Any]] = {
                        "cycles": journal.cycles,
                        "events": journal.events_after,
                        "activity": lambda: journal.activity("s1", 0, include_dry=True),
                        "orders": journal.orders,
                    }
                    answer = readers[op[1]]()
                elif kind == "advance":
                    clock.advance(op[1])
                elif kind == "prune":
                    answer = journal.prune(before_ms=clock() - op[1])
                elif kind == "flush":
                    journal.flush()
            except JournalError:
                answer = "JournalError"
            answers.append((kind, answer, journal.activity_revision, journal.has_unsettled()))
    with sqlite3.connect(path) as conn:
        tables = {t: conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in TABLES}  # noqa: S608
    return answers, tables


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(_ops, max_size=30), group_rows=st.sampled_from([1, 2, 3, 5, 8, 1000]))
def test_group_commit_leaves_the_rows_and_ids_write_through_leaves(
    ops: list[Op], group_rows: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        expected = _run(Path(tmp) / "through.sqlite", ops, 0)
        grouped = _run(Path(tmp) / "grouped.sqlite", ops, group_rows)
    assert grouped == expected


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
        assert _run(tmp_path / f"g{group_rows}.sqlite", ops, group_rows) == _run(
            tmp_path / f"t{group_rows}.sqlite", ops, 0
        )
