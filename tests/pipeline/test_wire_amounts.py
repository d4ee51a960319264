"""Every amount that leaves is written with exactly the decimals its step allows: a property over
random Decimals (any exponent, trailing zeros or not, on or off the grid), for every order field
that carries an amount (``sz`` per ``lotSz``, ``px`` per ``tSz``), checked against the
simulator's independent strict text rule as well as the plain reading of the text.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderSide, OrderType
from botkit.pipeline.validate import AMOUNT_LIMIT, on_step, step_decimals, validate_intent
from botkit.sim.orders import text_on_step
from tests.pipeline.helpers import D, instrument, intent

PLAIN = re.compile(r"[0-9]+(\.[0-9]+)?")
STEPS = [D("1"), D("1.0"), D("10"), D("5"), D("0.1"), D("0.50"), D("0.010"), D("0.0025"), D("1E-8")]


def decimals_of(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def amounts() -> st.SearchStrategy[Decimal]:
    """Any positive finite Decimal: a coefficient with any number of digits (trailing zeros
    included) at any exponent."""
    return st.builds(
        lambda coefficient, exponent: Decimal(coefficient).scaleb(exponent),
        st.integers(min_value=1, max_value=10**30),
        st.integers(min_value=-40, max_value=40),
    ) | st.sampled_from([D("2.0"), D("4.00"), D("1E+1"), D("61234.50"), D("0.5000000")])


def assert_canonical(text: str, value: Decimal, step: Decimal, field: str) -> None:
    assert PLAIN.fullmatch(text), f"{field} {text!r} is not plain"
    assert decimals_of(text) == step_decimals(step), (field, text, step)
    assert Decimal(text) == value
    assert Decimal(text) % step == 0
    assert text_on_step(field, text, step, "step") is None


@settings(max_examples=400, deadline=None)
@given(
    sz=amounts(),
    px=amounts(),
    lot=st.sampled_from(STEPS),
    tick=st.sampled_from(STEPS),
    side=st.sampled_from(list(OrderSide)),
    kind=st.sampled_from([OrderType.LIMIT, OrderType.LIMIT_MAKER, OrderType.MARKET]),
    reduce_only=st.booleans(),
)
def test_every_amount_leaves_with_exactly_the_decimals_of_its_step(
    sz: Decimal,
    px: Decimal,
    lot: Decimal,
    tick: Decimal,
    side: OrderSide,
    kind: OrderType,
    reduce_only: bool,
) -> None:
    inst = instrument(
        tSz=tick, lotSz=lot, minSz=D(0), minPx=None, maxPx=None, limitMaxQty=None,
        marketMaxQty=None, ordPxRange=None,
    )  # fmt: skip
    priced = kind is not OrderType.MARKET
    order = intent(
        side=side, type=kind, sz=str(sz), px=str(px) if priced else None, reduce_only=reduce_only
    )
    checked = validate_intent(order, inst)  # never raises, whatever the amounts
    if not checked.ok:
        assert checked.reasons
        return
    assert checked.request is not None
    wire = checked.request.to_wire()
    assert_canonical(wire["sz"], checked.sz, lot, "sz")
    assert checked.sz <= sz  # a size only ever rounds down
    if priced:
        assert_canonical(wire["px"], Decimal(wire["px"]), tick, "px")
        assert checked.px is not None
        assert (checked.px <= px) if side is OrderSide.BUY else (checked.px >= px)
    else:
        assert "px" not in wire


@pytest.mark.parametrize(
    ("value", "step", "text"),
    [
        ("2.0", "1", "2"),
        ("4.00", "1", "4"),
        ("61234.5", "0.1", "61234.5"),
        ("61234.50", "0.1", "61234.5"),
        ("61234", "0.1", "61234.0"),
        ("61234.5", "0.50", "61234.5"),
        ("1E+2", "1", "100"),
        ("20", "10", "20"),
        ("0.0100", "0.0025", "0.0100"),
    ],
)
def test_on_step_writes_the_decimals_of_the_normalized_step(
    value: str, step: str, text: str
) -> None:
    assert format(on_step(D(value), D(step)), "f") == text


@pytest.mark.parametrize(
    ("sz", "px", "code"),
    [
        ("1E+60", "100", "sz_too_large"),
        ("1", "1E+60", "px_too_large"),
        (str(AMOUNT_LIMIT), "100", "sz_too_large"),
    ],
)
def test_an_amount_beyond_sane_bounds_is_refused_with_a_reason(sz: str, px: str, code: str) -> None:
    checked = validate_intent(intent(sz=sz, px=px), instrument())
    assert [r.code for r in checked.reasons] == [code]
