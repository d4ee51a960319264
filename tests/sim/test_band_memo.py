"""The engine checks every order of a batch against one band per instrument and mark
(:class:`~botkit.sim.orders.BandMemo`): the same (low, high), value and representation, as
:func:`~botkit.sim.orders.band` worked out for each order."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.sim.orders import BandMemo, band
from tests.sim.conftest import TST, Sim, tst_instrument

_INSTRUMENTS = [
    tst_instrument(),
    tst_instrument(tSz=Decimal("0.1"), ordPxRange=Decimal("0.05")),
    tst_instrument(tSz=Decimal(1), ordPxRange=Decimal("0.1")),
]
_MARKS = st.one_of(
    st.decimals(min_value=Decimal(1), max_value=Decimal(300), places=3),
    st.sampled_from([Decimal(100), Decimal("100.0"), Decimal("1E+2"), Decimal("99.95")]),
)


@settings(max_examples=200, deadline=None)
@given(
    asks=st.lists(
        st.tuples(st.integers(0, len(_INSTRUMENTS) - 1), _MARKS, st.booleans()), max_size=30
    )
)
def test_the_memo_answers_what_band_works_out(asks: list[tuple[int, Decimal, bool]]) -> None:
    """Asked again with the very same mark object (``again``), with a mark of equal value
    but another representation, or on another instrument at the same mark object."""
    memo = BandMemo()
    last: Decimal | None = None
    for index, mark, again in asks:
        if again and last is not None:
            mark = last
        inst = _INSTRUMENTS[index]
        got, expected = memo(inst, mark), band(inst, mark)
        assert got == expected
        assert [repr(v) for v in got] == [repr(v) for v in expected]
        last = mark


def test_orders_placed_after_the_mark_moves_meet_the_new_band(tst: Sim) -> None:
    """The band at mark 100 is [90, 110]; at 120, [108, 132]: an order at 109 rests, then
    one at 107 is refused with the new band's bounds, and one at 131 rests."""
    order = {"symbol": TST, "side": "BUY", "type": "LIMIT", "sz": "4"}
    assert tst.post("/v3/trade/orders", [{**order, "px": "109"}])[0]["code"] == 200
    assert tst.post("/v3/trade/orders", [{**order, "px": "111"}])[0]["code"] != 200
    tst.mark("120", TST)
    refused, rests = tst.post("/v3/trade/orders", [{**order, "px": "107"}, {**order, "px": "131"}])
    assert refused["msg"] == (
        "Order price 107 is out of the price limit: the highest price is 132.0,"
        " the lowest price is 108.0"
    )
    assert rests["code"] == 200
