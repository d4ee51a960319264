"""Reading the account snapshot: each endpoint once per cycle, however many strategies need it.

Instruments change rarely: they are cached for ``instruments_ttl_ms`` and re-read early when a
rejection suggests they moved (:meth:`SnapshotReader.invalidate_instruments`). History (closed
orders, fills, closed positions) is read only when a due strategy's expressions refer to it, and
only for the last ``history_window_ms``, oldest record first.

Reads change nothing, so a transient failure of one (429, 5xx, a lost connection or a timeout,
an expired timestamp, a garbled answer) is retried with backoff within ``ReadPolicy.attempts``
instead of losing the cycle: a 429's ``Retry-After`` is honoured, and an expired timestamp is
retried at once (the client has marked its clock for a re-sync before the next signed call).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from botkit.errors import MalformedResponse, RateLimited, TimestampExpired, TransientError
from botkit.exchange.models import Instrument, LimitPrice, PositionMode
from botkit.exchange.paging import iter_history
from botkit.exchange.port import ExchangePort
from botkit.rules import Strategy
from botkit.snapshot import Snapshot

__all__ = ["Needs", "ReadPolicy", "SnapshotReader", "needs_of"]

T = TypeVar("T")

HOUR_MS = 3_600_000


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    """How much the reader reads."""

    instruments_ttl_ms: int = HOUR_MS
    history_window_ms: int = 24 * HOUR_MS
    history_max_records: int = 500
    limit_prices: bool = True
    """Read ``/v3/market/limitPrice`` for each traded symbol (the live price band)."""
    attempts: int = 4
    """Tries of one read (the first included) when it fails transiently."""
    base_delay: float = 0.2
    """Seconds before the second try; doubled for each further one, up to ``max_delay``."""
    max_delay: float = 5.0
    max_retry_after: float = 30.0
    """A 429's ``Retry-After`` is honoured up to this many seconds."""


@dataclass(frozen=True, slots=True)
class Needs:
    """Which optional reads the due strategies' expressions need."""

    orders: bool = False
    fills: bool = False
    positions: bool = False
    window_ms: int = 0
    """How far back history must reach (the longest ``history.*`` window; 0: the policy's)."""
    bands: bool = False
    """An expression reads the price band (``price.buy_limit``, ``price.sell_limit``): it is
    read before evaluation. Otherwise the band is read only when a cycle has orders to check
    (:meth:`SnapshotReader.with_bands`)."""

    def __or__(self, other: Needs) -> Needs:
        return Needs(
            self.orders or other.orders,
            self.fills or other.fills,
            self.positions or other.positions,
            max(self.window_ms, other.window_ms),
            self.bands or other.bands,
        )


def needs_of(strategies: Iterable[Strategy]) -> Needs:
    """The history reads ``strategies`` refer to (from the context names their rules read)."""
    strategies = list(strategies)
    names = {name for s in strategies for r in s.rules for name in r.inputs.values()}
    return Needs(
        orders=any(n.startswith("history.orders") for n in names),
        fills=any(n.startswith("history.fills") for n in names),
        positions=any(n.startswith("history.positions") for n in names),
        window_ms=max((s.history_window_ms for s in strategies), default=0),
        bands=any(n.startswith(("price.buy_limit", "price.sell_limit")) for n in names),
    )


def _time_of(record: Any) -> int:
    return int(getattr(record, "uTime", None) or getattr(record, "cTime", None) or 0)


class SnapshotReader:
    """Builds a :class:`~botkit.snapshot.Snapshot` from an :class:`ExchangePort`."""

    def __init__(
        self,
        port: ExchangePort,
        policy: ReadPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.port = port
        self.policy = policy or ReadPolicy()
        self._sleep = sleep
        self._instruments: dict[str, Instrument] = {}
        self._instruments_read_ms: int | None = None

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        p = self.policy
        if isinstance(exc, TimestampExpired):
            return 0.0
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            return max(0.0, min(exc.retry_after, p.max_retry_after))
        delay: float = min(p.max_delay, p.base_delay * 2.0 ** (state.attempt_number - 1))
        return delay

    def _get(self, read: Callable[..., T], *args: Any) -> T:
        """One read, retried while it fails transiently (see the module doc).

        The first try runs without tenacity (a cycle makes several reads and nearly all succeed
        at once; building the retry machinery for each cost more than an in-process read). A
        failed first try is handed to tenacity as its first attempt, so the retries, their waits
        and the error raised at the end are the same as if tenacity had made it.
        """
        try:
            return read(*args)
        except (TransientError, MalformedResponse) as exc:
            failed: list[BaseException] = [exc]

        def attempt(*a: Any) -> T:
            if failed:
                raise failed.pop()
            return read(*a)

        retrying = Retrying(
            sleep=self._sleep,
            stop=stop_after_attempt(max(1, self.policy.attempts)),
            wait=self._wait,
            retry=retry_if_exception_type((TransientError, MalformedResponse)),
            reraise=True,
        )
        result: T = retrying(attempt, *args)
        return result

    def invalidate_instruments(self) -> None:
        """Read instrument limits again at the next cycle."""
        self._instruments_read_ms = None

    def instruments(self, now_ms: int) -> dict[str, Instrument]:
        """Instrument limits by symbol, from the cache while it is fresh."""
        read_at = self._instruments_read_ms
        if read_at is None or now_ms - read_at >= self.policy.instruments_ttl_ms:
            self._instruments = {i.symbol: i for i in self._get(self.port.instruments)}
            self._instruments_read_ms = now_ms
        return self._instruments

    def _history(self, page: Callable[..., Sequence[T]], now_ms: int, window_ms: int) -> list[T]:
        start = now_ms - (window_ms or self.policy.history_window_ms)

        def every_page() -> list[T]:  # a fresh walk on each try: a failed one is exhausted
            records = iter_history(page, start=start, end=now_ms, limit=100)
            return list(itertools.islice(records, self.policy.history_max_records))

        kept = self._get(every_page)
        kept.sort(key=_time_of)
        return kept

    def read(self, now_ms: int, symbols: Collection[str], needs: Needs = Needs()) -> Snapshot:
        """Everything the due strategies may read, as of ``now_ms`` (exchange time)."""
        port, get = self.port, self._get
        instruments = self.instruments(now_ms)
        tickers = {t.s: t for t in get(port.tickers)}
        limit_prices = self._bands(symbols, instruments) if needs.bands else {}
        mode = get(port.position_mode)
        balance = get(port.balance)
        positions = get(port.open_positions)
        open_orders = get(port.open_orders)
        if needs.orders or needs.fills or needs.positions:
            history = functools.partial(self._history, now_ms=now_ms, window_ms=needs.window_ms)
            order_history = history(port.order_history) if needs.orders else []
            fills = history(port.fills) if needs.fills else []
            closed = history(port.position_history) if needs.positions else []
        else:
            order_history, fills, closed = [], [], []
        return Snapshot(
            now_ms,
            balance,
            instruments,
            tickers,
            positions,
            open_orders,
            order_history,
            fills,
            closed,
            limit_prices,
            mode if isinstance(mode, PositionMode) else PositionMode(mode),
        )

    def _bands(
        self, symbols: Collection[str], instruments: dict[str, Instrument]
    ) -> dict[str, LimitPrice]:
        """The price band of each of ``symbols`` (``/v3/market/limitPrice``), when the policy
        reads bands at all."""
        if not self.policy.limit_prices:
            return {}
        get, read = self._get, self.port.limit_price
        return {s: get(read, s) for s in sorted(symbols) if s in instruments}

    def with_bands(self, snapshot: Snapshot, symbols: Collection[str]) -> Snapshot:
        """``snapshot`` with the price band of each of ``symbols`` it lacks, read now (for the
        orders of a cycle whose expressions did not need them). Raises like :meth:`read`."""
        missing = [s for s in symbols if s not in snapshot.limit_prices]
        bands = self._bands(missing, snapshot.instruments)
        if not bands:
            return snapshot
        return dataclasses.replace(snapshot, limit_prices={**snapshot.limit_prices, **bands})
