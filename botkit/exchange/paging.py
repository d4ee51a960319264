"""Walking history pages (``from`` / ``limit`` / ``direct``) and splitting long time ranges.

The v3 history queries answer at most ``limit`` (≤ 100) records a page and look at most 90
days back by default. :func:`iter_history` splits ``[start, end]`` into windows of
``window_ms`` and, in each window, asks page after page, each starting ``from`` the id of the
last record seen, until a page comes back short. A record is yielded once: ids already seen
(a window boundary, an overlapping page) are skipped, and a page that brings nothing new ends
its window, so a server that ignores ``from`` cannot trap the loop.

Works with any page function taking a query (:mod:`botkit.exchange.queries`), e.g.
``iter_history(client.fills, FillQuery(symbol="BTC_USDT_PERP", start=…, end=…))``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from botkit.errors import RequestValidationError
from botkit.exchange.queries import HistoryQuery

__all__ = [
    "DEFAULT_WINDOW_MS",
    "iter_history",
    "iter_pages",
    "record_id",
    "time_windows",
]

DEFAULT_WINDOW_MS = 90 * 24 * 3600 * 1000
"""The exchange's default look-back: 90 days."""

T = TypeVar("T")
Q = TypeVar("Q", bound=HistoryQuery)


def record_id(record: Any) -> str:
    """The paging id of a record: ``id`` (fills, positions), else ``ordId`` (orders)."""
    for name in ("id", "ordId", "trdId"):
        value = getattr(record, name, None)
        if value:
            return str(value)
    raise ValueError(f"record has no id to page by: {type(record).__name__}")


def time_windows(start: int, end: int, window_ms: int) -> Iterator[tuple[int, int]]:
    """``[start, end]`` as consecutive windows of at most ``window_ms``, oldest first."""
    if window_ms <= 0:
        raise RequestValidationError(f"window_ms {window_ms} must be > 0")
    if start > end:
        raise RequestValidationError(f"start time {start} is after end time {end}")
    low = start
    while True:
        high = min(low + window_ms, end)
        yield low, high
        if high >= end:
            return
        low = high


def iter_pages(
    fetch: Callable[[str | None, int], Sequence[T]],
    *,
    limit: int,
    key: Callable[[T], str] = record_id,
    seen: set[str] | None = None,
    max_pages: int = 10_000,
) -> Iterator[T]:
    """Pages of ``fetch(from_id, limit)`` until a short page, a page with nothing new, or
    ``max_pages``; records whose key is in ``seen`` are skipped (and new keys added to it)."""
    if not 1 <= limit <= 100:
        raise RequestValidationError(f"limit {limit} is outside 1..100")
    seen = set() if seen is None else seen
    from_id: str | None = None
    for _ in range(max_pages):
        page = fetch(from_id, limit)
        fresh = 0
        for record in page:
            ident = key(record)
            if ident in seen:
                continue
            seen.add(ident)
            fresh += 1
            yield record
        if len(page) < limit or fresh == 0:
            return
        from_id = key(page[-1])


def iter_history(
    fetch_page: Callable[[Q], Sequence[T]],
    query: Q,
    *,
    window_ms: int = DEFAULT_WINDOW_MS,
    key: Callable[[T], str] = record_id,
) -> Iterator[T]:
    """Every record ``query`` selects between its ``start`` and ``end`` (Unix ms, both needed),
    window by window, page by page: ``limit`` records a page (100 when unset), ``direct``
    NEXT when unset; ``from_id`` is the walk's own (set per page)."""
    if query.start is None or query.end is None:
        raise RequestValidationError("a history walk needs a start and an end time")
    limit = 100 if query.limit is None else query.limit
    direct = query.direct or "NEXT"
    seen: set[str] = set()
    for low, high in time_windows(query.start, query.end, window_ms):

        def fetch(from_id: str | None, size: int, low: int = low, high: int = high) -> Sequence[T]:
            page = replace(query, start=low, end=high, from_id=from_id, limit=size, direct=direct)
            return fetch_page(page)

        yield from iter_pages(fetch, limit=limit, key=key, seen=seen)
