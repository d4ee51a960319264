"""The candle book: closed candles and their indicator series, kept across cycles.

One :class:`CandleBook` per engine holds, for each (symbol, interval) some strategy reads, the
series its expressions name (:class:`~botkit.rules.series.Series`, fed incrementally). A cycle
sees it through :meth:`CandleBook.at` (the snapshot's ``candles`` part): the first series of a
(symbol, interval) asked for in the cycle brings that feed up to the last candle **closed** at
the cycle's time — a candle whose ``sT + width <= now``; the one in progress is never read —
with one read for all strategies:

- the first time (or after a gap too long to bridge, or when a new series appears), the
  longest look-back its series declare (:attr:`~botkit.rules.series.Spec.lookback`: the warm-up
  derived from the expressions), in pages of at most 100 candles;
- later, only the candles closed since the last one read (none at all while the interval's
  current candle is still open), however many cycles passed without a read (up to
  :data:`BRIDGE` pages), so a series goes on step by step whatever the reading pattern.

The backtest reads the same way from the simulator, which holds only the candles replayed so
far: no look-ahead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from botkit.exchange.models import Candle
from botkit.rules.series import INTERVALS, Bar, Series, Spec

__all__ = ["PAGE", "CandleBook", "Fetch"]

PAGE = 100
"""Candles per read (the largest ``limit`` the client sends)."""

BRIDGE = 50
"""Pages a feed reads forward to bridge the candles closed since its last read (a rule that
did not read it for a while); a longer gap (5,000 candles: 3.5 days of minutes) warms it up
again from its look-back instead."""

Fetch = Callable[[str, str, int | None, int | None, int], list[Candle]]
"""(symbol, interval word, start, end, limit) → candles, oldest first (the exchange's read)."""

_WORDS = {
    "1m": "MINUTE_1",
    "5m": "MINUTE_5",
    "15m": "MINUTE_15",
    "30m": "MINUTE_30",
    "1h": "HOUR_1",
    "2h": "HOUR_2",
    "4h": "HOUR_4",
    "6h": "HOUR_6",
    "12h": "HOUR_12",
    "1d": "DAY_1",
}


@dataclass(slots=True)
class _Feed:
    """One (symbol, interval): its series in dependency order and the last candle read."""

    symbol: str
    interval: str
    specs: frozenset[Spec]
    series: dict[Spec, Series] = field(default_factory=dict)
    order: list[Series] = field(default_factory=list)
    last_start: int | None = None
    synced_at: int | None = None
    generation: int = 0

    def build(self) -> None:
        self.generation += 1
        self.series = {}
        self.order.clear()
        self.last_start = None
        for spec in sorted(self.specs, key=Spec.text):
            self._add(spec)

    def _add(self, spec: Spec) -> Series:
        if spec.fn == "prev":  # a look-back need only: its input is the series
            return self._add(spec.inputs[0])
        found = self.series.get(spec)
        if found is None:
            inputs = tuple(self._add(i) for i in spec.inputs)
            found = self.series[spec] = Series(spec, inputs, keep=1002)
            self.order.append(found)
        return found

    @property
    def lookback(self) -> int:
        return max((s.lookback for s in self.specs), default=1)

    def push(self, candles: Iterable[Candle], width: int, now_ms: int) -> None:
        last = self.last_start
        order = self.order
        for c in candles:
            if c.sT + width > now_ms or (last is not None and c.sT <= last):
                continue  # in progress, or read already
            bar: Bar = (float(c.open), float(c.high), float(c.low), float(c.close), float(c.qty))
            for series in order:
                series.push(bar)
            last = c.sT
        self.last_start = last


class CandleBook:
    """The engine's candles and series across cycles (see the module doc)."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self._feeds: dict[tuple[str, str], _Feed] = {}
        self._declared: Iterable[Spec] | None = None
        self._known: dict[int, tuple[Spec, _Feed, int, Series]] = {}
        """Specs asked for, by identity: (the spec, its feed, the feed's build, its series)."""
        self.reads = 0
        """Candle reads made so far (one per page)."""

    def at(self, now_ms: int, specs: Iterable[Spec] = ()) -> _CycleCandles:
        """The book as one cycle at ``now_ms`` sees it; ``specs`` are the (bound) series the
        due strategies declare, so each feed warms up for all of them at once."""
        if specs is self._declared:  # the same needs as the last cycle (the engine keeps them)
            return _CycleCandles(self, now_ms)
        self._declared = specs
        wanted: dict[tuple[str, str], set[Spec]] = {}
        for spec in specs:
            _collect(spec, wanted)
        for key, found in wanted.items():
            feed = self._feeds.get(key)
            if feed is None or not found <= feed.specs:
                self._refeed(key, found)
        return _CycleCandles(self, now_ms)

    def _refeed(self, key: tuple[str, str], specs: set[Spec]) -> _Feed:
        """A new feed for ``key`` with ``specs`` added to those it had (built, not read yet)."""
        feed = self._feeds.get(key)
        merged = frozenset(specs | (feed.specs if feed is not None else set()))
        if feed is not None:
            feed.generation += 1  # replaced: what was found through it is stale
        feed = self._feeds[key] = _Feed(key[0], key[1], merged)
        feed.build()
        return feed

    def _series(self, spec: Spec, now_ms: int) -> Series:
        hit = self._known.get(id(spec))  # a spec is hashed deep: found by identity first
        if hit is not None and hit[0] is spec and hit[1].generation == hit[2]:
            feed = hit[1]
            self._sync(feed, now_ms)
            if feed.generation == hit[2]:
                return hit[3]
        series = self._slow_series(spec, now_ms)
        feed = self._feeds[(spec.symbol or "", spec.interval)]
        self._known[id(spec)] = (spec, feed, feed.generation, series)
        return series

    def _slow_series(self, spec: Spec, now_ms: int) -> Series:
        key = (spec.symbol or "", spec.interval)
        feed = self._feeds.get(key)
        if feed is None or spec not in feed.series:
            feed = self._refeed(key, {spec})
        self._sync(feed, now_ms)
        return feed.series[spec]

    def _sync(self, feed: _Feed, now_ms: int) -> None:
        """Bring ``feed`` up to the last candle closed at ``now_ms``, once per cycle time (a
        failed read is tried again at the next access)."""
        if feed.synced_at != now_ms:
            self._read(feed, now_ms)
            feed.synced_at = now_ms

    def _read(self, feed: _Feed, now_ms: int) -> None:
        width = INTERVALS[feed.interval]
        last_closed = (now_ms // width - 1) * width
        last = feed.last_start
        if last is not None and last >= last_closed:
            return  # nothing has closed since the last read
        word = _WORDS[feed.interval]
        if last is not None and (last_closed - last) // width <= BRIDGE * PAGE:
            self._bridge(feed, word, width, last_closed, now_ms)
            return
        feed.build()  # first read, or a gap too long to bridge: warm up again
        pages: list[list[Candle]] = []
        end, need = last_closed, feed.lookback
        while need > 0:
            page = self._fetch(feed.symbol, word, None, end, min(PAGE, need))
            self.reads += 1
            page = [c for c in page if c.sT <= end]
            pages.append(page)
            need -= len(page)
            if len(page) < min(PAGE, need + len(page)) or not page:
                break  # the exchange has no older candles
            end = page[0].sT - width
        for page in reversed(pages):
            feed.push(page, width, now_ms)

    def _bridge(self, feed: _Feed, word: str, width: int, last_closed: int, now_ms: int) -> None:
        """Read every candle closed since the feed's last one, oldest first, a page at a time,
        so its series go on step by step (an indicator's value never depends on how often a
        rule happened to read it: a rule that short-circuits past it for hours gets the same
        EMA as one that reads it every minute)."""
        while feed.last_start is not None and feed.last_start < last_closed:
            before = feed.last_start
            fresh = self._fetch(feed.symbol, word, before + width, last_closed, PAGE)
            self.reads += 1
            feed.push(fresh, width, now_ms)
            if feed.last_start == before:
                return  # the exchange has nothing newer (a gap in its candles)


class _CycleCandles:
    """The book at one cycle's time (:class:`~botkit.snapshot.Candles`)."""

    __slots__ = ("_book", "_now_ms")

    def __init__(self, book: CandleBook, now_ms: int) -> None:
        self._book = book
        self._now_ms = now_ms

    def series(self, spec: Spec) -> Series:
        return self._book._series(spec, self._now_ms)


def _collect(spec: Spec, into: dict[tuple[str, str], set[Spec]]) -> None:
    into.setdefault((spec.symbol or "", spec.interval), set()).add(spec)
