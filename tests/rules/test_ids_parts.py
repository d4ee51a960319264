"""The parts of an id recorded when :func:`kept_order_id` makes it are those its parse gives.

``parse_client_order_id`` answers from the ids seen or made last; the ids a ``keep:`` rule's
reconcile makes are recorded with their parts when made (no parse later). Both must equal the
parse itself (``_parse``, the pattern) for any strategy, rule, generation and rung, and after
the kept ids are forgotten.
"""

from __future__ import annotations

from enum import IntEnum
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.rules import ids
from botkit.rules.ids import client_order_id, kept_order_id, parse_client_order_id

names = st.text(min_size=1, max_size=40)
numbers = st.integers(min_value=0, max_value=36**6 - 1)


@settings(max_examples=300, deadline=None)
@given(names, names, numbers, st.integers(min_value=0, max_value=5000))
def test_made_parts_are_the_parse(strategy: str, rule: str, generation: int, rung: int) -> None:
    cl_ord_id = kept_order_id(strategy, rule, generation, rung)
    recorded = ids._PARSED.get(cl_ord_id)  # recorded when made (unless seen before)
    parsed = ids._parse(cl_ord_id)
    assert parsed is not None
    assert recorded == parsed
    assert parse_client_order_id(cl_ord_id) == parsed
    assert parsed.strategy_tag == ids.strategy_tag(strategy)
    assert parsed.rule_tag == ids.rule_tag(rule)
    assert (parsed.slot, parsed.leg, parsed.kept) == (generation, rung, True)
    assert type(recorded.slot) is int
    assert type(recorded.leg) is int


def test_parts_recorded_are_plain_numbers_whatever_int_was_given() -> None:
    """A bool or an IntEnum is an int to the id; the parts recorded are the parse's plain ints
    (a later parse must not answer ``slot=True``)."""

    class Rung(IntEnum):
        FIRST = 1

    ids._PARSED.clear()
    cl_ord_id = kept_order_id("s", "r", True, Rung.FIRST)
    recorded = parse_client_order_id(cl_ord_id=cl_ord_id)
    assert recorded == ids._parse(cl_ord_id)
    assert recorded is not None
    assert (type(recorded.slot), type(recorded.leg)) == (int, int)
    assert (repr(recorded.slot), repr(recorded.leg)) == ("1", "1")


def test_recorded_at_making_not_parsed() -> None:
    ids._PARSED.clear()
    cl_ord_id = kept_order_id("btc-dip-ladder", "ladder-on-dip", 123456, 7)
    with mock.patch.object(ids, "_parse", side_effect=AssertionError("parsed")):
        found = parse_client_order_id(cl_ord_id)
    assert found == ids._parse(cl_ord_id)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.builds(client_order_id, names, names, numbers, st.integers(0, 300)),
        st.builds(kept_order_id, names, names, numbers, st.integers(0, 300)),
    )
)
def test_any_id_answers_its_parse(cl_ord_id: str) -> None:
    assert parse_client_order_id(cl_ord_id) == ids._parse(cl_ord_id)


def test_forgotten_when_full_and_parsed_again() -> None:
    ids._PARSED.clear()
    with mock.patch.object(ids, "_KEPT_IDS", 8):
        made = [kept_order_id("s", "r", g, 1) for g in range(20)]
        assert len(ids._PARSED) <= 8
        for cl_ord_id in made:
            assert parse_client_order_id(cl_ord_id) == ids._parse(cl_ord_id)
            assert len(ids._PARSED) <= 8
    ids._PARSED.clear()
