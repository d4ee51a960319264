"""The journal's JSON of a list (a send's client order ids, notes, reasons) is what
``json.dumps`` writes, whether every item is a text (encoded in one pass) or not (issue 20)."""

from __future__ import annotations

import json
from decimal import Decimal
from enum import StrEnum
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.journal import writes


class _Word(StrEnum):
    A = "a\u00e9"
    B = 'q"uote'


_ITEMS = st.one_of(
    st.text(max_size=8),
    st.sampled_from(list(_Word)),
    st.integers(),
    st.none(),
    st.booleans(),
    st.sampled_from([Decimal("1.5"), Decimal("1E+3")]),
)


@settings(max_examples=400, deadline=None)
@given(items=st.lists(st.text(max_size=12) | st.sampled_from(list(_Word)), max_size=12))
def test_a_list_of_texts_is_json_dumps_of_it(items: list[str]) -> None:
    dumped = json.dumps(items, separators=(",", ":"), sort_keys=True, default=str)
    assert writes._json(items) == dumped
    assert writes._json({"cl_ord_ids": items}) == json.dumps(
        {"cl_ord_ids": items}, separators=(",", ":"), sort_keys=True, default=str
    )


@settings(max_examples=400, deadline=None)
@given(items=st.lists(_ITEMS, max_size=8))
def test_a_list_of_any_values_is_json_dumps_of_it(items: list[Any]) -> None:
    """A list holding a value that is not a text after texts: the same text as before."""
    assert writes._json(items) == json.dumps(
        items, separators=(",", ":"), sort_keys=True, default=str
    )
