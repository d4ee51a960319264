"""Request signing, as pure functions: both schemes of the live-API notes.

* ``pf`` — spec section 5: ``base64(HMAC-SHA256(secret, timestamp + METHOD + path[?query] + body))``
  with the ``PF-API-*`` headers.
* ``v3`` — the public v3 documentation: ``base64(HMAC-SHA256(secret, METHOD\\npath\\nparams))``
  where *params* is the query parameters plus ``signTimestamp`` sorted by key (GET), or
  ``requestBody=<json>&signTimestamp=<ts>`` (a write with a body), or ``signTimestamp=<ts>``.

The query string a client sends is :func:`encode_query` of its parameters, and the body is the
exact bytes signed: serialise once, sign those bytes, send those bytes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import quote

__all__ = [
    "HmacKey",
    "Scheme",
    "encode_query",
    "pf_headers",
    "pf_string_to_sign",
    "sign",
    "v3_headers",
    "v3_string_to_sign",
]

Scheme = Literal["pf", "v3"]


def _quote(value: str) -> str:
    """RFC 3986 percent-encoding: everything but ``A-Z a-z 0-9 - _ . ~``. A value of those
    characters only (symbols, ids, timestamps: nearly every one) is its own encoding."""
    if _UNRESERVED(value) is not None:
        return value
    return quote(value, safe="")


_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch


def encode_query(params: Mapping[str, str]) -> str:
    """The query string as sent: parameters sorted by key (ASCII), values percent-encoded.
    The few names and values that come back every cycle (names, symbols, page sizes) are
    encoded once (:data:`_QUOTED`)."""
    if not params:
        return ""
    parts = []
    for key, value in sorted(params.items()):
        name = _QUOTED.get(key)
        if name is None:
            name = _quoted(key)
        text = _QUOTED.get(value)
        if text is None:
            text = _quoted(value)
        parts.append(f"{name}={text}")
    return "&".join(parts)


def _quoted(value: str) -> str:
    """:func:`_quote` of ``value``, kept in :data:`_QUOTED` (emptied when full)."""
    if len(_QUOTED) >= _QUOTED_MAX:
        _QUOTED.clear()
    text = _QUOTED[value] = _quote(value)
    return text


_QUOTED: dict[str, str] = {}
_QUOTED_MAX = 4096


class HmacKey:
    """HMAC-SHA256 under one secret, its two padded key blocks hashed once (RFC 2104): the
    digest ``hmac.digest(secret, message, "sha256")`` gives, at about a third of the cost per
    message (OpenSSL 3 sets a MAC up anew on every one-shot call, ~3 µs). Holds hash states,
    never the secret's text; its ``repr`` shows nothing of either."""

    __slots__ = ("_inner", "_outer")

    def __init__(self, secret: str | bytes) -> None:
        key = secret.encode() if isinstance(secret, str) else bytes(secret)
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        key = key.ljust(_BLOCK, b"\0")
        self._inner = hashlib.sha256(key.translate(_IPAD))
        self._outer = hashlib.sha256(key.translate(_OPAD))

    def __repr__(self) -> str:
        return "HmacKey(<hidden>)"

    def __reduce__(self) -> Any:  # a key is not written anywhere, pickles included
        raise TypeError("an HmacKey cannot be pickled")

    def digest(self, message: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


_BLOCK = 64  # SHA-256's block size
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))


def sign(secret: str | HmacKey, message: str) -> str:
    """``base64(HMAC-SHA256(secret, message))``; ``secret`` as its text or as an
    :class:`HmacKey` made of it (the same signature)."""
    if isinstance(secret, HmacKey):
        digest = secret.digest(message.encode())
    else:
        digest = hmac.digest(secret.encode(), message.encode(), "sha256")
    return base64.b64encode(digest).decode("ascii")


def pf_string_to_sign(timestamp: int, method: str, path: str, query: str, body: str) -> str:
    """Spec section 5: timestamp + METHOD + path (with ``?query`` for GET/DELETE) + body."""
    method = method.upper()
    target = f"{path}?{query}" if query and method in {"GET", "DELETE"} else path
    return f"{timestamp}{method}{target}{body}"


def v3_string_to_sign(
    timestamp: int, method: str, path: str, params: Mapping[str, str], body: str
) -> str:
    """Notes, scheme ``v3``: ``METHOD\\npath\\nparams`` (see the module docstring)."""
    method = method.upper()
    if body:
        param_string = f"requestBody={body}&signTimestamp={timestamp}"
    else:
        param_string = encode_query({**params, "signTimestamp": str(timestamp)})
    return f"{method}\n{path}\n{param_string}"


def pf_headers(
    *,
    key: str,
    secret: str | HmacKey,
    passphrase: str,
    timestamp: int,
    method: str,
    path: str,
    query: str,
    body: str,
) -> dict[str, str]:
    """The four ``PF-API-*`` headers for one request."""
    signature = sign(secret, pf_string_to_sign(timestamp, method, path, query, body))
    return {
        "PF-API-KEY": key,
        "PF-API-SIGN": signature,
        "PF-API-TIMESTAMP": str(timestamp),
        "PF-API-PASSPHRASE": passphrase,
    }


def v3_headers(
    *,
    key: str,
    secret: str | HmacKey,
    timestamp: int,
    method: str,
    path: str,
    params: Mapping[str, str],
    body: str,
    recv_window: int | None = None,
) -> dict[str, str]:
    """The ``key`` / ``signTimestamp`` / ``signature`` headers for one request."""
    signature = sign(secret, v3_string_to_sign(timestamp, method, path, params, body))
    headers = {
        "key": key,
        "signTimestamp": str(timestamp),
        "signature": signature,
        "signatureMethod": "hmacSHA256",
        "signatureVersion": "2",
    }
    if recv_window is not None:
        headers["recvWindow"] = str(recv_window)
    return headers
