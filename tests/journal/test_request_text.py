"""An order's ``request`` column holds exactly ``json.dumps`` of its wire body (compact, sorted
keys, unknown types as their ``str``) whether the journal writes it through the template of a
key set whose values have all been text (issue 20) or through the typed plan, and after a key
set first seen with text only later holds another type."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.journal import Journal, NewOrder
from tests.pipeline.helpers import ManualClock, intent


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def _stored(wires: list[dict[str, Any]]) -> list[str]:
    orders = []
    for n, wire in enumerate(wires):
        i = intent(n)
        orders.append(NewOrder(i, i.px, i.sz, wire=wire))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.sqlite"
        with Journal(path, clock=ManualClock(1), synchronous="OFF") as journal:
            journal.add_orders(None, orders, dry=False)
        with sqlite3.connect(path) as conn:
            return [text for (text,) in conn.execute("SELECT request FROM orders ORDER BY id")]


# few keys, so that key sets come back (within an example and across examples: the templates
# are kept by the process); "%" in keys, since the template is a "%" format
_keys = st.sampled_from(["symbol", "px", "sz", "%s", "a%b", "%%", "é", "clOrdId"])
_values = st.one_of(
    st.text(), st.text(), st.text(), st.booleans(), st.decimals(allow_nan=False), st.none()
)
_wires = st.lists(st.dictionaries(_keys, _values, min_size=1, max_size=5), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(wires=_wires)
def test_the_request_column_is_json_dumps_of_the_wire(wires: list[dict[str, Any]]) -> None:
    assert _stored(wires) == [_dumps(w) for w in wires]


def test_a_key_set_of_text_then_of_other_values_then_of_text_again() -> None:
    keys = ("symbol", "side", "%d", "px")
    texts = [dict(zip(keys, ("BTC", "BUY", f"v{n}%", "1.5"), strict=True)) for n in range(3)]
    odd: dict[str, Any] = dict(zip(keys, ("BTC", True, Decimal("2.50"), None), strict=True))
    wires = [texts[0], texts[1], odd, texts[2], {**texts[0], "px": 'é\n"x"'}]
    assert _stored(wires) == [_dumps(w) for w in wires]
