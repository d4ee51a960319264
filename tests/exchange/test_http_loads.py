"""The client's JSON reading equals ``json.loads(..., parse_float=Decimal,
parse_constant=Decimal)`` for every answer, odd ones included (issue 20: its decoder is made
once instead of per answer)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.live.http import loads

_TEXTS = [
    '{"code":200,"data":[{"px":"1.5","sz":2,"f":0.1e-3,"n":NaN,"i":-Infinity}]}',
    '[1, 2.50, 1E+3, "é", "\\u00e9", null, true]',
    "\ufeff{}",  # a BOM: refused as json.loads refuses it
    "",
    "{",
    "[1,]",
    "  \n 3.0  ",
]


def _outcome(fn: Any, text: str | bytes) -> tuple[str, str]:
    try:
        value = fn(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return ("error", f"{type(exc).__name__}: {exc}")
    return ("value", repr(value))


def _reference(text: str | bytes) -> Any:
    return json.loads(text, parse_float=Decimal, parse_constant=Decimal)


@pytest.mark.parametrize("text", _TEXTS)
@pytest.mark.parametrize("encoding", [None, "utf-8", "utf-16", "utf-32", "utf-8-sig"])
def test_loads_reads_as_json_loads_with_decimals(text: str, encoding: str | None) -> None:
    given_text: str | bytes = text if encoding is None else text.encode(encoding)
    assert _outcome(loads, given_text) == _outcome(_reference, given_text)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(value=_JSON, as_bytes=st.booleans())
def test_loads_reads_any_json_as_json_loads_does(value: Any, as_bytes: bool) -> None:
    text = json.dumps(value)
    given_text: str | bytes = text.encode() if as_bytes else text
    assert _outcome(loads, given_text) == _outcome(_reference, given_text)
