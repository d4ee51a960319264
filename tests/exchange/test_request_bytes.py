"""Every request the client sends is, byte for byte, the one the plain way builds: the body
written by ``json.dumps``, signed by ``hmac`` with the headers of :func:`v3_headers` /
:func:`pf_headers`, built by ``httpx.Client.build_request`` (issue 20: the client writes an
order batch from each order's kept text, signs with the key hashed once and hands httpx its
headers already normalised). Two requests are also pinned as golden bytes."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit import __version__
from botkit.errors import (
    AuthFailed,
    ConnectFailed,
    ExchangeRejected,
    MalformedResponse,
    MalformedWriteResponse,
    OutcomeUnknown,
    RateLimited,
    ServerUnavailable,
    TimestampExpired,
)
from botkit.exchange.models import OrderRequest, OrderSide, OrderType, TimeInForce
from botkit.exchange.signing import Scheme, encode_query, pf_headers, v3_headers
from botkit.live import session as session_module
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync

from . import payloads as wire

BASE = "https://fake.exchange.test"
T0 = 1_700_000_000_000
KEY, SECRET, PASSPHRASE = "key-1", "secret-1", "pass-1"

_ANSWERS: dict[str, object] = {
    "/v3/market/limitPrice": [{"symbol": "BTC_USDT_PERP", "buyLmt": "85000", "sellLmt": "77000"}],
    "/v3/trade/orders": [{"clOrdId": "a-1", "ordId": "1", "code": 200, "msg": "Success"}],
    "/v3/trade/order": {"clOrdId": "a-1", "ordId": "1"},
    "/v3/account/balance": wire.BALANCE,
    "/v3/trade/order/opens": [],
    "/v3/position/mode": {},
}


class Recording(httpx.BaseTransport):
    def __init__(self) -> None:
        self.seen: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.seen.append(request)
        body = {"code": 200, "msg": "Success", "data": _ANSWERS[request.url.path]}
        return httpx.Response(200, json=body)


def _client(transport: httpx.BaseTransport, scheme: Scheme, recv_window: int | None) -> Any:
    clock = ClockSync(local=lambda: T0, interval_ms=0)
    clock.set_offset(0)
    return ExchangeClient(
        BASE, key=KEY, secret=SECRET, passphrase=PASSPHRASE, signing=scheme, clock=clock,
        transport=transport, recv_window=recv_window,
    )  # fmt: skip


def _orders() -> list[OrderRequest]:
    return [
        OrderRequest(
            symbol="BTC_USDT_PERP", side=OrderSide.BUY, type=OrderType.LIMIT, sz=Decimal("2"),
            px=Decimal("25000.50"), clOrdId="a-1", timeInForce=TimeInForce.IOC,
        ),
        OrderRequest(
            symbol='ODD"é', side=OrderSide.SELL, type=OrderType.MARKET, sz=Decimal("1E+1"),
            clOrdId="a-2", reduceOnly=True,
        ),
    ]  # fmt: skip


_Call = tuple[str, str, dict[str, str], Any, bool]
"""(method, path, query parameters, body object or None, signed): what a call asks for."""


def _calls(client: ExchangeClient) -> Iterator[_Call]:
    """Make each call through the client's public API; yield what it asks for, written down
    independently of how the client builds it."""
    client.limit_price("BTC_USDT_PERP")
    yield "GET", "/v3/market/limitPrice", {"symbol": "BTC_USDT_PERP"}, None, False
    orders = _orders()
    client.place_orders(orders)
    yield "POST", "/v3/trade/orders", {}, [o.to_wire() for o in orders], True
    client.place_order(orders[1])
    yield "POST", "/v3/trade/order", {}, orders[1].to_wire(), True
    client.balance()
    yield "GET", "/v3/account/balance", {}, None, True
    client.open_orders_page("BTC_USDT_PERP", limit=10)
    yield "GET", "/v3/trade/order/opens", {"symbol": "BTC_USDT_PERP", "limit": "10"}, None, True
    client.cancel_order("BTC_USDT_PERP", cl_ord_id="a-1")
    yield "DELETE", "/v3/trade/order", {}, {"symbol": "BTC_USDT_PERP", "clOrdId": "a-1"}, True
    client.set_position_mode("HEDGE")
    yield "POST", "/v3/position/mode", {}, {"posMode": "HEDGE"}, True


def _built_the_plain_way(call: _Call, scheme: Scheme, recv_window: int | None) -> httpx.Request:
    method, path, params, body, signed = call
    text = "" if body is None else json.dumps(body, separators=(",", ":"))
    query = encode_query(params)
    headers: dict[str, str] = {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if signed and scheme == "pf":
        headers |= pf_headers(
            key=KEY, secret=SECRET, passphrase=PASSPHRASE, timestamp=T0, method=method,
            path=path, query=query, body=text,
        )  # fmt: skip
    elif signed:
        headers |= v3_headers(
            key=KEY, secret=SECRET, timestamp=T0, method=method, path=path, params=params,
            body=text, recv_window=recv_window,
        )  # fmt: skip
    client = httpx.Client(
        headers={"User-Agent": f"botkit/{__version__}", "Accept": "application/json"}
    )
    url = BASE + path + (f"?{query}" if query else "")
    built = client.build_request(method, url, headers=headers, content=text.encode() or None)
    client.close()
    return built


@pytest.mark.parametrize("direct", [True, False], ids=["made-directly", "made-by-httpx"])
@pytest.mark.parametrize(("scheme", "recv_window"), [("v3", None), ("v3", 5000), ("pf", None)])
def test_each_request_is_the_one_built_the_plain_way(
    scheme: Scheme, recv_window: int | None, direct: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails on any byte of difference: a body's key order or escaping, a header's name, case,
    order or value, a signature, the address or the query."""
    assert session_module.FAST_REQUESTS  # this httpx's requests are made directly
    monkeypatch.setattr(session_module, "FAST_REQUESTS", direct)
    transport = Recording()
    client = _client(transport, scheme, recv_window)
    expected = list(_calls(client))
    assert len(transport.seen) == len(expected)
    for sent, call in zip(transport.seen, expected, strict=True):
        built = _built_the_plain_way(call, scheme, recv_window)
        assert (sent.method, str(sent.url)) == (built.method, str(built.url))
        assert sent.headers.raw == built.headers.raw
        assert sent.content == built.content
        assert sent.headers.multi_items() == built.headers.multi_items()


def test_a_place_and_a_read_are_the_golden_bytes() -> None:
    """The bytes of a signed batch place and an unsigned read, written down when they were
    first sent (the plain way: ``json.dumps``, ``hmac.new``), so that the plain way changing
    too cannot hide a change."""
    transport = Recording()
    client = _client(transport, "v3", None)
    client.limit_price("BTC_USDT_PERP")
    client.place_orders(_orders())
    read, place = transport.seen
    assert str(read.url) == "https://fake.exchange.test/v3/market/limitPrice?symbol=BTC_USDT_PERP"
    assert read.headers.raw == [(b"Host", b"fake.exchange.test"), *CLIENT_HEADERS]
    assert read.content == b""
    assert place.content == GOLDEN_BODY
    assert place.headers.raw == [
        (b"Host", b"fake.exchange.test"),
        *CLIENT_HEADERS,
        (b"Content-Type", b"application/json"),
        (b"key", b"key-1"),
        (b"signTimestamp", b"1700000000000"),
        (b"signature", GOLDEN_SIGNATURE),
        (b"signatureMethod", b"hmacSHA256"),
        (b"signatureVersion", b"2"),
        (b"Content-Length", str(len(GOLDEN_BODY)).encode()),
    ]


GOLDEN_BODY = (
    b'[{"symbol":"BTC_USDT_PERP","side":"BUY","mgnMode":"CROSS","posSide":"BOTH","type":"LIMIT",'
    b'"sz":"2","clOrdId":"a-1","px":"25000.50","timeInForce":"IOC"},'
    b'{"symbol":"ODD\\"\\u00e9","side":"SELL","mgnMode":"CROSS","posSide":"BOTH","type":"MARKET",'
    b'"sz":"10","clOrdId":"a-2","reduceOnly":true}]'
)
# checked with openssl: printf '%s' "POST<newline>/v3/trade/orders<newline>requestBody=<GOLDEN_BODY>
# &signTimestamp=1700000000000" | openssl dgst -sha256 -hmac secret-1 -binary | base64
GOLDEN_SIGNATURE = b"oQD93cRiY4dK/GjAYwf1X3QQTnGNIeF35XjBZ5A2PZM="
CLIENT_HEADERS = [
    (b"Accept-Encoding", b"gzip, deflate"),  # httpx.Client's defaults, then botkit's
    (b"Connection", b"keep-alive"),
    (b"User-Agent", f"botkit/{__version__}".encode()),
    (b"Accept", b"application/json"),
]


class Answering(httpx.BaseTransport):
    """Answers every request with one status, body and headers (or raises ``fail``)."""

    def __init__(
        self, status: int = 200, body: bytes = b"", headers: dict[str, str] | None = None,
        fail: Exception | None = None,
    ) -> None:  # fmt: skip
        self.status, self.body, self.headers, self.fail = status, body, headers or {}, fail
        self.seen: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.seen.append(request)
        if self.fail is not None:
            raise self.fail
        return httpx.Response(self.status, content=self.body, headers=self.headers)


_REJECTED = json.dumps({"code": 10001, "msg": "bad 'px'"})


@pytest.mark.parametrize(
    ("answer", "error", "text"),
    [
        (Answering(429, b"{}", {"Retry-After": "3"}), RateLimited, "rate limited; retry after 3 s"),
        (
            Answering(503, b"<html>down</html>"),
            ServerUnavailable,
            "exchange unavailable (HTTP 503)",
        ),
        (Answering(200, b'{"code":200,"msg":"Succ'), MalformedWriteResponse, "malformed answer"),
        (Answering(200, b"\xef\xbb\xbf{}"), MalformedWriteResponse, "no code/msg/data envelope"),
        (Answering(400, _REJECTED.encode("utf-16-le")), ExchangeRejected, "bad 'px'"),
        (Answering(200, _REJECTED.encode()), ExchangeRejected, "bad 'px'"),
        (Answering(401, b'{"code":401,"msg":"expired key"}'), AuthFailed, "expired key"),
        (
            Answering(200, b'{"code":200,"msg":"signTimestamp expired"}'),
            TimestampExpired,
            "expired",
        ),
        (Answering(fail=httpx.ReadTimeout("slow")), OutcomeUnknown, "look the orders up"),
        (Answering(fail=httpx.ConnectError("refused")), ConnectFailed, "could not connect"),
    ],
)
def test_an_error_answer_to_a_batch_place_is_the_error_it_means(
    answer: Answering, error: type[Exception], text: str
) -> None:
    """The batch place (the body from the orders' kept text, the headers handed over
    directly) meets every kind of failing answer as the client always has: the class that
    decides what happens next, one line naming the request and its orders, no secret."""
    client = _client(answer, "v3", None)
    with pytest.raises(error) as caught:
        client.place_orders(_orders())
    message = str(caught.value)
    assert text in message
    assert "\n" not in message
    assert "POST /v3/trade/orders" in message
    assert "clOrdId a-1,a-2" in message
    assert SECRET not in message
    assert KEY not in message
    assert answer.seen[0].content == GOLDEN_BODY


def test_a_cookie_set_on_an_error_answer_is_sent_back_as_httpx_would() -> None:
    """The jar is looked at only once an answer has set a cookie: any answer, a failing one
    too (httpx keeps cookies of every answer)."""
    answer = Answering(503, b"{}", {"set-cookie": "edge=1; Path=/"})
    client = _client(answer, "v3", None)
    with pytest.raises(ServerUnavailable):
        client.limit_price("BTC_USDT_PERP")
    answer.status, answer.body = 200, json.dumps({"code": 200, "msg": "", "data": []}).encode()
    with pytest.raises(MalformedResponse):  # no band: malformed, but it went out
        client.limit_price("BTC_USDT_PERP")
    first, second = answer.seen
    assert "cookie" not in first.headers
    assert second.headers["cookie"] == "edge=1"


_NAMES = st.sampled_from(
    [b"Content-Length", b"content-length", b"CONTENT-LENGTH", b"Set-Cookie", b"set-cookie",
     b"Content-Type", b"X-Other", b"content-lengths"]
)  # fmt: skip
_VALUES = st.binary(max_size=6) | st.sampled_from([b"512", b" 7 ", b"\xb2", b"\xc3\xa9", b"1,2"])


@settings(max_examples=400, deadline=None)
@given(pairs=st.lists(st.tuples(_NAMES, _VALUES), max_size=6))
def test_an_answers_header_is_read_as_httpx_reads_it(pairs: list[tuple[bytes, bytes]]) -> None:
    """The session reads an answer's ``Set-Cookie`` and ``Content-Length`` from the list httpx
    keeps: the same text ``Headers.get`` gives — several values joined, any letter case, bytes
    outside ASCII decoded as httpx decodes them (its encoding chosen over every header) — or
    None. Fails if a value is dropped, a case missed or a non-ASCII value read otherwise."""
    headers = httpx.Headers(pairs)
    for name in ("content-length", "set-cookie", "x-missing"):
        assert session_module._header(headers, name.encode()) == headers.get(name)


class _Stream(httpx.SyncByteStream):
    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts

    def __iter__(self) -> Iterator[bytes]:
        yield from self.parts


@pytest.mark.parametrize("body", [b"", b"{", b"x" * 100_000, gzip.compress(b'{"a":1}' * 50)])
@pytest.mark.parametrize("zipped", [False, True])
def test_an_answer_is_read_in_the_pieces_httpx_gives(body: bytes, zipped: bool) -> None:
    """An answer already read (an in-process transport's) is handed over as the one piece
    ``iter_bytes`` would give, decoded, or none when empty; a streamed one goes through httpx.
    Fails if the whole content is taken for an empty answer's piece, the raw (still
    compressed) bytes are taken, or a streamed answer is taken as read."""
    headers = {"content-encoding": "gzip"} if zipped else {}
    content = gzip.compress(body) if zipped else body
    read = httpx.Response(200, content=content, headers=headers)
    again = httpx.Response(200, content=content, headers=headers)
    assert list(session_module._pieces(read)) == list(again.iter_bytes())
    streamed = httpx.Response(200, stream=_Stream([content[:7], content[7:]]), headers=headers)
    reference = httpx.Response(200, stream=_Stream([content[:7], content[7:]]), headers=headers)
    assert list(session_module._pieces(streamed)) == list(reference.iter_bytes())
    assert (
        b"".join(session_module._pieces(httpx.Response(200, content=content, headers=headers)))
        == body
    )
