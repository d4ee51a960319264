"""Reading the account snapshot: each endpoint at most once per cycle, when first asked for.

Instruments change rarely: they are cached for ``instruments_ttl_ms`` and re-read early when a
rejection suggests they moved (:meth:`SnapshotReader.invalidate_instruments`). Every other part
(balance, tickers, positions, open orders, position mode, price band, history) is read the first
time an expression asks for it in a cycle, or when the cycle prefetches it (the planner's
parts, before anything is sent), and kept for that cycle — however many strategies ask
(:meth:`~botkit.snapshot.Snapshot.deferred`; one typed read per part, no lookup by name). A
read that fails past its retries raises :class:`~botkit.errors.ReadFailed`, naming the part.
History (closed orders, fills, closed positions) reaches back the due strategies' longest
window (``history_window_ms`` by default), oldest record first.

Reads change nothing, so a transient failure of one (429, 5xx, a lost connection or a timeout,
an expired timestamp, a garbled answer) is retried with backoff within ``ReadPolicy.attempts``
instead of losing the cycle, under :mod:`botkit.retry`'s rules: a 429's ``Retry-After`` is
honoured (up to :data:`~botkit.retry.MAX_RETRY_AFTER`), and an expired timestamp is retried at
once (the client has marked its clock for a re-sync before the next signed call).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from loguru import logger

from botkit.errors import (
    ExchangeError,
    MalformedResponse,
    ReadFailed,
    TransientError,
)
from botkit.exchange.models import (
    Balance,
    Candle,
    Fill,
    Instrument,
    LimitPrice,
    OpenOrder,
    Order,
    Position,
    PositionHistory,
    PositionMode,
    Ticker,
)
from botkit.exchange.paging import iter_history
from botkit.exchange.port import ExchangeReads
from botkit.exchange.queries import FillQuery, HistoryQuery, OrderQuery, PositionQuery
from botkit.retry import Retry, backoff, tries, wait_answer
from botkit.rules import Strategy
from botkit.rules.series import Spec
from botkit.runner.candles import CandleBook
from botkit.snapshot import Candles, Part, Snapshot

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


@dataclass(frozen=True, slots=True)
class Needs:
    """What the due strategies' expressions imply for the reads (the parts themselves are read
    when first asked for: see :meth:`SnapshotReader.read`)."""

    window_ms: int = 0
    """How far back history must reach (the longest ``history.*`` window; 0: the policy's)."""
    series: frozenset[Spec] = frozenset()
    """The candle series the expressions name, bound to their symbols: which (symbol,
    interval) to read and how far back to warm up."""


def needs_of(strategies: Iterable[Strategy]) -> Needs:
    """What ``strategies`` imply for the reads."""
    strategies = tuple(strategies)
    return Needs(
        window_ms=max((s.history_window_ms for s in strategies), default=0),
        series=frozenset(spec.bind(s.symbol) for s in strategies for spec in s.series),
    )


def _time_of(record: Any) -> int:
    return int(getattr(record, "uTime", None) or getattr(record, "cTime", None) or 0)


class SnapshotReader:
    """Builds a :class:`~botkit.snapshot.Snapshot` from the exchange's reads."""

    def __init__(
        self,
        port: ExchangeReads,
        policy: ReadPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.port = port
        self.policy = policy or ReadPolicy()
        p = self.policy
        self._retry = Retry(
            retry_on=(TransientError, MalformedResponse),
            stop=tries(p.attempts),
            wait=wait_answer(backoff(p.base_delay, p.max_delay)),
            sleep=sleep,
        )
        self._instruments: dict[str, Instrument] = {}
        self._instruments_read_ms: int | None = None
        self._odd_named: set[tuple[str, str]] = set()
        self.candles = CandleBook(self._candles)
        """Closed candles and indicator series, kept across cycles."""

    def _candles(
        self, symbol: str, interval: str, start: int | None, end: int | None, limit: int
    ) -> list[Candle]:
        read = self.port.candles
        try:
            return self._get(lambda: read(symbol, interval, start=start, end=end, limit=limit))
        except ExchangeError as exc:
            raise ReadFailed(Part.CANDLES, exc) from exc

    def _get(self, read: Callable[..., T], *args: Any) -> T:
        """One read, retried while it fails transiently (see the module doc); the first try
        is bare (:meth:`botkit.retry.Retry.call`)."""
        return self._retry.call(read, *args)

    def invalidate_instruments(self) -> None:
        """Read instrument limits again at the next cycle."""
        self._instruments_read_ms = None

    def instruments(self, now_ms: int) -> dict[str, Instrument]:
        """Instrument limits by symbol, from the cache while it is fresh."""
        read_at = self._instruments_read_ms
        if read_at is None or now_ms - read_at >= self.policy.instruments_ttl_ms:
            self._instruments = {i.symbol: i for i in self._get(self.port.instruments)}
            self._instruments_read_ms = now_ms
            self._name_odd_statuses()
        return self._instruments

    def _name_odd_statuses(self) -> None:
        """Log each instrument whose status botkit does not know, once per (symbol, status)."""
        for symbol, instrument in sorted(self._instruments.items()):
            odd = instrument.odd_status
            if odd is not None and (symbol, odd) not in self._odd_named:
                self._odd_named.add((symbol, odd))
                logger.warning(
                    "instrument {} has status {!r}, which botkit does not know: no new orders"
                    " are placed on it until the exchange reports it OPEN",
                    symbol,
                    odd,
                )

    def _history(
        self,
        page: Callable[[Any], Sequence[T]],
        query: type[HistoryQuery],
        now_ms: int,
        window_ms: int,
    ) -> list[T]:
        start = now_ms - (window_ms or self.policy.history_window_ms)

        def every_page() -> list[T]:  # a fresh walk on each try: a failed one is exhausted
            records = iter_history(page, query(start=start, end=now_ms, limit=100))
            return list(itertools.islice(records, self.policy.history_max_records))

        kept = self._get(every_page)
        kept.sort(key=_time_of)
        return kept

    def read(self, now_ms: int, symbols: Collection[str], needs: Needs = Needs()) -> Snapshot:
        """The snapshot of the due strategies as of ``now_ms`` (exchange time), each part read
        when first asked for or prefetched (:meth:`Snapshot.deferred`), with the retries of a
        read; a read that fails past them raises :class:`~botkit.errors.ReadFailed`.

        Instrument limits come from the cache. The price band is read for ``symbols``; when
        that read fails the parts asking for it see none (the planner then checks orders
        against the instrument's own band around the mark), with a warning."""
        reads = _CycleReads(self, now_ms, symbols, needs.window_ms, needs.series)
        try:
            instruments = self.instruments(now_ms)
        except ExchangeError as exc:
            raise ReadFailed("instruments", exc) from exc
        return Snapshot.deferred(now_ms, instruments, reads)

    def _bands(self, symbols: Collection[str], now_ms: int) -> dict[str, LimitPrice]:
        """The price band of each of ``symbols`` (``/v3/market/limitPrice``) when the policy
        reads bands; none when the read fails (see :meth:`read`)."""
        if not self.policy.limit_prices:
            return {}
        instruments = self.instruments(now_ms)
        get, read = self._get, self.port.limit_price
        try:
            return {s: get(read, s) for s in sorted(symbols) if s in instruments}
        except ExchangeError as exc:
            logger.warning(
                "price band unavailable ({}); orders are checked against the instrument's"
                " band around the mark",
                exc,
            )
            return {}


class _CycleReads:
    """The reads of one cycle's snapshot (:class:`~botkit.snapshot.Reads`): each made through
    the reader, with its retries, when the snapshot first asks for its part; a read that fails
    past them raises :class:`~botkit.errors.ReadFailed` naming the part."""

    __slots__ = ("_now_ms", "_reader", "_series", "_symbols", "_window_ms")

    def __init__(
        self,
        reader: SnapshotReader,
        now_ms: int,
        symbols: Collection[str],
        window_ms: int,
        series: frozenset[Spec] = frozenset(),
    ) -> None:
        self._series = series
        self._reader = reader
        self._now_ms = now_ms
        self._symbols = symbols
        self._window_ms = window_ms

    def balance(self) -> Balance:
        return self._read(Part.BALANCE, self._reader.port.balance)

    def tickers(self) -> dict[str, Ticker]:
        return {t.s: t for t in self._read(Part.TICKERS, self._reader.port.tickers)}

    def positions(self) -> list[Position]:
        return self._read(Part.POSITIONS, self._reader.port.open_positions)

    def open_orders(self) -> list[OpenOrder]:
        return self._read(Part.OPEN_ORDERS, self._reader.port.open_orders)

    def position_mode(self) -> PositionMode:
        mode = self._read(Part.POSITION_MODE, self._reader.port.position_mode)
        return mode if isinstance(mode, PositionMode) else PositionMode(mode)

    def candles(self) -> Candles:
        return self._reader.candles.at(self._now_ms, self._series)

    def limit_prices(self) -> dict[str, LimitPrice]:
        return self._reader._bands(self._symbols, self._now_ms)  # a failed read: no band

    def order_history(self) -> list[Order]:
        return self._history(Part.ORDER_HISTORY, self._reader.port.order_history, OrderQuery)

    def fills(self) -> list[Fill]:
        return self._history(Part.FILLS, self._reader.port.fills, FillQuery)

    def position_history(self) -> list[PositionHistory]:
        return self._history(
            Part.POSITION_HISTORY, self._reader.port.position_history, PositionQuery
        )

    def _read(self, part: Part, read: Callable[[], T]) -> T:
        try:
            return self._reader._get(read)
        except ExchangeError as exc:
            raise ReadFailed(part, exc) from exc

    def _history(
        self, part: Part, page: Callable[[Any], Sequence[T]], query: type[HistoryQuery]
    ) -> list[T]:
        try:
            return self._reader._history(page, query, self._now_ms, self._window_ms)
        except ExchangeError as exc:
            raise ReadFailed(part, exc) from exc
