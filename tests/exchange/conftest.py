"""A fake exchange behind ``httpx.MockTransport`` that checks what the client sends.

Signatures are verified with code written here (hmac + hashlib + urllib), not with
``botkit.exchange.signing``, so a signing bug cannot hide behind itself. The server clock is
the manual local clock plus ``skew_ms``; a request may take ``latency_ms`` (the manual clock
advances half before the server reads its clock, half after).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, quote

import httpx
import pytest

from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync

KEY = "test-key"
SECRET = "test-secret"
PASSPHRASE = "test-pass"
BASE = "https://fake.exchange.test"
T0 = 1_700_000_000_000

PUBLIC_PREFIXES = ("/timestamp", "/markets", "/currencies", "/v2/currencies", "/v3/market/")


class ManualMs:
    """A local clock in Unix ms that moves only when told."""

    def __init__(self, start: int = T0) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@dataclass
class Seen:
    """One request as the fake received it."""

    method: str
    path: str
    raw_query: str
    query: dict[str, str]
    body: bytes
    headers: dict[str, str]
    scheme: str | None
    timestamp: int | None

    def json(self) -> Any:
        return json.loads(self.body, parse_float=Decimal)


Reply = httpx.Response | Any
Route = Callable[[Seen], Reply]


def envelope(data: Any, code: int | str = 200, msg: str = "Success") -> dict[str, Any]:
    return {"code": code, "msg": msg, "data": data}


def _sign(message: bytes) -> str:
    digest = hmac.new(SECRET.encode(), message, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


@dataclass
class FakeExchange:
    clock: ManualMs
    skew_ms: int = 0
    latency_ms: int = 0
    tolerance_ms: int = 5000
    routes: dict[tuple[str, str], Route] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def server_now(self) -> int:
        return self.clock() + self.skew_ms

    def on(self, method: str, path: str, reply: Route | Any) -> None:
        """Answer ``method path`` with a function of the request, or with fixed data."""
        self.routes[(method, path)] = reply if callable(reply) else (lambda _s: reply)

    def requests(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]

    # --- the transport handler ---------------------------------------------------------

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.clock.advance(self.latency_ms // 2)
        try:
            return self._handle(request)
        finally:
            self.clock.advance(self.latency_ms - self.latency_ms // 2)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        raw_query = request.url.query.decode("ascii")
        body = request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        method, path = request.method, request.url.path
        scheme = "pf" if "pf-api-sign" in headers else "v3" if "signature" in headers else None
        ts_text = headers.get("pf-api-timestamp") or headers.get("signtimestamp")
        seen = Seen(
            method=method,
            path=path,
            raw_query=raw_query,
            query=dict(parse_qsl(raw_query, keep_blank_values=True)),
            body=body,
            headers=headers,
            scheme=scheme,
            timestamp=int(ts_text) if ts_text else None,
        )
        self.seen.append(seen)
        if path == "/timestamp" and (method, path) not in self.routes:
            return httpx.Response(200, json={"serverTime": self.server_now()})
        if not path.startswith(PUBLIC_PREFIXES):
            problem = self._auth_problem(seen, raw_query, body)
            if problem is not None:
                return problem
        route = self.routes.get((method, path))
        if route is None:
            return httpx.Response(404, json=envelope(None, 404, "Not Found"))
        reply = route(seen)
        if isinstance(reply, httpx.Response):
            return reply
        return httpx.Response(200, content=json.dumps(envelope(reply), default=str).encode())

    def _auth_problem(self, seen: Seen, raw_query: str, body: bytes) -> httpx.Response | None:
        h = seen.headers
        if seen.scheme == "pf":
            target = seen.path + (f"?{raw_query}" if raw_query else "")
            message = f"{h['pf-api-timestamp']}{seen.method}{target}".encode() + body
            ok = (
                h.get("pf-api-key") == KEY
                and h.get("pf-api-passphrase") == PASSPHRASE
                and hmac.compare_digest(h["pf-api-sign"], _sign(message))
            )
        elif seen.scheme == "v3":
            ts = h["signtimestamp"]
            if body:
                params = b"requestBody=" + body + f"&signTimestamp={ts}".encode()
            else:
                pairs = [*parse_qsl(raw_query, keep_blank_values=True), ("signTimestamp", ts)]
                text = "&".join(
                    f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in sorted(pairs)
                )
                params = text.encode()
            message = f"{seen.method}\n{seen.path}\n".encode() + params
            ok = h.get("key") == KEY and hmac.compare_digest(h["signature"], _sign(message))
        else:
            ok = False
        if not ok:
            return httpx.Response(401, json={"code": 401, "message": "Invalid signature"})
        assert seen.timestamp is not None
        if abs(seen.timestamp - self.server_now()) >= self.tolerance_ms:
            text = (
                "Request expired: signTimestamp is more than "
                f"{self.tolerance_ms} ms from system time"
            )
            return httpx.Response(400, json=envelope(None, 400, text))
        return None


@pytest.fixture
def clock() -> ManualMs:
    return ManualMs()


@pytest.fixture
def fake(clock: ManualMs) -> FakeExchange:
    return FakeExchange(clock)


ClientFactory = Callable[..., ExchangeClient]


@pytest.fixture
def make_client(fake: FakeExchange, clock: ManualMs) -> Iterator[ClientFactory]:
    made: list[ExchangeClient] = []

    def build(signing: str = "v3", **kwargs: Any) -> ExchangeClient:
        options: dict[str, Any] = {
            "key": KEY,
            "secret": SECRET,
            "passphrase": PASSPHRASE,
            "signing": signing,
            "clock": ClockSync(local=clock, interval_ms=60_000),
            "transport": httpx.MockTransport(fake.handler),
        }
        options.update(kwargs)
        client = ExchangeClient(BASE, **options)
        made.append(client)
        return client

    yield build
    for client in made:
        client.close()


@pytest.fixture(params=["v3", "pf"])
def client(request: pytest.FixtureRequest, make_client: ClientFactory) -> ExchangeClient:
    """A client signing with each scheme in turn."""
    return make_client(request.param)
