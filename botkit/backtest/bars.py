"""The candle values the backtest works on: :class:`Bar`, :class:`CandleSeries`, :class:`Gap`.

A ``Bar`` is a plain named tuple (time and five ``Decimal`` numbers), not a pydantic model: a
year of minute candles is half a million of them and they are built and read in tight loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

__all__ = ["CSV_COLUMNS", "Bar", "CandleSeries", "Gap"]

CSV_COLUMNS = ("time", "open", "high", "low", "close", "volume")
"""The CSV header botkit writes; ``volume`` may be left out when reading."""


class Bar(NamedTuple):
    """One candle: open time (Unix ms) and Decimal prices and volume."""

    time_ms: int
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    volume: Decimal


@dataclass(frozen=True, slots=True)
class Gap:
    """``missing`` candles between the rows opening at ``after_ms`` and ``before_ms``."""

    after_ms: int
    before_ms: int
    missing: int
    line: int


@dataclass(frozen=True, slots=True)
class CandleSeries:
    """A checked series: bars oldest first, one per ``interval_ms`` except at reported gaps."""

    bars: Sequence[Bar]
    interval_ms: int
    source: str
    gaps: tuple[Gap, ...] = ()

    def __len__(self) -> int:
        return len(self.bars)

    @property
    def start_ms(self) -> int:
        """Open time of the first candle."""
        return self.bars[0].time_ms

    @property
    def end_ms(self) -> int:
        """End of the last candle (its open time plus one interval), exclusive."""
        return self.bars[-1].time_ms + self.interval_ms
