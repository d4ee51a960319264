"""A seeded synthetic candle series: a geometric random walk with trend, volatility and jumps.

Per candle the log price moves by ``trend·dt + volatility·√dt·z`` (``z`` standard normal,
``dt`` the interval as a fraction of a 365-day year), plus with probability ``jump_prob`` a
jump of ``jump_size·z'``. The candle's open is the previous close; high and low extend the
body by exponential wicks; volume grows with the size of the move. Prices are integers of
``tick`` turned into ``Decimal`` (``start_price`` is rounded to the tick), never below one tick.

The walk runs on ``random.Random(seed)`` and floats (model maths, not money); the same
parameters give the same bars, and so the same file bytes, on every run.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from botkit.backtest.bars import Bar
from botkit.timeparse import MAX_MS, format_time

__all__ = ["YEAR_MS", "SynthOverflow", "SynthParams", "synth_bars"]

YEAR_MS = 365 * 86_400_000
_VOLUME_STEP = Decimal("0.001")
_LIMITS = {"trend": 1000.0, "volatility": 100.0, "jump_size": 100.0}
"""The largest |value| accepted per parameter (per year for trend and volatility; log price for
a jump): far beyond any market, and small enough that a candle's wicks stay finite."""
_MAX_LOG_TICKS = math.log(1e18)
_MAX_TICKS = Decimal("1e18")
"""A price of more than 1e18 ticks is no market's (and the wicks' ``exp`` stays finite)."""


class SynthOverflow(ValueError):
    """The walk left the numbers a price can be made of (the parameters are too extreme for
    the length of the series); the message says at which candle and what to change."""


@dataclass(frozen=True, slots=True)
class SynthParams:
    """What to generate. ``trend`` and ``volatility`` are per year (0.6 = 60 %)."""

    start_ms: int
    count: int
    interval_ms: int = 60_000
    seed: int = 1
    start_price: Decimal = Decimal(30000)
    tick: Decimal = Decimal("0.1")
    trend: float = 0.0
    volatility: float = 0.6
    jump_prob: float = 0.0
    jump_size: float = 0.02
    base_volume: float = 10.0

    def problems(self) -> list[str]:
        """What is wrong with these parameters (empty when they are usable)."""
        found: list[str] = []
        if self.count < 1:
            found.append("the number of candles must be at least 1")
        if self.interval_ms < 1:
            found.append("the interval must be longer than zero")
        if not (self.tick.is_finite() and self.tick > 0):
            found.append("the tick must be a positive decimal such as 0.1")
        if not (self.start_price.is_finite() and self.start_price > 0):
            found.append("the start price must be positive")
        for name in ("trend", "volatility", "jump_size", "base_volume"):
            if not math.isfinite(getattr(self, name)):
                found.append(f"{name.replace('_', '-')} must be a finite number")
        for name in ("volatility", "jump_size", "base_volume"):
            if getattr(self, name) < 0:
                found.append(f"{name.replace('_', '-')} must not be negative")
        for name, limit in _LIMITS.items():
            value = getattr(self, name)
            if math.isfinite(value) and abs(value) > limit:
                found.append(f"{name.replace('_', '-')} {value:g} is out of range (at most "
                             f"{limit:g} in size; 0.6 is 60 % a year)")  # fmt: skip
        if not 0 <= self.jump_prob <= 1:
            found.append("jump-prob must be between 0 and 1")
        usable = self.tick.is_finite() and self.tick > 0 and self.start_price.is_finite()
        if usable and self.start_price / self.tick > _MAX_TICKS:
            found.append(
                f"the start price {self.start_price} is more than 1e18 ticks of {self.tick}: "
                "lower --start-price or raise --tick"
            )
        end = self.start_ms + self.count * self.interval_ms
        if self.count >= 1 and self.interval_ms >= 1 and end > MAX_MS:
            found.append(
                f"{self.count:,} candles from {format_time(self.start_ms)} would end after "
                f"{format_time(MAX_MS)}: start earlier or make fewer candles"
            )
        return found


def synth_bars(params: SynthParams) -> Iterator[Bar]:
    """Yield ``params.count`` candles from ``params.start_ms``, one per interval."""
    bad = params.problems()
    if bad:
        raise ValueError("; ".join(bad))
    rng = random.Random(params.seed)  # noqa: S311 (reproducible model noise, not security)
    gauss, uniform, expo = rng.gauss, rng.random, rng.expovariate
    exp = math.exp
    tick = params.tick
    dt = params.interval_ms / YEAR_MS
    drift = params.trend * dt
    sigma = params.volatility * math.sqrt(dt)
    wick = sigma * 0.5
    jump_prob, jump_size = params.jump_prob, params.jump_size
    base_volume = params.base_volume
    start_ticks = max(1, int((params.start_price / tick).to_integral_value(ROUND_HALF_EVEN)))
    log_px = math.log(start_ticks)
    open_ticks = start_ticks
    prices: dict[int, Decimal] = {}

    def price(ticks: int) -> Decimal:
        found = prices.get(ticks)
        if found is None:
            if len(prices) > 1_000_000:
                prices.clear()
            found = prices[ticks] = Decimal(ticks) * tick
        return found

    t = params.start_ms
    for index in range(params.count):
        move = drift + sigma * gauss(0.0, 1.0)
        if uniform() < jump_prob:
            move += jump_size * gauss(0.0, 1.0)
        log_px += move
        if log_px > _MAX_LOG_TICKS:
            raise SynthOverflow(
                f"the synthetic price passed 1e{_MAX_LOG_TICKS / math.log(10):.0f} ticks at candle "
                f"{index + 1:,}: lower --trend, --volatility or --jump-size, or make fewer candles"
            )
        close_ticks = max(1, round(exp(log_px)))
        top = max(open_ticks, close_ticks)
        bottom = min(open_ticks, close_ticks)
        high_ticks = max(top, round(top * exp(wick * expo(1.0))))
        low_ticks = max(1, min(bottom, round(bottom * exp(-wick * expo(1.0)))))
        size = abs(move) / sigma if sigma else 0.0
        volume = round(base_volume * (0.5 + uniform()) * (1.0 + size) * 1000)
        yield Bar(
            t,
            price(open_ticks),
            price(high_ticks),
            price(low_ticks),
            price(close_ticks),
            Decimal(volume) * _VOLUME_STEP,
        )
        open_ticks = close_ticks
        t += params.interval_ms
