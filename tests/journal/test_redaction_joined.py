"""The journal's connection searches a statement's texts for credentials at once (joined) and
redacts value by value only when it finds one: the values bound are those of redacting each
value on its own, whatever the values (compared over random ones, credentials inside, across
neighbours and in text subclasses), and a credential in the last of a cycle's values is still
kept out of the file."""

from __future__ import annotations

import sqlite3
from enum import StrEnum
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.journal import Journal, NewOrder, OrderOutcome, Outcome
from botkit.journal.conn import RedactingConnection
from botkit.redaction import Redactor
from tests.pipeline.helpers import ManualClock, intent

KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY"
REDACTOR = Redactor((KEY, SECRET))


class Word(StrEnum):
    KEY_WORD = KEY
    PLAIN = "plain"


def _one_by_one(parameters: Any) -> list[Any]:
    """What the connection bound before: every text redacted on its own."""
    values = parameters.values() if isinstance(parameters, dict) else parameters
    return [REDACTOR(v) if isinstance(v, str) else v for v in values]


texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from([KEY, SECRET, KEY[:7], KEY[7:], SECRET[:10], "\x00", "a\x00b"]),
    st.builds(lambda a, b: a + KEY + b, st.text(max_size=5), st.text(max_size=5)),
    st.sampled_from(list(Word)),
)
values = st.one_of(texts, st.integers(), st.none(), st.floats(allow_nan=False))


@settings(max_examples=400, deadline=None)
@given(row=st.lists(values, max_size=12), shape=st.sampled_from([list, tuple, dict]))
def test_a_statement_binds_what_redacting_each_value_binds(row: list[Any], shape: type) -> None:
    conn = sqlite3.connect(":memory:", factory=RedactingConnection)
    assert isinstance(conn, RedactingConnection)
    conn.redactor = REDACTOR
    parameters: Any = {f"v{n}": v for n, v in enumerate(row)} if shape is dict else shape(row)
    got = conn._clean(parameters)
    assert list(got.values() if isinstance(got, dict) else got) == _one_by_one(parameters)
    conn.close()


def test_a_credential_in_the_last_text_of_a_cycle_stays_out_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with Journal(path, clock=ManualClock(1_000), secrets=(KEY, SECRET)) as journal:
        orders = [
            NewOrder(i, i.px, i.sz, wire={"clOrdId": i.cl_ord_id}) for i in map(intent, range(100))
        ]
        journal.add_orders(1, orders, dry=False)
        last = orders[-1].intent.cl_ord_id
        outcomes = [
            OrderOutcome(o.intent.cl_ord_id, Outcome.REJECTED, code=51000, msg="bad")
            for o in orders[:-1]
        ]
        journal.settle([*outcomes, OrderOutcome(last, Outcome.REJECTED, msg=f"key {KEY}!")])
        assert journal.order(last).msg == "key ***!"  # type: ignore[union-attr]
        assert journal.order(orders[0].intent.cl_ord_id).msg == "bad"  # type: ignore[union-attr]
    for file in tmp_path.iterdir():
        assert KEY.encode() not in file.read_bytes()
