"""``None`` parameters are bound through a registered adaptation (issue 20: ``sqlite3`` looks an
unregistered ``None`` up at about ten times an integer's cost) and stay NULL; values of every
other type are bound as before."""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path

from botkit.journal import Journal, NewOrder, OrderOutcome, Outcome
from botkit.journal import conn as journal_conn
from tests.pipeline.helpers import ManualClock, intent


def test_none_is_adapted_by_a_registered_adapter_to_none() -> None:
    assert sqlite3.adapters[(type(None), sqlite3.PrepareProtocol)] is journal_conn._null
    with sqlite3.connect(":memory:") as conn:
        row = conn.execute(
            "SELECT typeof(?), typeof(?), typeof(?), typeof(?), ?", (None, 1, "1", 1.5, b"x")
        ).fetchone()
    assert row == ("null", "integer", "text", "real", b"x")


def test_an_intent_s_empty_columns_are_stored_as_null(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, clock=ManualClock(1)) as journal:
        i = intent(1)
        journal.add_orders(None, [NewOrder(i, i.px, Decimal(1))], dry=False)
        journal.settle([OrderOutcome(i.cl_ord_id, Outcome.ACCEPTED, ord_id="9")])
    with sqlite3.connect(path) as conn:
        order = conn.execute("SELECT typeof(cycle_id), typeof(request), typeof(code) FROM orders")
        events = conn.execute("SELECT typeof(cycle_id) FROM events ORDER BY id")
        assert order.fetchone() == ("null", "null", "null")
        assert [kind for (kind,) in events] == ["null", "null"]
