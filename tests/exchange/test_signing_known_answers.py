# ruff: noqa: E501 - the openssl commands are kept whole so they can be pasted into a shell
"""Known answers for both signing schemes, computed independently with openssl.

Each expected value was produced by the shell command in the comment above it (``printf '%b'``
turns ``\\n`` into a newline and leaves ``%`` alone). The requests go through the client's public
API and the fake exchange, so what is checked is what would be sent.
"""

from __future__ import annotations

from decimal import Decimal

from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.exchange.queries import OrderQuery
from botkit.exchange.signing import sign, v3_string_to_sign

from .conftest import T0, ClientFactory, FakeExchange

BODY = (
    '[{"symbol":"BTC_USDT_PERP","side":"BUY","mgnMode":"CROSS","posSide":"BOTH",'
    '"type":"LIMIT","sz":"2","clOrdId":"kat-1","px":"25000.5"}]'
)


def _order() -> OrderRequest:
    return OrderRequest(
        symbol="BTC_USDT_PERP",
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal("2"),
        px=Decimal("25000.5"),
        clOrdId="kat-1",
    )


def test_notes_v3_get_known_answer_reproduces_through_the_client(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    fake.on("GET", "/v3/trade/order/opens", [])
    make_client("v3").open_orders_page("BTC_USDT_PERP", limit=10)
    seen = fake.requests("/v3/trade/order/opens")[0]
    assert seen.timestamp == T0
    assert seen.raw_query == "limit=10&symbol=BTC_USDT_PERP"
    # printf '%b' 'GET\n/v3/trade/order/opens\nlimit=10&signTimestamp=1700000000000&symbol=BTC_USDT_PERP' \
    #   | openssl dgst -sha256 -hmac 'test-secret' -binary | base64
    assert seen.headers["signature"] == "3jdJvgYR1f/zFJfj9GSuYUNF9L8arsLJoQrQXHd6Fi4="


def test_notes_v3_post_without_body_known_answer() -> None:
    text = v3_string_to_sign(T0, "POST", "/v3/trade/positionAll", {}, "")
    assert text == "POST\n/v3/trade/positionAll\nsignTimestamp=1700000000000"
    # printf '%b' 'POST\n/v3/trade/positionAll\nsignTimestamp=1700000000000' \
    #   | openssl dgst -sha256 -hmac 'test-secret' -binary | base64
    assert sign("test-secret", text) == "SSJRU34SNUhhXvTPtLsiRAcVu8NYYuZxBHr9Op46NkE="


def test_v3_get_query_with_characters_that_need_encoding(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    fake.on("GET", "/v3/trade/order/history", [])
    make_client("v3").order_history(OrderQuery(cl_ord_id="a b&c/d", symbol="café ~x"))
    seen = fake.requests("/v3/trade/order/history")[0]
    assert seen.raw_query == "clOrdId=a%20b%26c%2Fd&symbol=caf%C3%A9%20~x"
    # printf '%b' 'GET\n/v3/trade/order/history\nclOrdId=a%20b%26c%2Fd&signTimestamp=1700000000000&symbol=caf%C3%A9%20~x' \
    #   | openssl dgst -sha256 -hmac 'test-secret' -binary | base64
    assert seen.headers["signature"] == "EYmS5TG8QK4c4vGVwvA7eZtjV/HuUdZekSwqkyzQAg4="


def test_pf_get_query_with_characters_that_need_encoding(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    fake.on("GET", "/v3/trade/order/history", [])
    make_client("pf").order_history(OrderQuery(cl_ord_id="a b&c/d", symbol="café ~x"))
    seen = fake.requests("/v3/trade/order/history")[0]
    assert seen.headers["pf-api-timestamp"] == str(T0)
    assert seen.headers["pf-api-passphrase"] == "test-pass"
    # printf '%b' '1700000000000GET/v3/trade/order/history?clOrdId=a%20b%26c%2Fd&symbol=caf%C3%A9%20~x' \
    #   | openssl dgst -sha256 -hmac 'test-secret' -binary | base64
    assert seen.headers["pf-api-sign"] == "mmqM1aroEpihbyMnw9RA8rzYdw5s9BxPjGV9Y2jU3yE="


def test_v3_post_body_is_signed_and_sent_byte_for_byte(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    fake.on("POST", "/v3/trade/orders", [{"clOrdId": "kat-1", "ordId": "1", "code": 200}])
    make_client("v3").place_orders([_order()])
    seen = fake.requests("/v3/trade/orders")[0]
    assert seen.body.decode() == BODY
    assert seen.headers["content-type"] == "application/json"
    # B='[{"symbol":"BTC_USDT_PERP","side":"BUY","mgnMode":"CROSS","posSide":"BOTH","type":"LIMIT","sz":"2","clOrdId":"kat-1","px":"25000.5"}]'
    # printf '%b' "POST\n/v3/trade/orders\nrequestBody=$B&signTimestamp=1700000000000" \
    #   | openssl dgst -sha256 -hmac 'test-secret' -binary | base64
    assert seen.headers["signature"] == "s+RSliUvOaTwJwq8wXCXdTmjRYbXU0dWjTQqBBz6MPQ="


def test_pf_post_body_is_signed_and_sent_byte_for_byte(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    fake.on("POST", "/v3/trade/orders", [{"clOrdId": "kat-1", "ordId": "1", "code": 200}])
    make_client("pf").place_orders([_order()])
    seen = fake.requests("/v3/trade/orders")[0]
    assert seen.body.decode() == BODY
    # printf '%b' "1700000000000POST/v3/trade/orders$B" \
    #   | openssl dgst -sha256 -hmac 'test-secret' -binary | base64      (B as above)
    assert seen.headers["pf-api-sign"] == "550lHdnbLWaIzPksNkZYlKlinlJb0En3hGA1N2uQEyY="
