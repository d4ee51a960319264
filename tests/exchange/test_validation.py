"""Bad parameters are refused before the request leaves: nothing reaches the exchange."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from botkit.errors import RequestValidationError
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.exchange.queries import FillQuery, OrderQuery, PositionQuery
from botkit.live.client import ExchangeClient

from .conftest import FakeExchange


def _orders(n: int) -> list[OrderRequest]:
    return [
        OrderRequest(
            symbol="BTC_USDT_PERP",
            side=OrderSide.BUY,
            type=OrderType.MARKET,
            sz=Decimal(1),
            clOrdId=f"c-{i}",
        )
        for i in range(n)
    ]


Call = Callable[[ExchangeClient], Any]

CASES: list[tuple[str, Call, str]] = [
    ("batch of 11", lambda c: c.place_orders(_orders(11)), "11 items, at most 10"),
    ("empty batch", lambda c: c.place_orders([]), "empty batch"),
    (
        "cancel 11",
        lambda c: c.cancel_orders(
            "X", ord_ids=[str(i) for i in range(6)], cl_ord_ids=list("abcde")
        ),
        "at most 10",
    ),
    ("limit 101", lambda c: c.order_history(OrderQuery(limit=101)), "limit 101 is outside 1..100"),
    ("limit 0", lambda c: c.fills(FillQuery(limit=0)), "limit 0 is outside 1..100"),
    ("candle limit 101", lambda c: c.candles("X", "HOUR_1", limit=101), "outside 1..100"),
    (
        "side word",
        lambda c: c.order_history(OrderQuery(side="HOLD")),
        "side 'HOLD' is not one of BUY, SELL",
    ),
    ("state word", lambda c: c.order_history(OrderQuery(state="NEW")), "state 'NEW' is not one of"),
    ("type word", lambda c: c.order_history(OrderQuery(type="STOP")), "type 'STOP' is not one of"),
    (
        "mgn mode",
        lambda c: c.position_history(PositionQuery(mgn_mode="PORTFOLIO")),
        "mgn_mode 'PORTFOLIO'",
    ),
    ("pos side", lambda c: c.position_history(PositionQuery(pos_side="UP")), "pos_side 'UP'"),
    ("direct", lambda c: c.fills(FillQuery(direct="SIDEWAYS")), "direct 'SIDEWAYS' is not one of"),  # type: ignore[arg-type]
    ("interval", lambda c: c.candles("X", "MINUTE_2"), "interval 'MINUTE_2' is not one of"),
    ("book depth", lambda c: c.order_book("X", limit=7), "limit 7 is not one of 5, 10"),
    ("mode word", lambda c: c.set_position_mode("BOTH_WAYS"), "mode 'BOTH_WAYS'"),
    ("empty symbol", lambda c: c.limit_price("  "), "symbol is required"),
    ("empty risk symbol", lambda c: c.risk_limit(""), "symbol is required"),
    ("empty candle symbol", lambda c: c.candles("", "HOUR_1"), "symbol is required"),
    ("blank optional", lambda c: c.tickers(""), "symbol must not be empty"),
    (
        "start after end",
        lambda c: c.fills(FillQuery(start=2, end=1)),
        "start time 2 is after end time 1",
    ),
    ("negative time", lambda c: c.order_history(OrderQuery(start=-1)), "start time -1"),
    ("cancel no id", lambda c: c.cancel_order("X"), "needs ord_id or cl_ord_id"),
    ("details no id", lambda c: c.order_details(), "needs ord_id or cl_ord_id"),
    ("lever 0", lambda c: c.set_leverage("X", 0, mgn_mode="CROSS"), "lever 0"),
    ("set leverage mode", lambda c: c.set_leverage("X", 5, mgn_mode="NONE"), "mgn_mode 'NONE'"),
    ("cancel all side", lambda c: c.cancel_all("X", side="LONG"), "side 'LONG'"),
]


@pytest.mark.parametrize(("name", "call", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_parameters_never_leave(
    fake: FakeExchange, client: ExchangeClient, name: str, call: Call, message: str
) -> None:
    with pytest.raises(RequestValidationError, match=message) as info:
        call(client)
    assert "\n" not in str(info.value)
    assert fake.seen == []


def test_enum_words_in_any_case_are_accepted(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/trade/order/history", [])
    client.order_history(OrderQuery(side="sell", state="partially_canceled", type="limit_maker"))
    assert fake.requests("/v3/trade/order/history")[0].query == {
        "side": "SELL",
        "state": "PARTIALLY_CANCELED",
        "type": "LIMIT_MAKER",
    }
