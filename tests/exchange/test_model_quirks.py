"""The payload quirks the spec lists, read through the client: tolerated or refused."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest

from botkit.errors import MalformedResponse
from botkit.exchange.models import InstrumentStatus, OrderHistoryState, StpMode
from botkit.live.client import ExchangeClient

from . import payloads as wire
from .conftest import FakeExchange


def test_reduce_only_as_string_and_empty_stp_mode(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on(
        "GET",
        "/v3/trade/order/history",
        [{**wire.ORDER, "reduceOnly": "true"}, {**wire.ORDER, "ordId": "2"}],
    )
    first, second = client.order_history()
    assert (first.reduceOnly, second.reduceOnly) == (True, False)
    assert first.stpMode is StpMode.NONE
    assert first.state is OrderHistoryState.FILLED


def test_times_as_strings_or_numbers(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on(
        "GET",
        "/v3/trade/order/trades",
        [{**wire.FILL, "cTime": "1732183206181"}, {**wire.FILL, "id": "2", "cTime": 1732183206181}],
    )
    assert {f.cTime for f in client.fills()} == {1732183206181}


def test_instrument_status_string_lot_size_integer_and_both_lever_spellings(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on(
        "GET",
        "/v3/market/allInstruments",
        [
            {**wire.INSTRUMENT, "status": "CANCEL_ONLY", "lotSz": 10},
            {**{k: v for k, v in wire.INSTRUMENT.items() if k != "maxLever"}, "maxlever": "50"},
        ],
    )
    first, second = client.instruments()
    assert first.status is InstrumentStatus.CANCEL_ONLY
    assert first.lotSz == Decimal(10)
    assert (first.maxLever, second.maxLever) == (Decimal(75), Decimal(50))


def test_risk_tier_accepts_max_lever_in_either_spelling(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    camel = {**{k: v for k, v in wire.RISK_TIER.items() if k != "maxlever"}, "maxLever": "20"}
    fake.on("GET", "/v3/market/riskLimit", [wire.RISK_TIER, camel])
    assert [t.maxLever for t in client.risk_limit("BTC_USDT_PERP")] == [Decimal(75), Decimal(20)]


def test_unknown_fields_are_kept(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/trade/order/history", [{**wire.ORDER, "brandNew": "x"}])
    (order,) = client.order_history()
    assert order.model_extra is not None
    assert order.model_extra["brandNew"] == "x"
    assert order.model_extra["slTrgPx"] == ""


def test_amounts_never_pass_through_float(fake: FakeExchange, client: ExchangeClient) -> None:
    body = b'{"code":200,"msg":"Success","data":{"eq":0.1000000000000000055511151231257827}}'
    fake.on("GET", "/v3/account/balance", lambda _s: httpx.Response(200, content=body))
    assert client.balance().eq == Decimal("0.1000000000000000055511151231257827")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"code":200,"msg":"Success","data":[{"s":"X","mPx":NaN}]}',
        b'{"code":200,"msg":"Success","data":[{"s":"X","mPx":Infinity}]}',
        b'{"code":200,"msg":"Success","data":[{"s":"X","mPx":"NaN"}]}',
        b'{"code":200,"msg":"Success","data":[{"s":"X","mPx":"-1.5"}]}',
    ],
)
def test_nan_infinity_and_negative_prices_are_refused(
    fake: FakeExchange, client: ExchangeClient, raw: bytes
) -> None:
    fake.on("GET", "/v3/market/markPrice", lambda _s: httpx.Response(200, content=raw))
    with pytest.raises(MalformedResponse, match="MarkPrice"):
        client.mark_prices()


def test_negative_order_size_is_refused(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/trade/order/opens", [{**wire.OPEN_ORDER, "sz": "-3"}])
    with pytest.raises(MalformedResponse, match=r"0\.sz"):
        client.open_orders_page()


def test_candle_row_too_short_is_malformed(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/market/candles", [["1", "2", "3"]])
    with pytest.raises(MalformedResponse, match="candle row has 3 fields"):
        client.candles("BTC_USDT_PERP", "HOUR_1")
