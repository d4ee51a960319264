"""Shared pieces of the HTTP-face tests: a stand-in wire API that echoes, and request signing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from botkit.exchange import signing
from botkit.sim.api import SimError

KEY, SECRET, PASSPHRASE = "sim-key", "sim-secret", "sim-passphrase"
T0 = 1_700_000_000_000


@dataclass
class EchoApi:
    """Stands in for SimApi: ``/public/*`` needs no signature; every call is recorded."""

    calls: list[tuple[str, str, dict[str, str], Any]] = field(default_factory=list)

    def is_public(self, method: str, path: str) -> bool:
        return path.startswith("/public")

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        self.calls.append((method, path, dict(query), body))
        if path.endswith("/boom"):
            raise RuntimeError("engine bug")
        if path.endswith("/missing"):
            raise SimError(10001, "symbol does not exist")
        if path.endswith("/notfound"):
            raise SimError(404, "Not Found", http_status=404)
        return {"query": dict(query), "body": body, "px": Decimal("1.50")}


@dataclass(frozen=True)
class Signed:
    raw_query: str
    headers: dict[str, str]
    body: bytes


def sign_request(
    method: str,
    path: str,
    *,
    params: Mapping[str, str] | None = None,
    body: Any = None,
    raw_body: str | None = None,
    scheme: str = "v3",
    ts: int = T0,
    key: str = KEY,
    secret: str = SECRET,
    passphrase: str = PASSPHRASE,
) -> Signed:
    """Sign as a client does: the query sent is encode_query(params), the body the bytes signed."""
    query = signing.encode_query(params or {})
    text = raw_body if raw_body is not None else ""
    if body is not None:
        text = json.dumps(body, separators=(",", ":"))
    if scheme == "pf":
        headers = signing.pf_headers(
            key=key,
            secret=secret,
            passphrase=passphrase,
            timestamp=ts,
            method=method,
            path=path,
            query=query,
            body=text,
        )
    else:
        headers = signing.v3_headers(
            key=key,
            secret=secret,
            timestamp=ts,
            method=method,
            path=path,
            params=params or {},
            body=text,
        )
    return Signed(query, headers, text.encode())


def envelope(body: bytes) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(body, parse_float=Decimal)
    return parsed
