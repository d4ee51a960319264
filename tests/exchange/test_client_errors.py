"""Every failure becomes one botkit error class with a one-line message and its context."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest

from botkit.errors import (
    AuthFailed,
    ConnectFailed,
    ExchangeError,
    ExchangeRejected,
    MalformedResponse,
    MalformedWriteResponse,
    NotFoundError,
    OutcomeUnknown,
    RateLimited,
    ReadTimedOut,
    ServerUnavailable,
    TimestampExpired,
)
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.live.client import ExchangeClient

from . import payloads as wire
from .conftest import KEY, PASSPHRASE, SECRET, ClientFactory, FakeExchange, Seen

HTML = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


def _reply(status: int, content: bytes, **headers: str) -> Any:
    return lambda _s: httpx.Response(status, content=content, headers=headers)


def _json(status: int, body: object, **headers: str) -> Any:
    return lambda _s: httpx.Response(status, json=body, headers=headers)


def _raise(exc: Exception) -> Any:
    def route(_seen: Seen) -> Any:
        raise exc

    return route


def _orders() -> list[OrderRequest]:
    return [
        OrderRequest(
            symbol="BTC_USDT_PERP",
            side=OrderSide.BUY,
            type=OrderType.LIMIT,
            sz=Decimal(1),
            px=Decimal(80000),
            clOrdId=f"c-{i}",
        )
        for i in range(2)
    ]


def _one_line_and_clean(exc: ExchangeError) -> None:
    text = f"{exc} {exc!r} {exc.context!r}"
    assert "\n" not in str(exc)
    for secret in (SECRET, PASSPHRASE, KEY):
        assert secret not in text


# --- answers that are not what they should be ----------------------------------------------


def test_html_error_page_on_a_read_is_malformed_with_status_and_excerpt(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/account/balance", _reply(200, HTML))
    with pytest.raises(MalformedResponse) as info:
        client.balance()
    assert not isinstance(info.value, OutcomeUnknown)
    assert info.value.context.http_status == 200
    assert "'<html><head><title>502 Bad Gateway" in str(info.value)
    assert "(HTTP 200)" in str(info.value)
    _one_line_and_clean(info.value)


def test_unreadable_answer_to_an_accepted_write_is_also_outcome_unknown(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("POST", "/v3/trade/orders", _reply(200, b'{"code":200,"msg":"Success","data":[{"cl'))
    with pytest.raises(MalformedWriteResponse) as info:
        client.place_orders(_orders())
    assert isinstance(info.value, OutcomeUnknown)
    assert info.value.context.client_order_ids == ("c-0", "c-1")
    assert "not JSON" in str(info.value)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"code":200,"msg":"Succ', "not JSON"),
        (b'{"result": []}', "no code/msg/data envelope"),
        (b'{"code": 200, "msg": "Success"}', "envelope without data"),
        (b'{"code": "abc", "msg": "x", "data": 1}', "is not a number"),
        (b"", "empty body"),
        (b"[1, 2]", "no code/msg/data envelope"),
    ],
)
def test_truncated_or_envelope_less_bodies_are_malformed(
    fake: FakeExchange, client: ExchangeClient, body: bytes, why: str
) -> None:
    fake.on("GET", "/v3/trade/position/opens", _reply(200, body))
    with pytest.raises(MalformedResponse, match=why):
        client.open_positions()


def test_payload_the_models_refuse_names_the_field(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/market/allInstruments", [{**wire.INSTRUMENT, "tSz": "-0.01"}])
    with pytest.raises(MalformedResponse, match=r"refused at 0\.tSz"):
        client.instruments()


# --- HTTP status and envelope codes --------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        (_reply(502, HTML), ServerUnavailable),
        (_json(500, {"code": 500, "msg": "system exception", "data": None}), ServerUnavailable),
        (_json(503, {"code": 503, "msg": "degraded"}), ServerUnavailable),
        (_json(200, {"code": 1002, "msg": "system maintenance", "data": None}), ServerUnavailable),
        (_json(200, {"code": "10001", "msg": "symbol does not exist", "data": None}), None),
        (_json(401, {"code": 401, "message": "Invalid Apikey or Signature"}), AuthFailed),
        (_json(403, {"code": 403, "msg": "access denied"}), AuthFailed),
        (_json(200, {"code": 11008, "msg": "order does not exist", "data": None}), NotFoundError),
        (_json(200, {"code": "21001", "msg": "position does not exist"}), NotFoundError),
        (_json(404, {"code": 404, "msg": "Not Found"}), NotFoundError),
    ],
)
def test_status_and_code_mapping(
    fake: FakeExchange, client: ExchangeClient, route: Any, expected: type[ExchangeError] | None
) -> None:
    fake.on("GET", "/v3/trade/order/details", route)
    with pytest.raises(ExchangeError) as info:
        client.order_details(ord_id="1")
    if expected is None:
        assert type(info.value) is ExchangeRejected
        assert (info.value.code, info.value.msg) == (10001, "symbol does not exist")
    else:
        assert isinstance(info.value, expected)
    _one_line_and_clean(info.value)


def test_an_expired_key_is_an_auth_failure_not_a_clock_problem(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/account/balance", _json(401, {"code": 401, "msg": "API key expired"}))
    with pytest.raises(AuthFailed):
        client.balance()


def test_message_field_is_read_when_msg_is_absent(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/account/balance", _json(401, {"code": 401, "message": "bad key"}))
    with pytest.raises(AuthFailed) as info:
        client.balance()
    assert (info.value.code, info.value.msg) == (401, "bad key")


def test_rate_limited_with_retry_after_seconds(fake: FakeExchange, client: ExchangeClient) -> None:
    fake.on("GET", "/v3/market/tickers", _reply(429, b"Too Many Requests", **{"Retry-After": "7"}))
    with pytest.raises(RateLimited) as info:
        client.tickers()
    assert info.value.retry_after == 7.0
    assert "retry after 7 s" in str(info.value)


def test_rate_limited_with_retry_after_http_date_uses_the_clock(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    # T0 = 2023-11-14 22:13:20 UTC; the answer asks to wait until 22:13:30.
    when = "Tue, 14 Nov 2023 22:13:30 GMT"
    fake.on("GET", "/v3/market/tickers", _json(429, {"code": 429}, **{"Retry-After": when}))
    with pytest.raises(RateLimited) as info:
        client.tickers()
    assert info.value.retry_after == 10.0


def test_rate_limited_by_envelope_code_without_header(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/market/tickers", _json(200, {"code": "429", "msg": "too many"}))
    with pytest.raises(RateLimited) as info:
        client.tickers()
    assert info.value.retry_after is None


# --- expired timestamps --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (
            400,
            {
                "code": 400,
                "msg": "Request expired: signTimestamp is more than 5000 ms from system time",
                "data": None,
            },
        ),
        (400, {"code": 400, "msg": "signTimestamp is more than 10000 ms from system time"}),
        (408, {"code": 408, "msg": "request timeout as recvWindow threshold has been breached"}),
        (408, {"code": 408}),
    ],
)
def test_expired_answers_are_one_condition(
    fake: FakeExchange, client: ExchangeClient, status: int, body: dict[str, Any]
) -> None:
    fake.on("GET", "/v3/account/balance", _json(status, body))
    with pytest.raises(TimestampExpired):
        client.balance()


def test_skewed_clock_expires_then_resync_recovers(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/account/balance", wire.BALANCE)
    client.balance()  # first signed request syncs the clock (offset 0)
    fake.skew_ms = 7_000  # the server's clock jumps 7 s ahead
    with pytest.raises(TimestampExpired):
        client.balance()
    sample = client.resync_clock()
    assert sample.offset_ms == 7_000
    assert client.balance().eq == Decimal("10003.25")
    assert fake.seen[-1].timestamp == fake.server_now()


# --- transport failures: reads repeat, writes are unknown ----------------------------------


@pytest.mark.parametrize(
    "exc",
    [httpx.ReadTimeout("timed out"), httpx.RemoteProtocolError("closed"), httpx.ReadError("x")],
)
def test_read_failures_on_get_are_repeatable(
    fake: FakeExchange, client: ExchangeClient, exc: Exception
) -> None:
    fake.on("GET", "/v3/trade/order/opens", _raise(exc))
    with pytest.raises(ReadTimedOut) as info:
        client.open_orders_page("BTC_USDT_PERP")
    assert info.value.context.query == {"symbol": "BTC_USDT_PERP"}
    assert isinstance(info.value.__cause__, httpx.TransportError)


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ReadTimeout("timed out"),
        httpx.WriteTimeout("timed out"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        httpx.ReadError("reset"),
        httpx.WriteError("broken pipe"),
    ],
)
def test_failures_after_a_write_left_are_outcome_unknown(
    fake: FakeExchange, client: ExchangeClient, exc: Exception
) -> None:
    fake.on("POST", "/v3/trade/orders", _raise(exc))
    with pytest.raises(OutcomeUnknown) as info:
        client.place_orders(_orders())
    assert "look the orders up" in str(info.value)
    assert info.value.context.client_order_ids == ("c-0", "c-1")
    _one_line_and_clean(info.value)


def test_cancel_that_loses_its_answer_is_outcome_unknown(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("DELETE", "/v3/trade/order", _raise(httpx.ReadTimeout("timed out")))
    with pytest.raises(OutcomeUnknown):
        client.cancel_order("BTC_USDT_PERP", cl_ord_id="c-0")


@pytest.mark.parametrize("exc", [httpx.ConnectError("refused"), httpx.ConnectTimeout("slow")])
@pytest.mark.parametrize("write", [False, True])
def test_connect_failures_never_left(
    fake: FakeExchange, client: ExchangeClient, exc: Exception, write: bool
) -> None:
    fake.on("GET", "/v3/trade/position/opens", _raise(exc))
    fake.on("POST", "/v3/trade/orders", _raise(exc))
    call = (lambda: client.place_orders(_orders())) if write else client.open_positions
    with pytest.raises(ConnectFailed):
        call()


def test_errors_never_show_credentials_even_when_signed(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    for scheme in ("v3", "pf"):
        client = make_client(scheme)
        fake.on("GET", "/v3/account/balance", _json(401, {"code": 401, "msg": "bad signature"}))
        with pytest.raises(AuthFailed) as info:
            client.balance()
        _one_line_and_clean(info.value)
        signature = fake.seen[-1].headers.get("signature") or fake.seen[-1].headers["pf-api-sign"]
        assert signature not in f"{info.value} {info.value!r}"
