"""Download candles from ``/v3/market/candles`` through any :class:`CandleSource` (the client).

The period is cut into windows of exactly ``page_size`` candles and each window is asked for
with ``sTime`` = its first open time, ``eTime`` = one ms before the next window and
``limit = page_size``. A window can hold no more candles than the limit, so every candle is
returned whether the exchange pages from the oldest or the newest end, and whether ``eTime``
is inclusive or not. Rows arrive as ``[low, high, open, close, amt, qty, tC, sT, cT]``; the
client turns them into :class:`~botkit.exchange.models.Candle`; here they become bars
(time = ``sT``, volume = ``qty``), deduplicated by open time and sorted.

Requests are paced (``max_rate`` per second; the exchange allows about 20/s for candles) and
transient failures (timeouts, 5xx, 429 with its ``Retry-After`` up to
:data:`~botkit.retry.MAX_RETRY_AFTER`) are retried with :mod:`botkit.retry`'s waits: 1 s
doubling up to 30 s (a download can wait; the exchange gets room); time and sleep are injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from botkit.backtest.bars import Bar
from botkit.errors import TransientError
from botkit.exchange.models import Candle
from botkit.retry import Retry, backoff, tries, wait_answer
from botkit.timeparse import exchange_interval

__all__ = ["DEFAULT_PAGE_SIZE", "CandleSource", "FetchResult", "fetch_candles"]

DEFAULT_PAGE_SIZE = 100
"""The documented maximum page of the v3 queries, which the client enforces
(:data:`botkit.exchange.params.MAX_PAGE`); the live maximum for candles is not documented."""


class CandleSource(Protocol):
    """What fetching needs: ``candles`` of :class:`~botkit.exchange.port.MarketReads`."""

    def candles(
        self,
        symbol: str,
        interval: str,
        *,
        start: int | None = None,
        end: int | None = None,
        limit: int | None = None,
    ) -> list[Candle]: ...


@dataclass(frozen=True, slots=True)
class FetchResult:
    """The candles of [start, end), oldest first, and what it took."""

    bars: list[Bar]
    requests: int
    expected: int

    @property
    def missing(self) -> int:
        """Candles the period should hold that the exchange did not return."""
        return self.expected - len(self.bars)


def fetch_candles(
    source: CandleSource,
    symbol: str,
    interval_ms: int,
    start_ms: int,
    end_ms: int,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    now_ms: int | None = None,
    max_rate: float = 10.0,
    attempts: int = 5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    on_page: Callable[[int, int], None] | None = None,
) -> FetchResult:
    """Every candle of ``symbol`` opening in [``start_ms``, ``end_ms``).

    ``now_ms`` (the exchange's time) drops a candle still forming. ``on_page(done, total)``
    is called after each window. Errors other than transient ones propagate at once; a
    transient one propagates after ``attempts`` tries.
    """
    if page_size < 1:
        raise ValueError("page size must be at least 1")
    if end_ms <= start_ms:
        raise ValueError("the end of the period must be after its start")
    word = exchange_interval(interval_ms)
    span = page_size * interval_ms
    windows = [(w, min(w + span, end_ms)) for w in range(start_ms, end_ms, span)]
    gap = 1.0 / max_rate if max_rate > 0 else 0.0
    retry = Retry((TransientError,), tries(attempts), wait_answer(backoff(1.0, 30.0)), sleep)
    found: dict[int, Bar] = {}
    last_request: float | None = None
    requests = 0
    for done, (w_start, w_end) in enumerate(windows, start=1):
        if last_request is not None:
            wait = last_request + gap - clock()
            if wait > 0:
                sleep(wait)
        last_request = clock()

        def page(w_start: int = w_start, w_end: int = w_end) -> list[Candle]:
            nonlocal requests
            requests += 1
            return source.candles(symbol, word, start=w_start, end=w_end - 1, limit=page_size)

        for candle in retry.call(page):
            t = candle.sT
            if not start_ms <= t < end_ms or t in found:
                continue
            if now_ms is not None and t + interval_ms > now_ms:
                continue
            found[t] = Bar(t, candle.open, candle.high, candle.low, candle.close, candle.qty)
        if on_page is not None:
            on_page(done, len(windows))
    first = -(-start_ms // interval_ms) * interval_ms  # the first aligned open time
    stop = end_ms if now_ms is None else min(end_ms, now_ms - interval_ms + 1)
    expected = max(0, -(-(stop - first) // interval_ms), len(found))
    return FetchResult(bars=[found[t] for t in sorted(found)], requests=requests, expected=expected)
