"""The engine's open orders in one page (the in-process port's read) are what the paged
selection gives: every open order matching the filters, newest first (issue 20)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderSide
from botkit.sim.history import Window, order_filter, select
from tests.sim.conftest import BTC, Sim, sim_config

_ETH = "ETH_USDT_PERP"


@settings(max_examples=40, deadline=None)
@given(
    orders=st.lists(
        st.tuples(st.sampled_from([BTC, _ETH]), st.sampled_from(["BUY", "SELL"]), st.booleans()),
        min_size=0,
        max_size=14,
    ),
    symbol=st.sampled_from([None, BTC, _ETH]),
    side=st.sampled_from([None, OrderSide.BUY, OrderSide.SELL]),
    pick=st.integers(min_value=0, max_value=20),
    limit=st.sampled_from([1, 3, 10, 2**31]),
)
def test_one_page_of_every_open_order_is_the_paged_selection(
    orders: list[tuple[str, str, bool]],
    symbol: str | None,
    side: OrderSide | None,
    pick: int,
    limit: int,
) -> None:
    """Fails if the page is in another order, misses a filter, or keeps a closed order."""
    sim = Sim(sim_config())
    for n, (sym, word, cancel) in enumerate(orders):
        px = sim.engine.mark(sym) * (1 + (-1 if word == "BUY" else 1) * Decimal(n + 1) / 1000)
        tick = sim.engine.instrument(sym).tSz
        placed = sim.place(
            symbol=sym, side=word, type="LIMIT", sz="1", px=str((px // tick) * tick),
            clOrdId=f"o{n}",
        )  # fmt: skip
        assert placed["msg"] == "Success", placed
        sim.clock.advance(1000)
        if cancel:
            sim.engine.cancel(sym, cl_ord_id=f"o{n}")
    opened = sim.engine.matcher.open
    ord_id = sorted(opened)[pick] if pick < len(opened) else None
    cl_ord_id = f"o{pick}" if pick % 3 == 0 else None
    for window in (Window(start=0, end=0, limit=limit), Window(start=0, end=0, limit=2**31)):
        got = sim.engine.open_orders(
            window, symbol=symbol, side=side, ord_id=ord_id, cl_ord_id=cl_ord_id
        )
        everything = Window(start=-(2**62), end=2**62, limit=window.limit)
        match = order_filter(symbol, side, ord_id, cl_ord_id)
        want = select(list(opened.values()), list(opened), everything, lambda o: o.c_time, match)
        assert [o.ord_id for o in got] == [o.ord_id for o in want]
        assert all(a is b for a, b in zip(got, want, strict=True))
