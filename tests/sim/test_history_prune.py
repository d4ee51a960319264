"""The history's prune forgets exactly the orders no query shows any more: those closed and
not :meth:`History.visible` (fill-less API cancels older than 5 hours), the rest kept in id
order with their ids."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from botkit.exchange.models import (
    MarginMode,
    OrderSide,
    OrderType,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.sim.book import OrderState, SimOrder
from botkit.sim.history import CANCELED_VISIBLE_MS, History

NOW = 1_704_067_200_000 + 10 * CANCELED_VISIBLE_MS
_STATES = [OrderState.NEW, OrderState.PARTIALLY_FILLED, *sorted(OrderState.CLOSED)]
_ORDER = st.tuples(
    st.sampled_from(_STATES),
    st.sampled_from(["API", "SYSTEM", "LIQUIDATION"]),
    st.sampled_from([Decimal(0), Decimal("0.0"), Decimal(1)]),
    # around the 5 hours' edge, both sides and on it
    st.sampled_from([0, 1, CANCELED_VISIBLE_MS - 1, CANCELED_VISIBLE_MS, CANCELED_VISIBLE_MS + 1])
    | st.integers(0, 3 * CANCELED_VISIBLE_MS),
)


def _order(ord_id: int, state: str, source: str, exec_qty: Decimal, age_ms: int) -> SimOrder:
    return SimOrder(
        ord_id, f"c{ord_id}", "BTC_USDT_PERP", OrderSide.BUY, OrderType.LIMIT, Decimal(1),
        Decimal(60000), MarginMode.CROSS, PosSide.BOTH, False, False, TimeInForce.GTC,
        StpMode.NONE, Decimal(20), NOW - age_ms - 1, NOW - age_ms, source=source, state=state,
        exec_qty=exec_qty,
    )  # fmt: skip


@given(st.lists(_ORDER, max_size=40))
def test_prune_forgets_the_closed_orders_no_query_shows(
    specs: list[tuple[str, str, Decimal, int]],
) -> None:
    history = History()
    orders = [_order(100 + i, *spec) for i, spec in enumerate(specs)]
    for order in orders:
        history.orders.add(order)
    hidden = [o for o in orders if o.state in OrderState.CLOSED and not history.visible(o, NOW)]
    assert history.prune(NOW) == hidden
    kept = [o for o in orders if all(o is not h for h in hidden)]
    assert history.orders.records == kept
    assert history.orders.ids == [o.ord_id for o in kept]
