"""The simulator's HTTP core: one request in (method, path, raw query, headers, body), one
:class:`SimResponse` out. Pure and synchronous; the in-process transport and the loopback server
are thin shells around :meth:`SimHttp.handle`.

Per request, under one lock around the engine: apply the fault plan's clock skew; ask the plan
for faults; unless a fault answers without processing, step the engine (on wall time), check the
signature of non-public paths (:mod:`botkit.sim.auth`), parse the query and the JSON body
(``parse_float=Decimal``), call :meth:`SimApi.call`, and send the result in the exchange's shape
(Decimals as strings): bare for the reference-data paths of spec 4.1
(:func:`botkit.sim.api.is_reference`: ``/markets``, ``/currencies``, ``/timestamp`` ...), inside
the v3 envelope ``{"code": 200, "msg": "Success", "data": ...}`` for every other path (spec
section 1). A ``SimError`` becomes its code, msg and HTTP status — ``{"code", "msg", "data":
null}`` on an enveloped path, ``{"code", "msg"}`` on a reference path; anything unexpected
becomes HTTP 500 code 500. docs/simulator-http.md has the table of every path.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qsl

from pydantic import BaseModel

from botkit.clock import Clock
from botkit.sim.api import SimError, is_reference
from botkit.sim.auth import Authenticator, AuthRefused, expired_message
from botkit.sim.config import AuthConfig
from botkit.sim.faults import FaultKind, FaultPlan, FaultRule

__all__ = ["SimHttp", "SimResponse", "bare_bytes", "envelope_bytes"]

_JSON = "application/json"
_HTML_PAGE = (
    b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
    b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)


class _Api(Protocol):
    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any: ...

    def is_public(self, method: str, path: str) -> bool: ...


@runtime_checkable
class _Durable(Protocol):
    """An API that saves its changes (:class:`~botkit.sim.state.PersistentApi`): after every
    call while ``saving``; else when :meth:`flush` is called."""

    saving: bool

    def unsaved(self) -> bool: ...

    def flush(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SimResponse:
    """An answer: status, headers, body bytes; ``delay_s`` to wait first; ``drop`` the connection
    instead of delivering the body (the request may or may not have been processed).

    ``drip_s`` > 0: the body goes ``chunk_bytes`` at a time with this pause between chunks;
    ``pad_to`` > len(body): the body is followed by spaces up to that many bytes (made as they
    are sent, never held whole). :meth:`chunks` yields the body as a shell should send it."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay_s: float = 0.0
    drop: bool = False
    drip_s: float = 0.0
    chunk_bytes: int = 1
    pad_to: int = 0

    @property
    def length(self) -> int:
        """The Content-Length of the answer."""
        return max(len(self.body), self.pad_to)

    def chunks(self) -> Iterator[bytes]:
        """The body in the pieces a shell sends: dripped, padded, or whole."""
        if self.drip_s > 0:
            size = max(1, self.chunk_bytes)
            for start in range(0, len(self.body), size):
                yield self.body[start : start + size]
            return
        yield self.body
        left = self.pad_to - len(self.body)
        while left > 0:
            piece = min(left, _PAD_CHUNK)
            yield _PAD[:piece]
            left -= piece


_PAD_CHUNK = 1 << 16
_PAD = b" " * _PAD_CHUNK


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")


def bare_bytes(payload: Any) -> bytes:
    """``payload`` as compact JSON bytes (Decimals as plain decimal strings), no envelope."""
    return json.dumps(
        payload, default=_json_default, separators=(",", ":"), ensure_ascii=False
    ).encode()


def envelope_bytes(code: int, msg: str, data: Any) -> bytes:
    """The v3 envelope as compact JSON bytes (Decimals as plain decimal strings)."""
    return bare_bytes({"code": code, "msg": msg, "data": data})


def _answer(
    status: int, code: int, msg: str, data: Any = None, *, bare: bool = False, **extra: str
) -> SimResponse:
    """An answer with ``code`` and ``msg``: the v3 envelope, or (``bare``: a reference-data
    path, which has no envelope) just ``{"code", "msg"}``."""
    body = bare_bytes({"code": code, "msg": msg}) if bare else envelope_bytes(code, msg, data)
    return SimResponse(status, {"content-type": _JSON, **extra}, body)


class SimHttp:
    """The request handler over a :class:`~botkit.sim.api.SimApi`; thread-safe.

    ``step`` (usually ``engine.step``) is called before each processed request when given — pass
    it on wall time so the market moves between requests; leave it out on a manual clock.
    """

    def __init__(
        self,
        api: _Api,
        *,
        clock: Clock,
        auth: AuthConfig,
        faults: FaultPlan | None = None,
        step: Callable[[], None] | None = None,
    ) -> None:
        self.api = api  # also decides, once, whether it is durable (the ``api`` setter)
        self.clock = clock
        self.faults = faults if faults is not None else FaultPlan(clock=clock)
        self.lock = threading.RLock()
        self.requests = 0
        self._auth = Authenticator(auth)
        self._step = step
        self._applied_skew = 0
        self._held: list[tuple[int, str, str, str, dict[str, str], bytes]] = []
        """Requests of ``late`` faults: (due server ms, method, path, query, headers, body)."""

    @property
    def api(self) -> _Api:
        """The wire API answering the requests (tests may put a wrapper in its place)."""
        return self._api

    @api.setter
    def api(self, api: _Api) -> None:
        self._api = api
        # a runtime protocol check costs about as much as answering a read: once, not per request
        self._durable: _Durable | None = api if isinstance(api, _Durable) else None

    @property
    def authenticator(self) -> Authenticator:
        return self._auth

    def set_auth(self, auth: AuthConfig) -> None:
        """Accept other keys, schemes or tolerance from now on."""
        with self.lock:
            self._auth = Authenticator(auth)

    def handle(
        self,
        method: str,
        path: str,
        raw_query: str,
        headers: Mapping[str, str],
        body: bytes,
        *,
        defer_save: bool = False,
    ) -> SimResponse:
        """Answer one request; ``headers`` may use any letter case.

        ``defer_save``: a kept paper account is not saved before this returns; the caller
        must not let the answer leave before :meth:`unsaved` is False or :meth:`flush` has
        succeeded (group commit: one transaction for several answers)."""
        method = method.upper()
        durable = self._durable
        if defer_save and durable is not None:
            with self.lock:
                durable.saving = False
                try:
                    return self.handle(method, path, raw_query, headers, body)
                finally:
                    durable.saving = True
        with self.lock:
            self.requests += 1
            now = self._now()
            self._deliver_held(now)
            decision = self.faults.decide(method, path, now)
            fault = decision.fault
            if fault is not None and fault.kind is FaultKind.LATE:
                due = now + fault.delay_ms
                self._held.append((due, method, path, raw_query, dict(headers), body))
                held = replace(_answer(200, 200, "Success"), drop=True)
                return replace(held, delay_s=decision.delay_s + fault.delay_ms / 1000)
            if decision.processed:
                response = self._process(method, path, raw_query, headers, body, now)
            else:
                response = SimResponse(0)
        if fault is not None:
            response = self._faulted(fault, response, bare=is_reference(path))
        if decision.delay_s:
            response = replace(response, delay_s=decision.delay_s)
        return response

    def unsaved(self) -> bool:
        """Whether a kept paper account has changes its file does not have yet (after
        requests handled with ``defer_save``)."""
        durable = self._durable
        with self.lock:
            return durable is not None and durable.unsaved()

    def flush(self) -> bool:
        """Save a kept paper account's changes in one transaction; False when that failed
        (the answers waiting for it must not report success: see :meth:`unsaved_answer`)."""
        durable = self._durable
        with self.lock:
            if durable is None:
                return True
            try:
                durable.flush()
            except Exception:  # PaperStateError; every later request is refused with 503
                return False
            return True

    @staticmethod
    def unsaved_answer(path: str) -> SimResponse:
        """The answer in place of one whose changes could not be saved (as a save failing
        inside the call answers: HTTP 500)."""
        msg = "System exception: PaperStateError"
        return _answer(500, 500, msg, bare=is_reference(path))

    def deliver_held(self) -> int:
        """Process the ``late`` requests whose time has come; returns how many are still held.
        (Each request handled does this first; call it to let the clock alone deliver them.)"""
        with self.lock:
            self._deliver_held(self._now())
            return len(self._held)

    # --- internals ---------------------------------------------------------------------------

    def _deliver_held(self, now: int) -> None:
        """Requests delayed by a ``late`` fault reach the engine once their time has come, in
        arrival order, judged (clock rule included) at their arrival; answers go nowhere."""
        if not self._held:
            return
        due = [h for h in self._held if h[0] <= now]
        if not due:
            return
        self._held = [h for h in self._held if h[0] > now]
        for at, method, path, raw_query, headers, body in sorted(due, key=lambda h: h[0]):
            self._process(method, path, raw_query, headers, body, at)

    def _now(self) -> int:
        skew = self.faults.skew_ms
        if skew != self._applied_skew:
            offset = getattr(self.clock, "offset_ms", None)
            if isinstance(offset, int):
                self.clock.offset_ms = offset + skew - self._applied_skew  # type: ignore[attr-defined]
                self._applied_skew = skew
        return self.clock.now_ms()

    def _process(
        self,
        method: str,
        path: str,
        raw_query: str,
        headers: Mapping[str, str],
        body: bytes,
        now: int,
    ) -> SimResponse:
        if self._step is not None:
            self._step()
        bare = is_reference(path)
        try:
            if not self.api.is_public(method, path):
                lower = {k.lower(): v for k, v in headers.items()}
                self._auth.verify(method, path, raw_query, lower, body, now)
        except AuthRefused as refused:
            return _answer(refused.http_status, refused.code, refused.msg, bare=bare)
        query = dict(parse_qsl(raw_query, keep_blank_values=True))
        payload: Any | None = None
        if body.strip():
            try:
                payload = json.loads(body, parse_float=Decimal)
            except (ValueError, UnicodeDecodeError):
                msg = "Param error: the request body is not valid JSON"
                return _answer(400, 400, msg, bare=bare)
        try:
            data = self.api.call(method, path, query, payload)
        except SimError as err:
            return _answer(err.http_status, err.code, err.msg, bare=bare)
        except Exception as exc:  # the simulator must answer, never crash its server
            return _answer(500, 500, f"System exception: {type(exc).__name__}", bare=bare)
        try:
            out = bare_bytes(data) if bare else envelope_bytes(200, "Success", data)
        except (TypeError, ValueError) as exc:
            return _answer(500, 500, f"System exception: {exc}", bare=bare)
        return SimResponse(200, {"content-type": _JSON}, out)

    def _faulted(self, fault: FaultRule, processed: SimResponse, *, bare: bool) -> SimResponse:
        """The answer ``fault`` makes of ``processed`` (error bodies in the path's shape)."""
        kind = fault.kind
        if kind is FaultKind.DROP_AFTER or kind is FaultKind.DROP_BEFORE:
            base = processed if processed.status else _answer(200, 200, "Success")
            return replace(base, drop=True)
        if kind is FaultKind.HTTP_500:
            return _answer(fault.status or 500, 500, "System exception", bare=bare)
        if kind is FaultKind.HTTP_503:
            msg = "Service degraded, try again later"
            return _answer(fault.status or 503, 503, msg, bare=bare)
        if kind is FaultKind.RATE_LIMIT:
            extra = {}
            if fault.retry_after is not None:
                extra["retry-after"] = format(Decimal(str(fault.retry_after)).normalize(), "f")
            return _answer(fault.status or 429, 429, "Too many requests", bare=bare, **extra)
        if kind is FaultKind.EXPIRED:
            msg = expired_message(self._auth.tolerance_ms)
            return _answer(fault.status or 400, 400, msg, bare=bare)
        if kind is FaultKind.HTML:
            return SimResponse(fault.status or 200, {"content-type": "text/html"}, _HTML_PAGE)
        if kind is FaultKind.EMPTY:
            return SimResponse(fault.status or 200, {"content-type": _JSON}, b"")
        if kind is FaultKind.DRIP or kind is FaultKind.HUGE:
            base = processed if processed.status else _answer(200, 200, "Success")
            if kind is FaultKind.DRIP:
                return replace(base, drip_s=fault.delay_ms / 1000, chunk_bytes=fault.chunk_bytes)
            return replace(base, pad_to=fault.size_bytes)
        if kind is FaultKind.TRUNCATED:
            empty = bare_bytes([]) if bare else envelope_bytes(200, "Success", [])
            full = processed.body if processed.status else empty
            cut = full[: max(1, len(full) // 2)]
            return SimResponse(
                fault.status or processed.status or 200, {"content-type": _JSON}, cut
            )
        return processed  # pragma: no cover - latency never decides the answer
