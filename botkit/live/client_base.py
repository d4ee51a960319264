"""``ClientBase``: the plumbing under :class:`~botkit.live.client.ExchangeClient`.

Owns the :class:`~botkit.live.session.Session` (httpx, signing, error mapping) and the
:class:`~botkit.live.clock.ClockSync`, and turns answers into models: a payload the models
refuse is a :class:`~botkit.errors.MalformedResponse` naming the field. The endpoint methods
live in :mod:`botkit.live.market_data` (unsigned) and :mod:`botkit.live.client`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar, get_args, get_origin
from urllib.parse import quote

import httpx
from pydantic import SecretStr, TypeAdapter, ValidationError

from botkit.errors import RequestContext
from botkit.exchange.signing import Scheme
from botkit.live import http
from botkit.live.clock import ClockSync, SyncSample
from botkit.live.session import MAX_ANSWER_BYTES, Session

__all__ = ["ClientBase", "as_list", "first", "model_problem", "path_segment"]

T = TypeVar("T")


def as_list(data: Any) -> list[Any]:
    """Endpoints answer an object for one symbol and a list for all: always a list."""
    if data is None:
        return []
    return data if isinstance(data, list) else [data]


def first(data: Any) -> Any:
    """The first item of a list answer, or the object itself; None when empty."""
    items = as_list(data)
    return items[0] if items else None


class ClientBase:
    """Session, clock and parsing shared by the endpoint methods."""

    def __init__(
        self,
        base_url: str,
        *,
        key: str = "",
        secret: str | SecretStr = "",
        passphrase: str | SecretStr = "",
        signing: Scheme = "v3",
        clock: ClockSync | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 10.0,
        recv_window: int | None = None,
        deadline: float | None = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock if clock is not None else ClockSync()
        self._session = Session(
            base_url,
            key=key,
            secret=secret if isinstance(secret, SecretStr) else SecretStr(secret),
            passphrase=passphrase if isinstance(passphrase, SecretStr) else SecretStr(passphrase),
            signing=signing,
            clock=self.clock,
            transport=transport,
            timeout=timeout,
            recv_window=recv_window,
            deadline=deadline,
            max_answer_bytes=max_answer_bytes,
            monotonic=monotonic,
        )
        self.clock.bind(self._session.server_time)

    def __repr__(self) -> str:
        s = self._session
        return f"{type(self).__name__}(base_url={s.base_url!r}, signing={s.signing!r})"

    __str__ = __repr__

    @property
    def base_url(self) -> str:
        return self._session.base_url

    @property
    def signing(self) -> Scheme:
        return self._session.signing

    def close(self) -> None:
        """Close the connection pool."""
        self._session.close()

    def __enter__(self: T) -> T:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- plumbing ------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        signed: bool,
        params: dict[str, str | None] | None = None,
        body: Any = None,
        body_text: str | None = None,
        ids: Sequence[str] = (),
        envelope_required: bool = True,
        scheme: Scheme | None = None,
    ) -> tuple[Any, RequestContext]:
        return self._session.request(
            method,
            path,
            params=params,
            body=body,
            body_text=body_text,
            signed=signed,
            scheme=scheme,
            client_order_ids=ids,
            envelope_required=envelope_required,
        )

    @staticmethod
    def _parse(kind: type[T], data: Any, ctx: RequestContext) -> T:
        try:
            parsed: T = _adapter(kind).validate_python(data)
        except (ValidationError, ValueError, TypeError) as exc:
            problem = model_problem(kind, exc)
            raise http.malformed(problem, ctx, write=http.is_write(ctx.method)) from exc
        return parsed

    def _get(self, kind: type[T], path: str, *, signed: bool, **params: str | None) -> T:
        data, ctx = self._call("GET", path, signed=signed, params=params)
        return self._parse(kind, data, ctx)

    def _get_list(self, kind: type[T], path: str, *, signed: bool, **params: str | None) -> list[T]:
        data, ctx = self._call("GET", path, signed=signed, params=params)
        return self._parse(list[kind], as_list(data), ctx)  # type: ignore[valid-type]

    # --- 4.1 reference data (unsigned) ---------------------------------------------------

    def server_time(self) -> int:
        """``GET /timestamp``: the exchange's clock in ms."""
        return self._session.server_time()

    def resync_clock(self) -> SyncSample:
        """Measure the offset to the server clock now (after :class:`TimestampExpired`)."""
        return self.clock.resync()


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(kind: Any) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    return adapter


def model_problem(kind: Any, exc: Exception) -> str:
    """One line saying which model refused which field, and why."""
    args = get_args(kind)
    inner = args[0] if get_origin(kind) is list and args else kind
    name = getattr(inner, "__name__", str(inner))
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "payload"
        return f"{name} payload refused at {where}: {first['msg']}"
    return f"{name} payload refused: {exc}"


def path_segment(value: str) -> str:
    """A value placed in a URL path, percent-encoded."""
    return quote(value, safe="")
