"""One signed HTTP exchange with the API: serialise, sign, send, read, map errors.

:class:`Session` owns the ``httpx.Client`` (connection reuse, timeouts), the credentials, the
signing scheme and the :class:`~botkit.live.clock.ClockSync`. The body is serialised once
(compact JSON), those exact bytes are signed and sent; the query string sent is
:func:`~botkit.exchange.signing.encode_query` of the parameters, exactly what was signed. The
session never retries: the pipeline decides (tenacity), from the error class.

Every request has an overall ``deadline`` (seconds, connect to last byte; httpx's ``timeout``
only bounds each connect / read / write). The answer is read as a stream, in pieces, and the
clock is looked at after each: past the deadline the request is abandoned — a read as
:class:`~botkit.errors.ReadTimedOut`, a write as :class:`~botkit.errors.OutcomeUnknown` (it may
have been processed: the orders are looked up). A server that sends nothing is cut by the
per-read ``timeout``, so no request outlives ``deadline`` by more than one read. The answer may
hold at most ``max_answer_bytes`` (after decompression, ``Content-Length`` checked first); a
larger one is refused as malformed (for a write accepted with 2xx: an unknown outcome) without
ever being held whole.

The request goes to the transport the ``httpx.Client`` routes the base URL to (its own pool,
or a proxy the environment names), chosen once: the client's per-request machinery (URL and
header merging, auth and redirect generators, cookie extraction from answers that set none,
response wrappers) cost about as much as the rest of the request together, and none of it
applies — no auth, no redirects followed, the same headers every time. The request is the one
``Client.build_request`` builds (the client's headers, then the request's; cookies an answer set
are kept and sent back, as the client would), made directly as this httpx lays a request out
(each header kept as httpx keeps it, the URL parsed once per address; checked against httpx's
own build at import, :data:`FAST_REQUESTS`, and built by httpx otherwise); an answer's
``Set-Cookie`` and ``Content-Length`` are read from the list its headers keep. The secret signs
as an :class:`~botkit.exchange.signing.HmacKey` made once (its key blocks hashed once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import httpx
from pydantic import SecretStr

from botkit import __version__
from botkit.errors import (
    OutcomeUnknown,
    ReadTimedOut,
    RequestContext,
    SettingsError,
    TimestampExpired,
)
from botkit.exchange.signing import HmacKey, Scheme, encode_query, pf_headers, v3_headers
from botkit.live import http
from botkit.live.clock import ClockSync

__all__ = ["MAX_ANSWER_BYTES", "Session"]

_TIMESTAMP_PATH = "/timestamp"

MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""The default cap on one answer's size (8 MiB; the largest real answers are well under 1 MiB)."""


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
        deadline: float | None = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        monotonic: Callable[[], float] = time.monotonic,
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
        self._secret = HmacKey(secret.get_secret_value())  # what signs, made once
        self._passphrase = passphrase
        self.deadline = deadline if deadline is not None else timeout
        if self.deadline <= 0 or max_answer_bytes < 1:
            raise SettingsError(
                "request deadline and answer cap must be positive",
                hint="set BOTKIT_REQUEST_DEADLINE above 0 and BOTKIT_MAX_ANSWER_BYTES to 1 or more",
            )
        self.max_answer_bytes = max_answer_bytes
        self._monotonic = monotonic
        self._http = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(min(timeout, self.deadline)),
            headers={"User-Agent": f"botkit/{__version__}", "Accept": "application/json"},
            follow_redirects=False,
        )
        # what Client.build_request / send would add to every request, computed once
        route = getattr(self._http, "_transport_for_url", None)  # private: httpx 0.27, 0.28
        self._route: httpx.BaseTransport | None = None if route is None else route(httpx.URL(url))
        self._headers: list[_Header] = [(k, k.lower(), v) for k, v in self._http.headers.raw]
        self._timeout_ext = {"timeout": self._http.timeout.as_dict()}
        self._urls: dict[str, tuple[httpx.URL, _Header]] = {}
        self._cookies_set = False  # an answer set a cookie: the jar is looked at from then on
        self._closed = False

    def __repr__(self) -> str:
        return f"Session(base_url={self.base_url!r}, signing={self.signing!r})"

    def close(self) -> None:
        self._closed = True
        self._http.close()

    def _url(self, text: str) -> tuple[httpx.URL, _Header]:
        """``text`` parsed (and checked) by httpx once, with the ``Host`` header httpx derives
        from it: the same few addresses every cycle."""
        known = self._urls.get(text)
        if known is None:
            if len(self._urls) >= _URLS_MAX:
                self._urls.clear()
            url = httpx.URL(text)
            known = self._urls[text] = (url, (b"Host", b"host", url.netloc))
        return known

    def _send(
        self, method: str, url: str, headers: list[_Header], content: bytes
    ) -> httpx.Response:
        """``Client.send(Client.build_request(...), stream=True)`` without the machinery that
        does nothing here (see the module doc). ``headers``: the client's and the request's,
        each as httpx keeps it (name, lower-case name, value)."""
        if self._closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        if self._route is None:  # an httpx without the routing this relies on: its own path
            pairs = [(k, v) for k, _, v in headers]
            built = self._http.build_request(method, url, headers=pairs, content=content or None)
            return self._http.send(built, stream=True)
        jar = self._http.cookies
        address, host = self._url(url)
        if self._cookies_set and jar:  # cookies to send back (rare): httpx places them
            request = httpx.Request(
                method,
                address,
                headers=[(k, v) for k, _, v in headers],
                content=content or None,
                cookies=jar,
                extensions=self._timeout_ext,
            )
        else:  # the headers httpx would add, added here: it looks each up by name, slowly
            # httpx: the length of a body after the request's headers; Host, and a zero
            # length for a body-less POST / PUT / PATCH, before them
            if content:
                length = str(len(content)).encode("ascii")
                every = [host, *headers, (b"Content-Length", b"content-length", length)]
            elif method in _EMPTY_BODY_LENGTH:
                every = [host, _NO_LENGTH, *headers]
            else:
                every = [host, *headers]
            request = _request(method, address, every, content, self._timeout_ext)
        response = self._route.handle_request(request)
        response.request = request
        if _header(response.headers, b"set-cookie") is not None:
            self._cookies_set = True
            jar.extract_cookies(response)
        return response

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | None] | None = None,
        body: Any = None,
        body_text: str | None = None,
        signed: bool,
        scheme: Scheme | None = None,
        client_order_ids: Sequence[str] = (),
        envelope_required: bool = True,
    ) -> tuple[Any, RequestContext]:
        """Send one request; return ``(data, context)`` or raise the mapped error. The body is
        ``body`` as :func:`~botkit.live.http.dumps` writes it, or ``body_text``, that text
        already written (a batch of orders: :meth:`~botkit.exchange.models.OrderRequest.
        wire_text`)."""
        method = method.upper()
        query_params = {k: v for k, v in (params or {}).items() if v is not None}
        query = encode_query(query_params)
        if body_text is None:
            body_text = "" if body is None else http.dumps(body)
        elif body is not None:
            raise ValueError("a request has one body: give body or body_text, not both")
        ids = tuple(client_order_ids)
        headers = self._headers.copy()
        if body_text:  # a body given either way (``http.dumps`` never writes an empty text)
            headers.append(_JSON_TYPE)
        if signed:
            signing = self._sign(
                scheme or self.signing, method, path, query_params, query, body_text
            )
            headers += [(*_name(k), v.encode("ascii")) for k, v in signing.items()]
        url = f"{self.base_url}{path}" + (f"?{query}" if query else "")
        write = method in http.WRITE_METHODS  # http.is_write of the upper-case method
        give_up_at = self._monotonic() + self.deadline
        try:
            response = self._send(method, url, headers, body_text.encode())
            answered = RequestContext(  # the request's context, with the answer's status
                method, path, query_params, ids, response.status_code
            )
            try:
                content = self._read(response, give_up_at, answered, write=write)
            finally:
                response.close()
        except httpx.TransportError as exc:
            context = RequestContext(method, path, query_params, ids)  # no answer: no status
            raise http.map_transport_error(exc, context, write=write) from exc
        try:
            data = http.interpret(
                response.status_code,
                response.headers,
                content,
                answered,
                write=write,
                now_ms=self.clock.now_ms(),
                envelope_required=envelope_required,
            )
        except TimestampExpired:
            self.clock.mark_stale()  # the server clock moved: re-sync before the next signing
            raise
        return data, answered

    def _read(
        self, response: httpx.Response, give_up_at: float, context: RequestContext, *, write: bool
    ) -> bytes:
        """The body, read in pieces: cut at the deadline, refused past the size cap
        (``context``: the request's, with the answer's status)."""
        cap = self.max_answer_bytes
        ctx = context
        declared = http.integer(_header(response.headers, b"content-length"), max_digits=18)
        if declared is not None and declared > cap:
            raise http.malformed(_too_big(declared, cap), ctx, write=write)
        chunks: list[bytes] = []
        size = 0
        for chunk in _pieces(response):
            size += len(chunk)
            if size > cap:
                raise http.malformed(_too_big(size, cap, more=True), ctx, write=write)
            chunks.append(chunk)
            if self._monotonic() > give_up_at:
                raise self._late(ctx, size, write=write)
        return b"".join(chunks)

    def _late(self, context: RequestContext, size: int, *, write: bool) -> Exception:
        text = (
            f"no complete answer within the request deadline of {self.deadline:g} s "
            f"({size} bytes received)"
        )
        if write:
            return OutcomeUnknown(
                f"{text}; the request may have been processed: look the orders up", context=context
            )
        return ReadTimedOut(text, context=context)

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
        secret = self._secret
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


_Header = tuple[bytes, bytes, bytes]
"""A header as ``httpx.Headers`` keeps it: the name as given, in lower case, and the value."""

_JSON_TYPE: _Header = (b"Content-Type", b"content-type", b"application/json")
_NO_LENGTH: _Header = (b"Content-Length", b"content-length", b"0")
_EMPTY_BODY_LENGTH = frozenset({"POST", "PUT", "PATCH"})
"""Methods httpx sends ``Content-Length: 0`` for when they have no body."""


def _name(text: str) -> tuple[bytes, bytes]:
    """A header name as sent and in lower case (the signing headers' few names, kept)."""
    known = _NAMES.get(text)
    if known is None:
        raw = text.encode("ascii")
        known = _NAMES[text] = (raw, raw.lower())
    return known


_NAMES: dict[str, tuple[bytes, bytes]] = {}


def _request(
    method: str, url: httpx.URL, headers: list[_Header], content: bytes, extensions: dict[str, Any]
) -> httpx.Request:
    """``httpx.Request(method, url, headers=[(name, value), ...], stream=ByteStream(content),
    extensions=...)``, read (as httpx reads a body given whole); ``method`` in upper case, each
    header as httpx keeps it. Made by :func:`_direct` when :data:`FAST_REQUESTS`."""
    if FAST_REQUESTS:
        return _direct(method, url, headers, content, extensions)
    request = httpx.Request(
        method,
        url,
        headers=[(k, v) for k, _, v in headers],
        stream=httpx.ByteStream(content),
        extensions=extensions,
    )
    request.read()
    return request


def _direct(
    method: str, url: httpx.URL, headers: list[_Header], content: bytes, extensions: dict[str, Any]
) -> httpx.Request:
    """The request :func:`_request` describes, its attributes set directly as this httpx lays
    them out (checked at import, :func:`_same_requests`), without its per-request normalising
    and copying: the headers are kept as given, the (immutable) URL is shared."""
    kept = httpx.Headers.__new__(httpx.Headers)
    kept._list = headers  # private: the layout of httpx 0.27 / 0.28
    kept._encoding = None
    request = httpx.Request.__new__(httpx.Request)
    request.method = method
    request.url = url
    request.headers = kept
    request.extensions = dict(extensions)
    request.stream = httpx.ByteStream(content)
    request._content = content
    return request


def _pieces(response: httpx.Response) -> Iterable[bytes]:
    """``response.iter_bytes()``; for an answer already read (an in-process transport's: the
    simulator's, in paper trading, the demo and the benchmarks) the one piece it would give —
    the content whole, nothing when empty — without its generator."""
    if response.is_stream_consumed:
        try:
            content = response.content
        except httpx.ResponseNotRead:  # consumed unread: httpx says what it says
            return response.iter_bytes()
        return (content,) if content else ()
    return response.iter_bytes()


def _header(headers: httpx.Headers, name: bytes) -> str | None:
    """``headers.get(name)`` (``name`` in lower case): the values under that name joined by
    ", ", or None. Read from the list httpx keeps when :data:`FAST_REQUESTS`, without its
    lookups (each encodes the name and works the headers' encoding out)."""
    if not FAST_REQUESTS:
        found: str | None = headers.get(name.decode("ascii"))
        return found
    values = [value for _, key, value in headers._list if key == name]
    if not values:
        return None
    if len(values) == 1:  # nearly always: the one value, as the join below gives it
        (value,) = values
        return value.decode("ascii") if value.isascii() else value.decode(headers.encoding)
    if all(value.isascii() for value in values):  # each encoding httpx may choose reads these
        return ", ".join([value.decode("ascii") for value in values])
    return ", ".join([value.decode(headers.encoding) for value in values])


def _same_requests() -> bool:
    """Whether :func:`_direct` makes what httpx makes (this httpx's layout)."""
    pairs = [
        (b"Host", b"a.test"),
        (b"X-Sign", b"v=1"),
        (b"x-sign", b"2"),
        (b"Content-Length", b"3"),
    ]
    url = httpx.URL("https://a.test/p?q=1")
    extensions = {"timeout": {"connect": 1.0}}
    try:
        made = _direct("POST", url, [(k, k.lower(), v) for k, v in pairs], b"abc", extensions)
        built = httpx.Request(
            "POST", url, headers=pairs, stream=httpx.ByteStream(b"abc"), extensions=extensions
        )
        built.read()
        return bool(
            vars(made).keys() == vars(built).keys()
            and vars(made.headers) == vars(built.headers)
            and made.headers.raw == built.headers.raw
            and made.headers.multi_items() == built.headers.multi_items()
            and made.headers.encoding == built.headers.encoding
            and (made.method, made.url, made.extensions)
            == (built.method, built.url, built.extensions)
            and made.extensions is not extensions
            and made.read() == built.content == b"abc"
            and type(made.stream) is type(built.stream)
            and repr(made) == repr(built)
        )
    except Exception:  # an httpx laid out otherwise: let it build every request
        return False


FAST_REQUESTS: bool = _same_requests()
"""Whether requests are made directly, as httpx would make them (see :func:`_request`)."""
_URLS_MAX = 256
"""Addresses kept parsed (a few per symbol); the cache starts over when full."""


def _too_big(size: int, cap: int, *, more: bool = False) -> str:
    what = f"more than {cap}" if more else str(size)
    return f"answer of {what} bytes is larger than max_answer_bytes ({cap}); refused"
