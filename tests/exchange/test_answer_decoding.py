"""The client reads an answer's JSON exactly as ``json.loads(..., parse_float=Decimal,
parse_constant=Decimal)`` does — the same values, the same refusals with the same messages —
through one decoder made once (issue 20: ``json.loads`` with options builds one per call)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.live import http


def _reference(text: str | bytes) -> Any:
    return json.loads(text, parse_float=Decimal, parse_constant=Decimal)


def _outcome(read: Any, text: Any) -> tuple[str, str]:
    try:
        return "value", repr(read(text))  # repr: Decimal('1.0') is not Decimal('1')
    except Exception as exc:  # the refusal is what is compared
        return type(exc).__name__, str(exc)


_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.decimals(allow_nan=False, allow_infinity=False).map(str)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _texts(draw: st.DrawFn) -> str | bytes:
    text = json.dumps(draw(_values), ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):  # numbers with fractions, NaN and infinities as the answers hold
        text = text.replace('"', "", draw(st.integers(0, 4)))
    if draw(st.booleans()):
        text = draw(st.sampled_from(["", " ", "\ufeff", "NaN", "-Infinity", "1.50"])) + text
    if draw(st.booleans()):  # cut short
        text = text[: draw(st.integers(0, len(text)))]
    if draw(st.booleans()):
        return text
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32"]))
    data = text.encode(encoding, "surrogatepass")
    if draw(st.booleans()):  # a stray byte
        data += bytes([draw(st.integers(0, 255))])
    return data


@settings(max_examples=400, deadline=None)
@given(text=_texts())
def test_answers_are_read_as_json_loads_reads_them(text: str | bytes) -> None:
    assert _outcome(http.loads, text) == _outcome(_reference, text)


@pytest.mark.parametrize(
    "text",
    [b'{"code":200,"data":[{"px":"1.50","sz":1.50,"n":3}]}', "NaN", b"\xef\xbb\xbf[1]",
     "\ufeff[1]", bytearray(b"[1.0]"), b"", b"\xff", 12, None],
)  # fmt: skip
def test_typical_and_odd_answers(text: Any) -> None:
    assert _outcome(http.loads, text) == _outcome(_reference, text)
