"""One signed HTTP exchange with the API: serialise, sign, send, read, map errors.

:class:`Session` owns the ``httpx.Client`` (connection reuse, timeouts), the credentials, the
signing scheme and the :class:`~botkit.exchange.clock.ClockSync`. The body is serialised once
(compact JSON), those exact bytes are signed and sent; the query string sent is
:func:`~botkit.exchange.signing.encode_query` of the parameters, exactly what was signed. The
session never retries: the pipeline decides (tenacity), from the error class.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
from pydantic import SecretStr

from botkit import __version__
from botkit.errors import RequestContext, SettingsError, TimestampExpired
from botkit.exchange import http
from botkit.exchange.clock import ClockSync
from botkit.exchange.signing import Scheme, encode_query, pf_headers, v3_headers

__all__ = ["Session"]

_TIMESTAMP_PATH = "/timestamp"


class Session:
    """Sends requests to ``base_url`` and returns each answer's ``data``; see the module doc."""

    def __init__(
        self,
        base_url: str,
        *,
        key: str,
        secret: SecretStr,
        passphrase: SecretStr,
        signing: Scheme,
        clock: ClockSync,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 10.0,
        recv_window: int | None = None,
    ) -> None:
        url = base_url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise SettingsError(
                f"base_url {base_url!r} is not an http(s) address",
                hint="set BOTKIT_BASE_URL to https://host",
            )
        if signing not in ("v3", "pf"):
            raise SettingsError(f"unknown signing scheme {signing!r}", hint="use v3 or pf")
        self.base_url = url
        self.signing: Scheme = signing
        self.clock = clock
        self.recv_window = recv_window
        self._key = key
        self._secret = secret
        self._passphrase = passphrase
        self._http = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": f"botkit/{__version__}", "Accept": "application/json"},
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"Session(base_url={self.base_url!r}, signing={self.signing!r})"

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | None] | None = None,
        body: Any = None,
        signed: bool,
        scheme: Scheme | None = None,
        client_order_ids: Sequence[str] = (),
        envelope_required: bool = True,
    ) -> tuple[Any, RequestContext]:
        """Send one request; return ``(data, context)`` or raise the mapped error."""
        method = method.upper()
        query_params = {k: v for k, v in (params or {}).items() if v is not None}
        query = encode_query(query_params)
        body_text = "" if body is None else http.dumps(body)
        context = RequestContext(
            method=method, path=path, query=query_params, client_order_ids=tuple(client_order_ids)
        )
        headers: dict[str, str] = {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if signed:
            headers.update(
                self._sign(scheme or self.signing, method, path, query_params, query, body_text)
            )
        url = f"{self.base_url}{path}" + (f"?{query}" if query else "")
        request = self._http.build_request(
            method, url, headers=headers, content=body_text.encode() if body_text else None
        )
        write = http.is_write(method)
        try:
            response = self._http.send(request)
            content = response.read()
        except httpx.TransportError as exc:
            raise http.map_transport_error(exc, context, write=write) from exc
        try:
            data = http.interpret(
                response.status_code,
                response.headers,
                content,
                context,
                write=write,
                now_ms=self.clock.now_ms(),
                envelope_required=envelope_required,
            )
        except TimestampExpired:
            self.clock.mark_stale()  # the server clock moved: re-sync before the next signing
            raise
        return data, dataclasses.replace(context, http_status=response.status_code)

    def server_time(self) -> int:
        """``GET /timestamp`` in ms (unsigned); the clock's source of truth."""
        data, context = self.request("GET", _TIMESTAMP_PATH, signed=False, envelope_required=False)
        value = data.get("serverTime") if isinstance(data, dict) else data
        ms = http.integer(value, max_digits=15) if isinstance(value, str | int) else None
        if ms is not None and ms >= 0:
            return ms
        shown = repr(value)[:40]
        raise http.malformed(f"serverTime missing or not a number: {shown}", context, write=False)

    def _sign(
        self,
        scheme: Scheme,
        method: str,
        path: str,
        params: Mapping[str, str],
        query: str,
        body: str,
    ) -> dict[str, str]:
        self.clock.maybe_resync()
        timestamp = self.clock.now_ms()
        secret = self._secret.get_secret_value()
        if scheme == "pf":
            return pf_headers(
                key=self._key,
                secret=secret,
                passphrase=self._passphrase.get_secret_value(),
                timestamp=timestamp,
                method=method,
                path=path,
                query=query,
                body=body,
            )
        return v3_headers(
            key=self._key,
            secret=secret,
            timestamp=timestamp,
            method=method,
            path=path,
            params=params,
            body=body,
            recv_window=self.recv_window,
        )
