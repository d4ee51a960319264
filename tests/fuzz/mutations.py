"""Hypothesis strategies that mutate JSON documents: delete a field, swap a value for a hostile
one (wrong type, NaN / Infinity strings, huge and negative numbers, long text), drop or repeat
a list item. Used on exchange answers; the mutated document is serialised as the exchange
would send it (so ``NaN`` stays the string "NaN", a huge number stays digits)."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

__all__ = ["HOSTILE", "hostile_values", "mutated"]

HOSTILE: tuple[Any, ...] = (
    None,
    "",
    " ",
    "NaN",
    "nan",
    "Infinity",
    "-Infinity",
    "inf",
    "-1",
    "-0.0001",
    "1e400",
    "1e-400",
    "9" * 400,
    "0x1F",
    "1_000",
    "１２３",  # full-width digits
    True,
    False,
    0,
    -1,
    10**40,
    -(10**40),
    Decimal("1E+999999"),
    Decimal("-1E+999999"),
    [],
    {},
    [1, 2],
    {"nested": {"deeper": [None]}},
    "x" * 10_000,
    "\x00\u202e",
)


def hostile_values() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(HOSTILE),
        st.text(max_size=30),
        st.integers(),
        st.decimals(allow_nan=False, allow_infinity=False).map(lambda d: format(d, "f")),
    )


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _paths(value, (*prefix, index))
    return found


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


@st.composite
def _one_mutation(draw: st.DrawFn, doc: Any) -> Any:
    doc = copy.deepcopy(doc)
    paths = _paths(doc)
    path = draw(st.sampled_from(paths))
    if not path:  # the whole document
        return draw(hostile_values())
    parent, last = _parent(doc, path), path[-1]
    how = draw(st.sampled_from(["replace", "delete", "repeat"]))
    if how == "replace" or (how == "repeat" and not isinstance(parent, list)):
        parent[last] = draw(hostile_values())
    elif how == "delete":
        del parent[last]
    else:
        parent.insert(last, copy.deepcopy(parent[last]))
    return doc


@st.composite
def mutated(draw: st.DrawFn, doc: Any, max_mutations: int = 3) -> Any:
    """``doc`` after 1..``max_mutations`` random mutations."""
    for _ in range(draw(st.integers(1, max_mutations))):
        doc = draw(_one_mutation(doc))
    return doc
