"""Every endpoint through the client's public API: what is sent, and what comes back typed."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from botkit.exchange.models import (
    InstrumentStatus,
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
)
from botkit.exchange.port import ExchangePort
from botkit.exchange.queries import FillQuery, OrderQuery, PositionQuery
from botkit.live.client import ExchangeClient

from . import payloads as wire
from .conftest import T0, ClientFactory, FakeExchange, Seen, envelope


def _order(cl: str = "c-1", **kw: object) -> OrderRequest:
    fields: dict[str, object] = {
        "symbol": "BTC_USDT_PERP",
        "side": OrderSide.BUY,
        "type": OrderType.LIMIT,
        "sz": Decimal("1"),
        "px": Decimal("80000.5"),
        "clOrdId": cl,
    }
    fields.update(kw)
    return OrderRequest.model_validate(fields)


def test_client_implements_the_exchange_port(client: ExchangeClient) -> None:
    port: ExchangePort = client  # mypy checks every signature against the protocol
    assert isinstance(port, ExchangePort)


# --- reference data ------------------------------------------------------------------------


def test_server_time_reads_bare_and_enveloped_answers(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    assert client.server_time() == T0
    fake.on("GET", "/timestamp", {"serverTime": "1700000000123"})
    assert client.server_time() == T0 + 123


def test_reference_paths_are_unsigned(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/markets", [wire.MARKET])
    markets = client.markets()
    assert markets[0].symbol == "BTC_USDT"
    assert markets[0].symbolTradeLimit is not None
    assert markets[0].symbolTradeLimit.minQuantity == Decimal("0.000001")
    assert fake.requests("/markets")[0].scheme is None


def test_market_by_symbol_accepts_an_object_without_envelope(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    import httpx

    fake.on("GET", "/markets/BTC_USDT", lambda _s: httpx.Response(200, json=wire.MARKET))
    assert client.market("BTC_USDT").crossMargin is not None


def test_currencies_are_flattened_with_the_key_as_name(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/currencies", [wire.CURRENCY_V1])
    (btc,) = client.currencies(include_multi_chain=True)
    assert btc.name == "BTC"
    assert btc.model_extra == {"fullName": "Bitcoin"}
    assert btc.withdrawalFee == Decimal("0.0005")
    assert fake.requests("/currencies")[0].query == {"includeMultiChainCurrencies": "true"}


def test_currency_by_name_and_v2_views(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/currencies/BTC", wire.CURRENCY_V1)
    fake.on("GET", "/v2/currencies", [wire.CURRENCY_V2])
    fake.on("GET", "/v2/currencies/BTC", wire.CURRENCY_V2)
    assert client.currency("BTC").id == 28
    assert fake.requests("/currencies/BTC")[0].raw_query == ""
    assert client.currencies_v2()[0].networkList[0].withdrawMin == Decimal("0.0001")
    assert client.currency_v2("BTC").coin == "BTC"


# --- market data ---------------------------------------------------------------------------


def test_instruments_parse_limits_as_decimals(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/market/allInstruments", [wire.INSTRUMENT])
    (inst,) = client.instruments("BTC_USDT_PERP")
    assert (inst.tSz, inst.lotSz, inst.ctVal) == (Decimal("0.01"), Decimal(1), Decimal("0.001"))
    assert inst.status is InstrumentStatus.OPEN
    seen = fake.requests("/v3/market/allInstruments")[0]
    assert seen.query == {"symbol": "BTC_USDT_PERP"}
    assert seen.scheme is None


def test_tickers_one_symbol_as_object_come_back_as_a_list(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/market/tickers", wire.TICKER)
    (ticker,) = client.tickers("BTC_USDT_PERP")
    assert ticker.mPx == Decimal("81000.25")
    assert ticker.cT == 1700086400000


def test_mark_index_and_funding(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/market/markPrice", {"s": "BTC_USDT_PERP", "mPx": "81000.1"})
    fake.on("GET", "/v3/market/indexPrice", [{"s": "BTC_USDT_PERP", "iPx": "80999"}])
    fake.on(
        "GET",
        "/v3/market/fundingRate",
        [{"s": "X", "fR": "-0.0001", "fT": "1700000000000", "nFR": "0.0001", "nFT": 1}],
    )
    assert client.mark_prices("BTC_USDT_PERP")[0].mPx == Decimal("81000.1")
    assert client.index_prices()[0].iPx == Decimal("80999")
    funding = client.funding_rates()[0]
    assert (funding.fR, funding.fT) == (Decimal("-0.0001"), 1700000000000)


def test_candles_map_the_row_order_and_come_oldest_first(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    later = ["79000", "80500", "80000", "80100", "8010", "0.1", 3, 1700000060000, 1700000119999]
    first = ["78000", "79500", "79000", "79100", "7910", "0.1", 2, "1700000000000", "1700000059999"]
    fake.on("GET", "/v3/market/candles", [later, first])
    candles = client.candles("BTC_USDT_PERP", "minute_1", start=1, end=2, limit=2)
    assert [c.sT for c in candles] == [1700000000000, 1700000060000]
    c = candles[1]
    assert (c.low, c.high, c.open, c.close) == (
        Decimal("79000"),
        Decimal("80500"),
        Decimal("80000"),
        Decimal("80100"),
    )
    assert fake.requests("/v3/market/candles")[0].query == {
        "symbol": "BTC_USDT_PERP",
        "interval": "MINUTE_1",
        "sTime": "1",
        "eTime": "2",
        "limit": "2",
    }


def test_limit_price_picks_the_band_of_the_symbol(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on(
        "GET",
        "/v3/market/limitPrice",
        [{"symbol": "BTC_USDT_PERP", "buyLmt": "85000", "sellLmt": "77000"}],
    )
    band = client.limit_price("BTC_USDT_PERP")
    assert (band.buyLmt, band.sellLmt) == (Decimal("85000"), Decimal("77000"))


def test_order_book_and_risk_limit(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on(
        "GET",
        "/v3/market/orderBook",
        {"s": "BTC_USDT_PERP", "asks": [["81001", "7"]], "bids": [["81000", "10"]], "ts": 5},
    )
    fake.on("GET", "/v3/market/riskLimit", [wire.RISK_TIER])
    book = client.order_book("BTC_USDT_PERP", limit=5)
    assert book.asks == [[Decimal("81001"), Decimal("7")]]
    assert fake.requests("/v3/market/orderBook")[0].query == {
        "symbol": "BTC_USDT_PERP",
        "limit": "5",
    }
    (tier,) = client.risk_limit("BTC_USDT_PERP", mgn_mode="cross")
    assert tier.maxLever == Decimal(75)
    assert fake.requests("/v3/market/riskLimit")[0].query["mgnMode"] == "CROSS"


# --- account -------------------------------------------------------------------------------


def test_balance_is_signed_and_decimal(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/account/balance", wire.BALANCE)
    balance = client.balance()
    assert balance.eq == Decimal("10003.25")
    assert balance.details[0].avail == Decimal("9962.75")
    assert fake.requests("/v3/account/balance")[0].scheme == client.signing


def test_open_positions(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/trade/position/opens", [wire.POSITION])
    (pos,) = client.open_positions("BTC_USDT_PERP")
    assert (pos.qty, pos.lastPx) == (Decimal(5), Decimal(81001))


def test_open_orders_walks_every_page(fake: FakeExchange, client: ExchangeClient) -> None:
    def page(seen: Seen) -> list[dict[str, object]]:
        start = int(seen.query.get("from", "0"))
        ids = range(start + 1, min(start + 100, 150) + 1)
        return [{**wire.OPEN_ORDER, "ordId": str(i)} for i in ids]

    fake.on("GET", "/v3/trade/order/opens", page)
    orders = client.open_orders("BTC_USDT_PERP", side="sell")
    assert [o.ordId for o in orders] == [str(i) for i in range(1, 151)]
    queries = [s.query for s in fake.requests("/v3/trade/order/opens")]
    assert queries[0] == {
        "symbol": "BTC_USDT_PERP",
        "side": "SELL",
        "limit": "100",
        "direct": "NEXT",
    }
    assert queries[1]["from"] == "100"


def test_order_details_by_client_id(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/trade/order/details", [wire.OPEN_ORDER])
    assert client.order_details(cl_ord_id="r1-0").px == Decimal(90000)
    assert fake.requests("/v3/trade/order/details")[0].query == {"clOrdId": "r1-0"}


def test_history_queries_send_filters_and_paging(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/trade/order/history", [wire.ORDER])
    fake.on("GET", "/v3/trade/order/trades", [wire.FILL])
    fake.on("GET", "/v3/trade/position/history", [wire.POSITION_HISTORY])
    (order,) = client.order_history(OrderQuery(
        symbol="BTC_USDT_PERP", state="filled", start=1, end=2, from_id="9", limit=100,
        direct="PREV",
    ))  # fmt: skip
    assert order.execAmt == Decimal("81.13013")
    assert fake.requests("/v3/trade/order/history")[0].query == {
        "symbol": "BTC_USDT_PERP",
        "state": "FILLED",
        "sTime": "1",
        "eTime": "2",
        "from": "9",
        "limit": "100",
        "direct": "PREV",
    }
    (fill,) = client.fills(FillQuery(ord_id="418890767248232148"))
    assert (fill.qty, fill.feeRate) == (Decimal(2), Decimal("0.0002"))
    (pos,) = client.position_history(PositionQuery(mgn_mode=MarginMode.CROSS, pos_side="both"))
    assert pos.pnl == Decimal("-3.5")
    assert fake.requests("/v3/trade/position/history")[0].query == {
        "mgnMode": "CROSS",
        "posSide": "BOTH",
    }


def test_position_mode_get_and_set(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/position/mode", {"posMode": "HEDGE"})
    fake.on("POST", "/v3/position/mode", None)
    assert client.position_mode() is PositionMode.HEDGE
    client.set_position_mode("one_way")
    assert fake.requests("/v3/position/mode")[1].json() == {"posMode": "ONE_WAY"}


def test_leverages_and_set_leverage(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on(
        "GET",
        "/v3/position/leverages",
        [{"symbol": "BTC_USDT_PERP", "lever": "20", "mgnMode": "ISOLATED", "posSide": "LONG"}],
    )
    fake.on("POST", "/v3/position/leverage", {"lever": "10"})
    assert client.leverages("BTC_USDT_PERP")[0].lever == Decimal(20)
    client.set_leverage("BTC_USDT_PERP", 10, mgn_mode="isolated", pos_side=PosSide.LONG)
    assert fake.requests("/v3/position/leverage")[0].json() == {
        "symbol": "BTC_USDT_PERP",
        "lever": "10",
        "mgnMode": "ISOLATED",
        "posSide": "LONG",
    }


# --- trading -------------------------------------------------------------------------------


def test_batch_placement_returns_one_result_per_order(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on(
        "POST",
        "/v3/trade/orders",
        [
            {"clOrdId": "c-1", "ordId": "111111111111111111", "code": 200, "msg": "Success"},
            {"clOrdId": "c-2", "ordId": "", "code": "10014", "msg": "price limit 1 ~ 2"},
        ],
    )
    results = client.place_orders([_order("c-1"), _order("c-2", side=OrderSide.SELL)])
    assert [(r.clOrdId, r.accepted, r.code) for r in results] == [
        ("c-1", True, 200),
        ("c-2", False, 10014),
    ]
    body = fake.requests("/v3/trade/orders")[0].json()
    assert [o["side"] for o in body] == ["BUY", "SELL"]
    assert body[0]["px"] == "80000.5"


def test_single_order_placement(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("POST", "/v3/trade/order", {"ordId": "222222222222222222", "clOrdId": "c-9"})
    result = client.place_order(_order("c-9", type=OrderType.MARKET, px=None))
    assert (result.ordId, result.accepted) == ("222222222222222222", True)
    assert "px" not in fake.requests("/v3/trade/order")[0].json()


def test_cancels_single_batch_and_all(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("DELETE", "/v3/trade/order", {"ordId": "1", "clOrdId": "c-1"})
    fake.on("DELETE", "/v3/trade/batchOrders", [{"ordId": "1", "code": 200}, {"ordId": "2"}])
    fake.on("DELETE", "/v3/trade/allOrders", [{"ordId": "3", "clOrdId": "x"}])
    assert client.cancel_order("BTC_USDT_PERP", cl_ord_id="c-1").ordId == "1"
    assert len(client.cancel_orders("BTC_USDT_PERP", ord_ids=["1", "2"])) == 2
    assert client.cancel_all("BTC_USDT_PERP", side="buy")[0].clOrdId == "x"
    bodies = [s.json() for s in fake.seen if s.method == "DELETE"]
    assert bodies == [
        {"symbol": "BTC_USDT_PERP", "clOrdId": "c-1"},
        {"symbol": "BTC_USDT_PERP", "ordIds": ["1", "2"]},
        {"symbol": "BTC_USDT_PERP", "side": "BUY"},
    ]
    assert all(s.raw_query == "" for s in fake.seen if s.method == "DELETE")


def test_legacy_auto_deposit_toggle_is_deprecated_and_pf_signed(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    import httpx

    path = "/api/v1/position/margin/auto-deposit-status"
    fake.on("POST", path, lambda _s: httpx.Response(200, json={"code": "200000", "data": True}))
    client = make_client("v3")
    with pytest.warns(DeprecationWarning, match="abandoned"):
        client.set_auto_deposit_status("BTC_USDT_PERP", True)
    seen = fake.requests(path)[0]
    assert seen.scheme == "pf"
    assert seen.json() == {"symbol": "BTC_USDT_PERP", "status": True}


def test_request_context_and_recv_window(fake: FakeExchange, make_client: ClientFactory) -> None:
    fake.on("GET", "/v3/account/balance", copy.deepcopy(wire.BALANCE))
    make_client("v3", recv_window=3000).balance()
    assert fake.requests("/v3/account/balance")[0].headers["recvwindow"] == "3000"


def test_envelope_helper_shape() -> None:
    assert envelope([1]) == {"code": 200, "msg": "Success", "data": [1]}
