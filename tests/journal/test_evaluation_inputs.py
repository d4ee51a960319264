"""The evaluation rows' ``inputs`` column holds exactly ``json.dumps`` of what the rules saw
(compact, sorted keys, unknown types as their ``str``) whatever the values, and a fire's event
detail ``{"inputs": ...}`` the same, in both write modes."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderSide, OrderType
from botkit.intents import OrderIntent
from botkit.journal import Evaluated, Journal, NewOrder, OrderOutcome, Outcome

_plain = st.one_of(
    st.text(),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.integers(),
    st.none(),
)
_other = st.one_of(
    st.floats(), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(), st.integers())
)
_inputs = st.dictionaries(st.text(), st.one_of(_plain, _plain, _other), max_size=6)


def _stored(inputs: dict[str, Any], group_rows: int = 0) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        return _stored_in(Path(tmp) / "j.sqlite", inputs, group_rows)


def _stored_in(path: Path, inputs: dict[str, Any], group_rows: int) -> str:
    """The stored inputs text; the fire's event detail must hold the same inputs."""
    with Journal(path, clock=lambda: 1_000, synchronous="OFF", group_rows=group_rows) as journal:
        evaluated = [Evaluated("r", False, "no", inputs), Evaluated("q", True, "", inputs)]
        journal.record_evaluations(None, strategy="s", version="v", rules=evaluated)
    with sqlite3.connect(path) as conn:
        rows = [r[0] for r in conn.execute("SELECT inputs FROM evaluations ORDER BY id")]
        (detail,) = conn.execute("SELECT detail FROM events WHERE kind = 'fire'").fetchone()
    assert rows[0] == rows[1]
    assert detail == json.dumps(
        {"inputs": inputs}, separators=(",", ":"), sort_keys=True, default=str
    )
    return str(rows[0])


@settings(max_examples=60, deadline=None)
@given(inputs=_inputs, group_rows=st.sampled_from([0, 3]))
def test_inputs_are_stored_as_json_dumps_writes_them(
    inputs: dict[str, Any], group_rows: int
) -> None:
    expected = json.dumps(inputs, separators=(",", ":"), sort_keys=True, default=str)
    assert _stored(inputs, group_rows) == expected


def test_typical_rule_inputs() -> None:
    inputs: dict[str, Any] = {"price.mark": Decimal("60000.1"), "position.qty": Decimal(0),
                              "flag": True, "n": 3, "note": "dip ✓ \ud800"}  # fmt: skip
    stored = _stored(inputs)
    assert stored == (
        '{"flag":true,"n":3,"note":"dip \\u2713 \\ud800","position.qty":"0","price.mark":"60000.1"}'
    )


def test_a_cycles_evaluations_in_one_call_are_the_rows_of_one_call_per_strategy(
    tmp_path: Path,
) -> None:
    seen: dict[str, Any] = {"mark": Decimal("1.5")}
    counted: dict[str, Any] = {"x": 1}
    strategies = [
        ("a", "v1", [Evaluated("r1", True, "", seen), Evaluated("r2", False)]),
        ("b", "v2", [Evaluated("r1", False, "condition_false", counted)]),
        ("c", "v1", [Evaluated("r9", True, "", {"s": "text"})]),
    ]
    tables = []
    for name, one_call in (("each", False), ("once", True)):
        journal = Journal(tmp_path / f"{name}.sqlite", clock=lambda: 1_000, synchronous="OFF")
        cycle = journal.begin_cycle()
        if one_call:
            journal.record_cycle_evaluations(cycle, strategies)
        else:
            for strategy, version, rules in strategies:
                journal.record_evaluations(cycle, strategy=strategy, version=version, rules=rules)
        journal.end_cycle(cycle)
        journal.close()
        conn = sqlite3.connect(tmp_path / f"{name}.sqlite")
        read = "SELECT * FROM {} ORDER BY id"
        tables.append([conn.execute(read.format(t)).fetchall() for t in ("evaluations", "events")])
        conn.close()
    assert tables[0] == tables[1]
    assert len(tables[0][0]) == 4
    assert len(tables[0][1]) == 2  # two fires


@settings(max_examples=40, deadline=None)
@given(notes=st.lists(st.text(), max_size=3), reasons=st.lists(st.text(), max_size=3))
def test_an_orders_notes_and_reasons_are_stored_as_json_dumps_writes_them(
    notes: list[str], reasons: list[str]
) -> None:
    intent = OrderIntent(strategy="s", rule="r", slot=1, leg=0, cl_ord_id="c-1",
                         symbol="BTC_USDT_PERP", side=OrderSide.BUY, type=OrderType.LIMIT,
                         sz=Decimal(1), px=Decimal(100))  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.sqlite"
        with Journal(path, clock=lambda: 1_000, synchronous="OFF") as journal:
            order = NewOrder(intent, intent.px, intent.sz, notes=tuple(notes))
            journal.add_orders(None, [order], dry=False)
            journal.settle([OrderOutcome("c-1", Outcome.FAILED, reasons=tuple(reasons))])
        with sqlite3.connect(path) as conn:
            stored = conn.execute("SELECT notes, reasons FROM orders").fetchone()
    dumps = [json.dumps(v, separators=(",", ":"), sort_keys=True) for v in (notes, reasons)]
    assert list(stored) == dumps


@settings(max_examples=40, deadline=None)
@given(
    wire=st.dictionaries(st.text(), st.one_of(st.text(), _plain), max_size=10),
    inputs=st.lists(_inputs, min_size=1, max_size=3),
    shared=st.lists(st.integers(0, 2), min_size=1, max_size=6),
)
def test_an_orders_request_and_inputs_are_stored_as_json_dumps_writes_them(
    wire: dict[str, Any], inputs: list[dict[str, Any]], shared: list[int]
) -> None:
    """Whatever the request's values (all texts: one comprehension), and whether the orders of
    one call share their inputs object (the legs of one fire: encoded once) or not."""
    orders = []
    for n, which in enumerate(shared):
        intent = OrderIntent(strategy="s", rule="r", slot=1, leg=n, cl_ord_id=f"c-{n}",
                             symbol="BTC_USDT_PERP", side=OrderSide.BUY, type=OrderType.LIMIT,
                             sz=Decimal(1), px=Decimal(100),
                             inputs=inputs[which % len(inputs)])  # fmt: skip
        orders.append(NewOrder(intent, intent.px, intent.sz, wire=wire))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.sqlite"
        with Journal(path, clock=lambda: 1_000, synchronous="OFF") as journal:
            journal.add_orders(None, orders, dry=False)
        with sqlite3.connect(path) as conn:
            stored = conn.execute("SELECT inputs, request FROM orders ORDER BY id").fetchall()

    def dumps(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)

    assert stored == [(dumps(o.intent.inputs), dumps(wire)) for o in orders]
