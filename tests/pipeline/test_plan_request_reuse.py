"""A plan's order of the same values as one checked before in the plan takes that order's
request with its own client order id (``CheckMemo`` with ``models.order_request_as``) only
when every field of its request would be the same: the margin mode, time in force and
self-trade mode (which the memo's key leaves out) and the symbol included. Each accepted
order's request is the one validating it alone builds (issue 20)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import (
    Balance,
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    Ticker,
    TimeInForce,
    order_request_as,
)
from botkit.intents import OrderIntent
from botkit.pipeline import build_plan
from botkit.pipeline.validate import validate_intent
from botkit.snapshot import Snapshot
from tests.pipeline.helpers import instrument

D = Decimal
_INSTRUMENT = instrument(symbol="AAA", tSz=D("0.1"), lotSz=D("1"), ordPxRange=D("0.05"))
_MARK = D("100")


class _Text(str):
    """A symbol of a ``str`` subclass: equal to the plain one, not of its exact type."""

    __slots__ = ()


@st.composite
def _intent(draw: st.DrawFn, n: int) -> OrderIntent:
    return OrderIntent(
        strategy=draw(st.sampled_from(["s1", "s2"])),
        rule="r",
        slot=1,
        leg=n,
        cl_ord_id=f"id{n}",
        symbol=draw(st.sampled_from(["AAA", "AAA", "AAA", _Text("AAA")])),
        side=draw(st.sampled_from([OrderSide.BUY, OrderSide.SELL])),
        type=OrderType.LIMIT,
        sz=draw(st.sampled_from([D("1"), D("2")])),
        px=draw(st.sampled_from([D("99.5"), D("100.5")])),
        mgn_mode=draw(st.sampled_from([MarginMode.CROSS, MarginMode.ISOLATED])),
        time_in_force=draw(st.sampled_from([TimeInForce.GTC, TimeInForce.IOC])),
        stp_mode=draw(st.sampled_from([StpMode.NONE, StpMode.EXPIRE_TAKER])),
    )


@settings(max_examples=200, deadline=None)
@given(
    intents=st.integers(min_value=2, max_value=30).flatmap(
        lambda k: st.tuples(*[_intent(n) for n in range(k)])
    )
)
def test_each_planned_request_is_the_one_validating_its_order_alone_builds(
    intents: tuple[OrderIntent, ...],
) -> None:
    """Fails if a later order takes an earlier one's request whose margin mode, time in
    force, self-trade mode or symbol differ from its own."""
    snap = Snapshot(
        now_ms=1_700_000_000_000, balance=Balance(eq=D("10000")),
        instruments={"AAA": _INSTRUMENT}, tickers={"AAA": Ticker(s="AAA", mPx=_MARK)},
        positions=[], open_orders=[], position_mode=PositionMode.ONE_WAY,
    )  # fmt: skip
    plan = build_plan(list(intents), snap)
    assert len(plan.accepted) == len(intents)
    for order in plan.accepted:
        alone = validate_intent(order.intent, _INSTRUMENT, mark=_MARK)
        assert alone.request is not None
        assert repr(order.request) == repr(alone.request)
        assert order.request.to_wire() == alone.request.to_wire()
        assert type(order.request.symbol) is type(alone.request.symbol)


def test_a_request_with_another_id_is_the_validated_one_or_none_for_an_id_refused() -> None:
    """``order_request_as`` gives what validating the fields with the new id gives, the
    known request untouched; an id the model refuses gives None."""
    known = OrderRequest(
        symbol="AAA", side=OrderSide.SELL, type=OrderType.LIMIT, sz=D("2"), px=D("100.5"),
        mgnMode=MarginMode.ISOLATED, posSide=PosSide.SHORT, clOrdId="a-1", reduceOnly=True,
        timeInForce=TimeInForce.IOC, stpMode=StpMode.EXPIRE_BOTH,
    )  # fmt: skip
    known.wire_text()  # what a request keeps beside its fields is not carried over
    made = order_request_as(known, "b_2")
    assert made is not None
    validated = OrderRequest(**{**known.model_dump(), "clOrdId": "b_2"})
    assert repr(made) == repr(validated)
    assert made == validated
    assert made.model_fields_set == validated.model_fields_set
    assert made.wire_text() == validated.wire_text()
    assert made.journal_text() == validated.journal_text()
    assert known.clOrdId == "a-1"
    for bad in ("", "x" * 33, "bad id!", "ü-1", "a\n"):
        assert order_request_as(known, bad) is None
