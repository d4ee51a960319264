"""A plan's check of an order it has not met before (``CheckMemo._passes``, issue 20: the
status, position-mode and size checks asked once per order shape and per size object, the
price, id and request each order's own) gives what :func:`validate_intent` gives the order
alone, whatever the order: passing, or refused for any reason (then it is validated in full).

Every order is met first (distinct prices), in a sequence sharing size objects and shapes, on
an instrument of each status, in each position mode: compared as printed (a ``Decimal``
printed keeps its digits)."""

# ruff: noqa: E501  (the table holds one case per line, unwrapped)

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import (
    InstrumentStatus,
    LimitPrice,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    TimeInForce,
)
from botkit.intents import OffTick, OrderIntent
from botkit.pipeline.validate import CheckMemo, price_band, validate_intent
from tests.pipeline.helpers import instrument

D = Decimal

# sizes shared between orders (the same objects): on the lot, off it, below the minimum,
# above the limit and market maxima, not positive, not finite, beyond any order
_SIZES = [D("1"), D("2.5"), D("3.7"), D("700")]
_ODD_SIZES = [D("0.4"), D("2000"), D("0"), D("-1"), D("NaN"), D("1E+16")]
_ODD_IDS = ["", "x" * 33, "bad id", "é"]
_ODD_PRICES: list[Decimal | None] = [D("93"), D("107"), D("0"), D("-5"), D("Inf"), None]
T = TypeVar("T")


def _mostly(draw: st.DrawFn, usual: Sequence[T], odd: Sequence[T]) -> T:
    """One of ``usual`` four times in five, else one of ``odd``: most orders pass every
    check, so that orders of one shape or size pass one after another."""
    return draw(st.sampled_from(odd if draw(st.integers(0, 4)) == 0 else usual))


@st.composite
def _order(draw: st.DrawFn, n: int) -> OrderIntent:
    order_type = draw(st.sampled_from([OrderType.LIMIT, OrderType.LIMIT, OrderType.MARKET]))
    px: Decimal | None
    if order_type is OrderType.MARKET:
        px = draw(st.sampled_from([None, None, None, D("100")]))
    else:  # each order its own price (met first), on and off the tick; some outside the band
        usual: list[Decimal | None] = [D("100") + D(n) / 1000, D("99") + D(n) / 10]
        px = _mostly(draw, usual, _ODD_PRICES)
    cid = _mostly(draw, [f"id-{n}"], _ODD_IDS)
    return OrderIntent(
        strategy="s", rule="r", slot=1, leg=n, cl_ord_id=cid, symbol="AAA",
        side=draw(st.sampled_from(list(OrderSide))), type=order_type,
        sz=_mostly(draw, _SIZES, _ODD_SIZES), px=px,
        pos_side=draw(st.sampled_from([PosSide.BOTH, PosSide.BOTH, PosSide.LONG, PosSide.SHORT])),
        reduce_only=draw(st.booleans()),
        time_in_force=draw(st.sampled_from([TimeInForce.GTC, TimeInForce.IOC])),
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    orders=st.integers(min_value=1, max_value=16).flatmap(
        lambda k: st.tuples(*[_order(n) for n in range(k)])
    ),
    status=st.sampled_from([InstrumentStatus.OPEN, InstrumentStatus.OPEN,
                            InstrumentStatus.CANCEL_CLOSE_ONLY, InstrumentStatus.PAUSED]),
    mode=st.sampled_from([PositionMode.ONE_WAY, PositionMode.HEDGE]),
    off_tick=st.sampled_from([OffTick.ROUND, OffTick.REFUSE]),
    margin=st.sampled_from([D(0), D("0.001")]),
)  # fmt: skip
def test_an_order_met_first_is_checked_as_validating_it_alone(
    orders: tuple[OrderIntent, ...],
    status: InstrumentStatus,
    mode: PositionMode,
    off_tick: OffTick,
    margin: Decimal,
) -> None:
    """Fails if the shape's checks are kept without the side, position side or reduce-only
    flag, if a size's check is kept without the order's type or by the size's value, if a
    refusal is let through, or if the notes, amounts or request differ from the order's own."""
    inst = instrument(symbol="AAA", status=status, tSz=D("0.5"), lotSz=D("1"), minSz=D("1"),
                      limitMaxQty=D("1000"), marketMaxQty=D("500"))  # fmt: skip
    mark, limit = D("100"), LimitPrice(symbol="AAA", buyLmt=D("104"), sellLmt=D("96"))
    band = price_band(inst, mark=mark, limit_price=limit, margin=margin)
    memo = CheckMemo(
        inst, mark=mark, limit_price=limit, position_mode=mode, band_margin=margin, band=band
    )
    for order in orders:
        alone = validate_intent(
            order, inst, mark=mark, limit_price=limit, position_mode=mode, off_tick=off_tick,
            band_margin=margin,
        )  # fmt: skip
        assert repr(memo.check(order, off_tick)) == repr(alone)


def _shaped(n: int, side: OrderSide, pos_side: PosSide, reduce_only: bool) -> OrderIntent:
    return OrderIntent(
        strategy="s", rule="r", slot=1, leg=n, cl_ord_id=f"id-{n}", symbol="AAA", side=side,
        type=OrderType.LIMIT, sz=D("1"), px=D("100") + n, pos_side=pos_side,
        reduce_only=reduce_only,
    )  # fmt: skip


_S, _B, _L, _0 = OrderSide.SELL, OrderSide.BUY, PosSide.LONG, PosSide.BOTH


@pytest.mark.parametrize(
    ("status", "mode", "first", "then", "code"),
    [
        (InstrumentStatus.OPEN, PositionMode.HEDGE, (_S, _L, True), (_B, _L, True), "reduce_only_opens"),
        (InstrumentStatus.CANCEL_CLOSE_ONLY, PositionMode.ONE_WAY, (_B, _0, True), (_B, _0, False), "instrument_close_only"),
        (InstrumentStatus.OPEN, PositionMode.ONE_WAY, (_B, _0, False), (_B, _L, False), "pos_side_one_way"),
    ],
)  # fmt: skip
def test_an_order_a_shape_check_refuses_is_refused_after_one_of_a_shape_it_passes(
    status: InstrumentStatus,
    mode: PositionMode,
    first: tuple[OrderSide, PosSide, bool],
    then: tuple[OrderSide, PosSide, bool],
    code: str,
) -> None:
    """The second order differs from the first, which passed, only in its side, its reduce-only
    flag or its position side: refused as alone. Fails if the shapes passed are kept without
    the side, the flag or the position side."""
    inst = instrument(symbol="AAA", status=status, tSz=D("0.5"), ordPxRange=D("0.5"))
    memo = CheckMemo(
        inst, mark=D("100"), limit_price=None, position_mode=mode, band_margin=D(0), band=None
    )
    assert memo.check(_shaped(0, *first), OffTick.ROUND).ok
    refused = memo.check(_shaped(1, *then), OffTick.ROUND)
    assert [r.code for r in refused.reasons] == [code]
