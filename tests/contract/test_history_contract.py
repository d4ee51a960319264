"""History as the spec defines it, through the client: paging, the 5-hour rule, the 90-day window.

The simulator's clock is a ManualClock, so hours and days pass in no time.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.clock import ManualClock
from botkit.errors import RequestValidationError
from botkit.exchange.models import OrderHistoryState, OrderRequest, OrderSide, OrderType
from botkit.exchange.queries import FillQuery, OrderQuery, PositionQuery
from botkit.live.client import ExchangeClient
from tests.contract.conftest import Raw

BTC = "BTC_USDT_PERP"
HOUR = 3_600_000
DAY = 24 * HOUR


def market(side: OrderSide, cl: str) -> OrderRequest:
    return OrderRequest(symbol=BTC, side=side, type=OrderType.MARKET, sz=Decimal(1), clOrdId=cl)


def fill_orders(client: ExchangeClient, clock: ManualClock, n: int) -> list[str]:
    """``n`` filled market orders, 1 s apart, alternating buy and sell; their clOrdIds."""
    ids = []
    for i in range(n):
        side = OrderSide.BUY if i % 2 == 0 else OrderSide.SELL
        (result,) = client.place_orders([market(side, f"h-{i:02d}")])
        assert result.code == 200, result
        ids.append(f"h-{i:02d}")
        clock.advance(1000)
    return ids


def test_order_history_pages_back_and_forth_without_repeats(
    client: ExchangeClient, clock: ManualClock
) -> None:
    placed = fill_orders(client, clock, 25)
    first = client.order_history()
    assert len(first) == 10  # the default page size
    assert [o.clOrdId for o in first] == placed[::-1][:10]  # newest first
    second = client.order_history(OrderQuery(from_id=first[-1].ordId, direct="NEXT", limit=10))
    third = client.order_history(OrderQuery(from_id=second[-1].ordId, direct="NEXT", limit=10))
    seen = [o.clOrdId for o in first + second + third]
    assert len(third) == 5
    assert seen == placed[::-1]
    back = client.order_history(OrderQuery(from_id=second[0].ordId, direct="PREV", limit=10))
    assert [o.ordId for o in back] == [o.ordId for o in first]
    assert {o.state for o in first} == {OrderHistoryState.FILLED}


def test_fills_page_by_record_id(client: ExchangeClient, clock: ManualClock) -> None:
    fill_orders(client, clock, 12)
    page1 = client.fills(FillQuery(limit=5))
    page2 = client.fills(FillQuery(from_id=page1[-1].id, limit=5))
    page3 = client.fills(FillQuery(from_id=page2[-1].id, limit=5))
    ids = [f.id for f in page1 + page2 + page3]
    assert len(ids) == len(set(ids)) == 12


def test_page_size_above_100_is_refused_on_both_sides(client: ExchangeClient, raw: Raw) -> None:
    assert len(client.order_history(OrderQuery(limit=100))) == 0
    with pytest.raises(RequestValidationError):
        client.order_history(OrderQuery(limit=101))
    answer = raw("GET", "/v3/trade/order/history", params={"limit": "101"}).json()
    assert answer["code"] == 400


def test_cancelled_api_order_without_fills_is_visible_for_5_hours_only(
    client: ExchangeClient, clock: ManualClock
) -> None:
    resting = OrderRequest(
        symbol=BTC,
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(59000),
        clOrdId="gone-soon",
    )
    assert client.place_orders([resting])[0].code == 200
    client.place_orders([market(OrderSide.BUY, "stays")])
    assert client.cancel_order(BTC, cl_ord_id="gone-soon").code == 200
    (cancelled,) = client.order_history(OrderQuery(cl_ord_id="gone-soon"))
    assert cancelled.state is OrderHistoryState.CANCELED
    clock.advance(5 * HOUR - 60_000)
    assert len(client.order_history(OrderQuery(cl_ord_id="gone-soon"))) == 1
    clock.advance(120_000)
    assert client.order_history(OrderQuery(cl_ord_id="gone-soon")) == []
    assert len(client.order_history(OrderQuery(cl_ord_id="stays"))) == 1


def test_default_window_is_the_last_90_days(client: ExchangeClient, clock: ManualClock) -> None:
    client.place_orders([market(OrderSide.BUY, "old")])
    placed_at = clock.now_ms()
    clock.advance(91 * DAY)
    assert client.order_history(OrderQuery(cl_ord_id="old")) == []
    found = client.order_history(
        OrderQuery(cl_ord_id="old", start=placed_at - 1, end=placed_at + 1)
    )
    assert [o.clOrdId for o in found] == ["old"]


def test_history_filters_by_side_and_state(client: ExchangeClient, clock: ManualClock) -> None:
    fill_orders(client, clock, 6)
    sells = client.order_history(OrderQuery(side=OrderSide.SELL))
    assert len(sells) == 3
    assert {o.side for o in sells} == {OrderSide.SELL}
    assert client.order_history(OrderQuery(state=OrderHistoryState.CANCELED)) == []


def test_closing_a_position_writes_position_history(
    client: ExchangeClient, clock: ManualClock
) -> None:
    client.place_orders([market(OrderSide.BUY, "open")])
    clock.advance(1000)
    client.place_orders([market(OrderSide.SELL, "close")])
    (record,) = client.position_history(PositionQuery(symbol=BTC))
    assert record.symbol == BTC
    assert record.closedQty == Decimal(1)
    assert client.open_positions(BTC) == []
