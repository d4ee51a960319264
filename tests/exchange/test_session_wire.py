"""The session hands its transport exactly the request ``httpx.Client`` would build and send:
same method, address, headers (the client's defaults first, in order), body and timeout — the
session skips the client's per-request machinery (issue 20), not any of what goes on the wire.
Cookies an answer sets are sent back, as the client would."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from pydantic import SecretStr

from botkit import __version__
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.live.session import Session

from . import payloads as wire

BASE = "https://fake.exchange.test"
T0 = 1_700_000_000_000


_ANSWERS: dict[str, object] = {
    "/v3/market/limitPrice": [{"symbol": "BTC_USDT_PERP", "buyLmt": "85000", "sellLmt": "77000"}],
    "/v3/trade/orders": [{"clOrdId": "a-1", "ordId": "1", "code": 200, "msg": "Success"}],
    "/v3/account/balance": wire.BALANCE,
    "/v3/trade/order": {"clOrdId": "a-1", "ordId": "1"},
    "/v3/position/leverage": {},
}


class Recording(httpx.BaseTransport):
    """Answers each request with a success and keeps what it received."""

    def __init__(self, set_cookie: str = "") -> None:
        self.seen: list[httpx.Request] = []
        self.set_cookie = set_cookie

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.seen.append(request)
        data = _ANSWERS[request.url.path]
        headers = {"set-cookie": self.set_cookie} if self.set_cookie else {}
        body = {"code": 200, "msg": "Success", "data": data}
        return httpx.Response(200, json=body, headers=headers)


def _client(transport: httpx.BaseTransport) -> ExchangeClient:
    clock = ClockSync(local=lambda: T0, interval_ms=0)
    clock.set_offset(0)
    return ExchangeClient(
        BASE, key="k", secret=SecretStr("s"), passphrase=SecretStr("p"), clock=clock,
        transport=transport,
    )  # fmt: skip


def _built_by_httpx_client(sent: httpx.Request) -> httpx.Request:
    """What ``httpx.Client(headers=<botkit's>).build_request`` makes of the request's own
    headers (those that are not the client's defaults), address and body."""
    reference = httpx.Client(
        headers={"User-Agent": f"botkit/{__version__}", "Accept": "application/json"}
    )
    defaults = {k.lower() for k, _ in reference.headers.raw} | {b"host", b"content-length"}
    own = [(k.decode(), v.decode()) for k, v in sent.headers.raw if k.lower() not in defaults]
    built = reference.build_request(
        sent.method, str(sent.url), headers=own, content=sent.content or None
    )
    reference.close()
    return built


@pytest.mark.parametrize("routing", [True, False], ids=["own-path", "httpx-without-routing"])
def test_the_session_sends_what_httpx_client_would_build_and_send(
    routing: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not routing:  # an httpx without the private routing the session relies on: its own path
        monkeypatch.delattr(httpx.Client, "_transport_for_url")
    transport = Recording()
    client = _client(transport)
    monkeypatch.undo()  # httpx's own send needs it back (the session chose at construction)
    client.limit_price("BTC_USDT_PERP")  # unsigned GET with a query
    order = OrderRequest(
        symbol="BTC_USDT_PERP", side=OrderSide.BUY, type=OrderType.LIMIT, sz=Decimal(1),
        px=Decimal("59000.5"), clOrdId="a-1",
    )  # fmt: skip
    client.place_orders([order])  # signed POST with a body
    client.balance()  # signed GET
    client.cancel_order("BTC_USDT_PERP", cl_ord_id="a-1")  # signed DELETE with a body
    if not routing:
        monkeypatch.delattr(httpx.Client, "_transport_for_url")
    session = Session(
        BASE, key="k", secret=SecretStr("s"), passphrase=SecretStr("p"), signing="v3",
        clock=client.clock, transport=transport,
    )  # fmt: skip
    monkeypatch.undo()
    session.request("POST", "/v3/position/leverage", signed=False)  # a POST without a body
    session.close()
    assert [r.method for r in transport.seen] == ["GET", "POST", "GET", "DELETE", "POST"]
    for sent in transport.seen:
        built = _built_by_httpx_client(sent)
        assert str(sent.url) == str(built.url)
        assert sent.headers.raw == built.headers.raw  # names, values and order
        assert sent.content == built.content
        assert sent.extensions["timeout"] == httpx.Timeout(10.0).as_dict()
    assert transport.seen[-1].headers["content-length"] == "0"
    post = transport.seen[1]
    assert post.headers["content-type"] == "application/json"
    assert post.headers["signatureMethod"] == "hmacSHA256"
    assert b'"clOrdId":"a-1"' in post.content


def test_a_cookie_the_exchange_sets_is_sent_back_like_httpx_client_does() -> None:
    transport = Recording(set_cookie="edge=abc123; Path=/")
    client = _client(transport)
    client.limit_price("BTC_USDT_PERP")
    client.limit_price("BTC_USDT_PERP")
    first, second = transport.seen
    assert "cookie" not in first.headers
    assert second.headers["cookie"] == "edge=abc123"


def test_a_closed_client_sends_nothing() -> None:
    transport = Recording()
    client = _client(transport)
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.limit_price("BTC_USDT_PERP")
    assert transport.seen == []
