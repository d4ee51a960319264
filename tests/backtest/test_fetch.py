"""Fetching candles: windows of one page, every candle once, paced, retried, and the same
against the simulator through the real client."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.backtest.bars import Bar
from botkit.backtest.fetch import fetch_candles
from botkit.errors import ExchangeRejected, RateLimited, ServerUnavailable
from botkit.exchange.models import Candle
from botkit.live.client import ExchangeClient
from botkit.sim.inprocess import SimHandle

T0 = 1_704_067_200_000
M = 60_000


def candle(t: int, interval: int = M) -> Candle:
    px = Decimal(100 + (t - T0) // M)
    return Candle(low=px - 1, high=px + 1, open=px, close=px, qty=Decimal(2), sT=t,
                  cT=t + interval - 1)  # fmt: skip


class FakeExchange:
    """Candles at every minute of ``times``; answers like an exchange that returns the newest
    ``limit`` rows of [sTime, eTime] (``newest=True``) or the oldest."""

    def __init__(self, times: list[int], *, newest: bool = False, overlap: bool = False) -> None:
        self.times = times
        self.newest = newest
        self.overlap = overlap
        self.asked: list[tuple[str, str, int | None, int | None, int | None]] = []
        self.failures: list[Exception] = []

    def candles(
        self,
        symbol: str,
        interval: str,
        *,
        start: int | None = None,
        end: int | None = None,
        limit: int | None = None,
    ) -> list[Candle]:
        self.asked.append((symbol, interval, start, end, limit))
        if self.failures:
            raise self.failures.pop(0)
        assert start is not None
        assert end is not None
        assert limit is not None
        low = start - M if self.overlap else start  # an exchange counting overlapping candles
        rows = [t for t in self.times if low <= t <= end]
        rows = rows[-limit:] if self.newest else rows[:limit]
        return [candle(t) for t in reversed(rows)]  # any order: the fetcher sorts


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def minutes(n: int, start: int = T0) -> list[int]:
    return [start + i * M for i in range(n)]


@pytest.mark.parametrize("newest", [False, True])
@pytest.mark.parametrize("overlap", [False, True])
def test_every_candle_is_fetched_once_in_windows_of_one_page(newest: bool, overlap: bool) -> None:
    exchange = FakeExchange(minutes(250), newest=newest, overlap=overlap)
    clock = Clock()
    result = fetch_candles(exchange, "BTC_USDT_PERP", M, T0, T0 + 250 * M, page_size=100,
                           clock=clock, sleep=clock.sleep)  # fmt: skip
    assert [b.time_ms for b in result.bars] == minutes(250)
    assert result.bars[0] == Bar(T0, Decimal(100), Decimal(101), Decimal(99), Decimal(100),
                                 Decimal(2))  # fmt: skip
    assert (result.requests, result.expected, result.missing) == (3, 250, 0)
    assert exchange.asked == [
        ("BTC_USDT_PERP", "MINUTE_1", T0, T0 + 100 * M - 1, 100),
        ("BTC_USDT_PERP", "MINUTE_1", T0 + 100 * M, T0 + 200 * M - 1, 100),
        ("BTC_USDT_PERP", "MINUTE_1", T0 + 200 * M, T0 + 250 * M - 1, 100),
    ]


def test_requests_are_paced_to_the_rate() -> None:
    exchange = FakeExchange(minutes(30))
    clock = Clock()
    fetch_candles(exchange, "S", M, T0, T0 + 30 * M, page_size=10, max_rate=4.0,
                  clock=clock, sleep=clock.sleep)  # fmt: skip
    assert clock.slept == [0.25, 0.25]


def test_candles_outside_the_period_and_still_forming_are_dropped() -> None:
    exchange = FakeExchange(minutes(20))
    result = fetch_candles(exchange, "S", M, T0 + 5 * M, T0 + 15 * M, now_ms=T0 + 12 * M + 5,
                           max_rate=0)  # fmt: skip
    # the candle opening at +12 closes at +13: still forming at +12m5ms
    assert [b.time_ms for b in result.bars] == minutes(7, T0 + 5 * M)
    assert result.missing == 0


def test_missing_candles_are_counted() -> None:
    times = minutes(10)
    exchange = FakeExchange(times[:3] + times[6:])
    result = fetch_candles(exchange, "S", M, T0, T0 + 10 * M, max_rate=0)
    assert (len(result.bars), result.expected, result.missing) == (7, 10, 3)


def test_transient_errors_are_retried_with_backoff_and_retry_after() -> None:
    exchange = FakeExchange(minutes(5))
    exchange.failures = [ServerUnavailable("busy"), ServerUnavailable("busy"),
                         RateLimited("slow down", retry_after=7.5)]  # fmt: skip
    clock = Clock()
    result = fetch_candles(exchange, "S", M, T0, T0 + 5 * M, clock=clock, sleep=clock.sleep)
    assert len(result.bars) == 5
    assert clock.slept == [1.0, 2.0, 7.5]
    assert result.requests == 4


def test_rejection_is_not_retried() -> None:
    exchange = FakeExchange(minutes(5))
    exchange.failures = [ExchangeRejected(24102, "invalid candle interval")]
    with pytest.raises(ExchangeRejected):
        fetch_candles(exchange, "S", M, T0, T0 + 5 * M, max_rate=0)
    assert len(exchange.asked) == 1


def test_interval_without_an_exchange_word_is_refused() -> None:
    with pytest.raises(ValueError, match="the exchange has no 7m candles"):
        fetch_candles(FakeExchange([]), "S", 7 * M, T0, T0 + 70 * M)


# --- against the simulator, through the real client ---------------------------------------


def test_fetch_from_the_simulator_pages_through_the_client(
    sim_with_history: tuple[SimHandle, ExchangeClient],
) -> None:
    _sim, client = sim_with_history
    now = client.server_time()
    result = fetch_candles(client, "BTC_USDT_PERP", M, T0, T0 + 300 * M, page_size=100,
                           now_ms=now, max_rate=0)  # fmt: skip
    assert result.requests == 3
    assert len(result.bars) == 240
    assert result.missing == 0
    first, last = result.bars[0], result.bars[-1]
    assert first.time_ms == T0
    assert (first.open, first.high, first.low, first.close) == tuple(
        Decimal(x) for x in (100, 102, 99, 101)
    )
    assert last.time_ms == T0 + 239 * M


def test_five_minute_candles_from_the_simulator(
    sim_with_history: tuple[SimHandle, ExchangeClient],
) -> None:
    _sim, client = sim_with_history
    result = fetch_candles(client, "BTC_USDT_PERP", 5 * M, T0, T0 + 240 * M, page_size=10,
                           max_rate=0)  # fmt: skip
    assert len(result.bars) == 48
    assert result.requests == 5
    second = result.bars[1]  # minutes 5..9 of the hour
    assert (second.open, second.high, second.low, second.close) == tuple(
        Decimal(x) for x in (105, 111, 104, 110)
    )
