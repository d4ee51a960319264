"""A reserved intent's row is written with the values every reserved intent shares in the
statement itself (not a dry run, ``sent``, no outcome, one attempt), not bound to each row: the
rows stored are those of binding every column (``ORDER_RESERVED_INSERT``), with the same ids,
whatever the mix of intents and orders refused at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.journal import Journal, NewOrder, Outcome, writes
from botkit.journal.records import OrderState
from tests.pipeline.helpers import ManualClock, intent

RESERVE_MS = 2_000


def _order(n: int, kind: str) -> NewOrder:
    i = intent(n, px=None if kind == "market" else "100.5", inputs={"mark": "100"})
    if kind == "refused":
        return NewOrder(i, i.px, i.sz, reasons=("too big",), outcome=Outcome.REJECTED_LOCAL)
    notes = ("px 100.55 -> 100.5 (step 0.1)",) if kind == "rounded" else ()
    return NewOrder(i, i.px, i.sz, notes=notes, wire={"clOrdId": i.cl_ord_id})


def _bound_one_by_one(orders: list[NewOrder], now: int) -> list[tuple[Any, ...]]:
    """The values of ``ORDER_RESERVED_INSERT``: each order's plain row, an intent reserved."""
    rows, _ = writes.order_rows(3, orders, dry=False, now=now)
    out = []
    for order, row in zip(orders, rows, strict=True):
        if order.outcome is None:
            state = 21  # the row's state: a reserved intent is written sent
            out.append(
                (*row[:state], OrderState.SENT.value, *row[state + 1 :], 1, now + RESERVE_MS)
            )
        else:
            out.append((*row, 0, None))
    return out


def _table(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM orders ORDER BY id").fetchall()


@settings(max_examples=40, deadline=None)
@given(kinds=st.lists(st.sampled_from(["intent", "market", "rounded", "refused"]), max_size=40))
def test_reserved_intents_are_the_rows_of_binding_every_column(
    tmp_path_factory: Any, kinds: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("j")
    orders = [_order(n, kind) for n, kind in enumerate(kinds)]
    clock = ManualClock(1_000)
    with Journal(folder / "reserved.sqlite", clock=clock) as journal:
        journal.add_orders(3, orders, dry=False, reserve_ms=RESERVE_MS)
    with Journal(folder / "bound.sqlite", clock=clock) as journal:
        pass
    with sqlite3.connect(folder / "bound.sqlite") as conn:
        rows = _bound_one_by_one(orders, clock())
        if rows:
            writes.insert_values(conn, writes.ORDER_RESERVED_INSERT, rows)
    assert _table(folder / "reserved.sqlite") == _table(folder / "bound.sqlite")


def test_a_reserved_intent_is_sent_with_one_attempt_until_the_reservation_ends(
    tmp_path: Path,
) -> None:
    orders = [_order(0, "intent"), _order(1, "refused"), _order(2, "market")]
    with Journal(tmp_path / "j.sqlite", clock=ManualClock(1_000)) as journal:
        journal.add_orders(3, orders, dry=False, reserve_ms=RESERVE_MS)
        got = [(o.state, o.outcome, o.attempts, o.sent_ms, o.dry) for o in journal.orders()]
    assert got == [
        (OrderState.SENT, None, 1, 3_000, False),
        (OrderState.FINAL, Outcome.REJECTED_LOCAL, 0, None, False),
        (OrderState.SENT, None, 1, 3_000, False),
    ]
