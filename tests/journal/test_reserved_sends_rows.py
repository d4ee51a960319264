"""Reserved sends store exactly what a send mark committed on its own stores.

``Journal.add_orders(..., reserve_ms=N)`` writes the intents as sent (their send reserved until
``N`` ms from now); a send mark within the reservation is then held, not committed, and
``release_sends`` writes the orders never sent back as never sent. Played over the call sequences
of the group-commit property test (with the executor's shape: every intent reserved, the
reservation released before any other kind of call), the journal leaves the rows, ids and
answers of write-through with a commit per send — in write-through and group commit, whether the
reservation runs out between two marks or not.
"""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest.mock import patch

from hypothesis import example, given, settings
from hypothesis import strategies as st

from botkit.journal import Journal, writes
from tests.journal.test_group_commit_rows import (
    TABLES,
    Op,
    _ops,
    _order_ops,
    _Player,
    _run,
)
from tests.pipeline.helpers import ManualClock

RESERVE_MS = 500
"""Shorter than some of the sequences' clock steps: reservations run out between marks."""

_WITHIN = frozenset({"sent", "sent_many", "sent_twice", "settle", "settle_many", "unknown"})
"""What the executor calls between its intents' commit and the end of its sends (``advance``:
time passes; anything else ends the reservation first)."""


class _Reserving(_Player):
    """Reserves the sends of every batch of intents it adds, as the executor does."""

    def play(self, op: Op) -> None:
        if op[0] not in _WITHIN and op[0] != "advance":
            self.journal.release_sends()
        super().play(op)

    def op_orders(self, index: int, count: int, dry: bool) -> None:
        add = self.journal.add_orders

        def reserving(cycle_id: int | None, orders: Any, *, dry: bool) -> None:
            add(cycle_id, orders, dry=dry, reserve_ms=RESERVE_MS)

        self.journal.add_orders = reserving  # type: ignore[method-assign,assignment]
        try:
            super().op_orders(index, count, dry)
        finally:
            del self.journal.add_orders


def _run_reserving(
    path: Path, ops: list[Op], group_rows: int, *, plain: bool = False
) -> tuple[list[Any], dict[str, list[Any]]]:
    """``plain``: as with a SQLite before 3.33 (one ``UPDATE`` per order)."""
    clock = ManualClock(1_000_000)
    with ExitStack() as stack:
        if plain:
            stack.enter_context(patch.object(writes, "UPDATE_FROM", False))
        journal = stack.enter_context(
            Journal(path, clock=clock, synchronous="OFF", group_rows=group_rows)
        )
        player = _Reserving(journal, clock)
        for op in ops:
            player.play(op)
        journal.release_sends()
    with sqlite3.connect(path) as conn:
        tables = {t: conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in TABLES}  # noqa: S608
    return player.answers, tables


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(_order_ops, max_size=40), group_rows=st.sampled_from([0, 4, 16, 1000]))
@example(  # its fate unknown before its reserved mark: the mark makes it sent again
    ops=[("orders", 0, 2, False), ("unknown", 0), ("sent_many", 2), ("read", "orders")],
    group_rows=0,
)
@example(  # the reservation runs out between two marks; one order never sent
    ops=[("orders", 0, 3, False), ("sent", 0), ("advance", 600), ("sent", 1)],
    group_rows=0,
)
def test_reserved_sends_leave_the_rows_of_a_commit_per_send(ops: list[Op], group_rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        expected = _run(Path(tmp) / "through.sqlite", ops, 0, hold=False, plain=True)
        reserved = _run_reserving(Path(tmp) / "reserved.sqlite", ops, group_rows)
        plain = _run_reserving(Path(tmp) / "plain.sqlite", ops, group_rows, plain=True)
    assert reserved == expected
    assert plain == expected


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(_ops, max_size=30), group_rows=st.sampled_from([0, 3, 1000]))
def test_reserved_sends_among_every_other_call_leave_the_same_rows(
    ops: list[Op], group_rows: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        expected = _run(Path(tmp) / "through.sqlite", ops, 0, hold=False, plain=True)
        reserved = _run_reserving(Path(tmp) / "reserved.sqlite", ops, group_rows)
    assert reserved == expected


def test_a_second_reservation_extends_the_first_before_its_marks_are_held(tmp_path: Path) -> None:
    """Two reservations not released in between: the earlier orders' send time is moved to the
    later end in the same commit, so a mark held under the later end is still covered."""
    path = tmp_path / "journal.sqlite"
    clock = ManualClock(1_000_000)
    player = _Reserving(Journal(path, clock=clock), clock)
    with player.journal as journal:
        player.op_orders(-1, 2, False)
        first = list(player.batch)
        clock.advance(400)
        player.op_orders(-1, 2, False)  # no release in between
        clock.advance(300)  # past the first reservation's end, within the second's
        journal.mark_sent(first, note="POST")
        with sqlite3.connect(path) as conn:
            marks = conn.execute(
                "SELECT sent_ms FROM orders WHERE cl_ord_id IN (?, ?)", first
            ).fetchall()
        assert all(sent is not None and sent >= clock() for (sent,) in marks), (marks, clock())
