"""The HTTP edge of the client: JSON in and out, and every failure mapped to one botkit error.

Pure functions over what httpx hands back (status, headers, body bytes, or an exception), so
the mapping is tested without a network. The rules (spec section 7 and the live-API notes):

* HTTP 429 or envelope code 429 → :class:`RateLimited` (``Retry-After`` seconds or HTTP date);
* HTTP 5xx, code 500 / 503 / 1002 → :class:`ServerUnavailable`;
* HTTP 408, or (unless the code is 401 / 403) a message saying the timestamp expired / is
  more than … from system time / breached the recvWindow → :class:`TimestampExpired` (the
  simulator's and the live texts);
* code 401 / 403 → :class:`AuthFailed`; 404 / 11008 / 21001 → :class:`NotFoundError`; any
  other code not 200 → :class:`ExchangeRejected` (code as number or string, ``msg`` or
  ``message``);
* a body that is not JSON, is cut short, lacks the envelope → :class:`MalformedResponse`
  (:class:`MalformedWriteResponse` for a write that got a 2xx: the order may exist);
* connect failures → :class:`ConnectFailed`; a read that times out or loses its connection →
  :class:`ReadTimedOut`; a write that may have left → :class:`OutcomeUnknown`.

Messages are one line and carry the :class:`RequestContext`, never a header or a secret.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import httpx

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
    RequestContext,
    ServerUnavailable,
    TimestampExpired,
)

__all__ = [
    "EXPIRED_PATTERN",
    "WRITE_METHODS",
    "dumps",
    "excerpt",
    "integer",
    "interpret",
    "is_write",
    "loads",
    "malformed",
    "map_transport_error",
    "parse_retry_after",
]

EXPIRED_PATTERN = re.compile(r"expired|signtimestamp is more than|recvwindow", re.IGNORECASE)
"""Texts of the expired-timestamp answer: the simulator's and both live ones."""

_NOT_FOUND = frozenset({404, 11008, 21001})
_UNAVAILABLE = frozenset({500, 503, 1002})
_AUTH = frozenset({401, 403})
_LEGACY_OK = frozenset({200, 200000})  # the v1 futures host answers "200000" on success


WRITE_METHODS = frozenset({"POST", "PUT", "DELETE", "PATCH"})
"""The methods that change state, in upper case (:func:`is_write`)."""


def is_write(method: str) -> bool:
    """POST, PUT, DELETE and PATCH change state; their fate matters when the answer is lost."""
    return method.upper() in WRITE_METHODS


def _json_default(value: object) -> object:
    if isinstance(value, Decimal):
        return format(value, "f")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dumps(value: Any) -> str:
    """Compact JSON, the exact text that is signed and sent. Decimals become plain strings.

    ``json.dumps(value, separators=(",", ":"), default=...)`` through one encoder made once
    (``json.dumps`` with options makes one per call)."""
    return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_json_default)


def loads(text: str | bytes) -> Any:
    """Parse JSON with every number that has a fraction (and NaN / Infinity) as ``Decimal``.

    What ``json.loads(text, parse_float=Decimal, parse_constant=Decimal)`` does (the same
    decoding of bytes, the same refusal of a byte-order mark in a text), through one decoder
    made once: ``json.loads`` with those options builds a decoder per call, a third of the
    cost of reading a short answer."""
    if isinstance(text, str):
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    elif isinstance(text, bytes | bytearray):
        # an object or a list whose second byte is not NUL has no byte-order mark and is
        # UTF-8 for json.detect_encoding: its answer without asking (nearly every answer)
        utf8 = text[:1] in _OPENERS and text[1:2] != b"\x00"
        text = text.decode("utf-8" if utf8 else json.detect_encoding(text), "surrogatepass")
    else:
        raise TypeError(
            f"the JSON object must be str, bytes or bytearray, not {type(text).__name__}"
        )
    return _DECODER.decode(text)


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=Decimal)
_OPENERS = (b"{", b"[")


def excerpt(body: bytes, limit: int = 80) -> str:
    """The first ``limit`` characters of a body, quoted so it stays on one line."""
    text = body[: limit * 4].decode("utf-8", errors="replace")
    short = text[:limit] + ("…" if len(text) > limit or len(body) > limit * 4 else "")
    return repr(short)


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def malformed(reason: str, context: RequestContext, *, write: bool) -> MalformedResponse:
    """The error for an unreadable answer; for a write that got HTTP 2xx, also OutcomeUnknown."""
    status = context.http_status
    accepted = status is None or 200 <= status < 300
    cls = MalformedWriteResponse if write and accepted else MalformedResponse
    return cls(f"malformed answer: {reason}", context=context)


def parse_retry_after(value: str | None, now_ms: int) -> float | None:
    """``Retry-After`` as seconds: a number of seconds, or an HTTP date relative to ``now_ms``."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - now_ms / 1000
    if seconds != seconds or seconds in {float("inf"), float("-inf")}:
        return None
    return max(seconds, 0.0)


def map_transport_error(
    exc: httpx.TransportError, context: RequestContext, *, write: bool
) -> ExchangeError:
    """An httpx failure as a botkit error: never left, a repeatable read, or an unknown write."""
    kind = type(exc).__name__
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return ConnectFailed(f"could not connect ({kind}: {_one_line(str(exc))})", context=context)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.ProxyError | httpx.LocalProtocolError):
        return ConnectFailed(f"request not sent ({kind}: {_one_line(str(exc))})", context=context)
    if write:
        return OutcomeUnknown(
            f"the request left but no answer came back ({kind}); look the orders up before "
            "sending again",
            context=context,
        )
    return ReadTimedOut(f"no answer ({kind}: {_one_line(str(exc))})", context=context)


def integer(value: Any, max_digits: int = 9) -> int | None:
    """``value`` (an int, an integral Decimal, or a string of ASCII digits) as an int of at
    most ``max_digits`` digits; None for anything else — infinities, a million-digit number,
    ``"²"`` — so a hostile answer is a malformed one, not a crash."""
    if type(value) is int:  # the usual answer code: no text made of it
        return value if -_TENS[max_digits] < value < _TENS[max_digits] else None
    if isinstance(value, str):  # a header's value (a text is none of the types below)
        text = value.strip()
        digits = text.removeprefix("-")
        if text.isascii() and digits.isdigit() and len(digits) <= max_digits:
            return int(text)
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if len(str(abs(value))) <= max_digits else None
    if isinstance(value, Decimal):
        limit = Decimal(10) ** max_digits
        if value.is_finite() and abs(value) < limit and value == value.to_integral_value():
            return int(value)
        return None
    return None


class _Powers(dict[int, int]):
    """``10 ** n`` by ``n``, each made once: an int has at most ``n`` digits when it lies
    strictly between ``-10 ** n`` and ``10 ** n``; below one digit nothing does (0 for ``n``
    below 1: no int lies strictly between -0 and 0)."""

    def __missing__(self, digits: int) -> int:
        power = self[digits] = 10**digits if digits >= 1 else 0
        return power


_TENS = _Powers()


def _code(value: Any) -> int | None:
    return integer(value)


def _message(raw: Any) -> tuple[str, bool]:
    """An answer's ``msg`` on one line (``""`` without one) and whether it says the timestamp
    expired (:data:`EXPIRED_PATTERN`). A text answered again (``"Success"`` every time) is
    worked out once (:data:`_MESSAGES`)."""
    if raw is None:
        return "", False
    if type(raw) is not str or len(raw) > _MESSAGE_KEPT_CHARS:
        text = _one_line(str(raw))
        return text, bool(text and EXPIRED_PATTERN.search(text))
    known = _MESSAGES.get(raw)
    if known is None:
        if len(_MESSAGES) >= _MESSAGES_MAX:
            _MESSAGES.clear()
        text = _one_line(raw)
        known = _MESSAGES[raw] = (text, bool(text and EXPIRED_PATTERN.search(text)))
    return known


_MESSAGES: dict[str, tuple[str, bool]] = {}
_MESSAGES_MAX = 256
"""Answer texts kept (a few come back every cycle); the cache starts over when full."""
_MESSAGE_KEPT_CHARS = 200
"""The longest text kept (an answer may be megabytes: none is held past its request)."""


def _is_envelope(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "code" in value
        and ("data" in value or "msg" in value or "message" in value)
    )


def interpret(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    context: RequestContext,
    *,
    write: bool,
    now_ms: int,
    envelope_required: bool = True,
) -> Any:
    """The ``data`` of a successful answer, or raise the error the answer means.

    ``envelope_required=False`` (the spot reference paths) also accepts a bare JSON payload,
    since the live reference endpoints answer without the v3 envelope.
    """
    ctx = (
        context
        if context.http_status == status
        else dataclasses.replace(context, http_status=status)
    )

    def bad(reason: str) -> MalformedResponse:
        return malformed(f"{reason}; body starts {excerpt(body)}", ctx, write=write)

    parsed: Any = None
    parse_problem = ""
    try:  # a blank body is no JSON either: told apart only when it fails (no copies of it)
        parsed = loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        parsed = None
        if not body.strip():
            parse_problem = "empty body"
        else:
            parse_problem = f"not JSON ({_one_line(str(exc), 60)})"

    envelope = parsed if _is_envelope(parsed) else None
    code = _code(envelope.get("code")) if envelope is not None else None
    raw_msg = envelope.get("msg", envelope.get("message")) if envelope is not None else None
    msg, expired = _message(raw_msg)

    if status == 429 or code == 429:
        retry_after = parse_retry_after(headers.get("retry-after"), now_ms)
        wait = f"; retry after {retry_after:g} s" if retry_after is not None else ""
        raise RateLimited(f"rate limited{wait}", retry_after=retry_after, context=ctx)
    auth = code in _AUTH or status in _AUTH
    if status == 408 or code == 408 or (expired and not auth):
        text = msg or f"HTTP {status}"
        raise TimestampExpired(f"timestamp expired: {text}", context=ctx)
    if status >= 500 or code in _UNAVAILABLE:
        detail = f"code {code}: {msg}" if code is not None else f"HTTP {status}"
        raise ServerUnavailable(f"exchange unavailable ({detail})", context=ctx)
    if parse_problem:
        raise bad(parse_problem)
    if envelope is None:
        if envelope_required or not 200 <= status < 300:
            raise bad("no code/msg/data envelope")
        return parsed
    if envelope.get("code") is not None and code is None:
        raise bad(f"envelope code {envelope.get('code')!r} is not a number")
    if code in _LEGACY_OK and 200 <= status < 300:
        if "data" not in envelope:
            raise bad("envelope without data")
        return envelope["data"]
    effective = code if code is not None and code not in _LEGACY_OK else status
    text = msg or f"HTTP {status}"
    if effective in _AUTH:
        raise AuthFailed(effective, text, context=ctx)
    if effective in _NOT_FOUND:
        raise NotFoundError(effective, text, context=ctx)
    raise ExchangeRejected(effective, text, context=ctx)
