"""The paper exchange's engine: instruments, mark prices, orders, matching and accounts.

(First skeleton: prices only; orders, matching and accounts follow.)
"""

from __future__ import annotations

from decimal import Decimal

from botkit.sim.clock import SimClock
from botkit.sim.config import SimConfig

__all__ = ["SimEngine"]


class SimEngine:
    """One simulated futures account on one simulated exchange, driven by an injected clock."""

    def __init__(self, config: SimConfig, clock: SimClock) -> None:
        self.config = config
        self.clock = clock
        self._marks: dict[str, Decimal] = {i.symbol: i.start_px for i in config.instruments}

    def mark(self, symbol: str) -> Decimal:
        return self._marks[symbol]

    def set_mark(self, symbol: str, px: Decimal) -> None:
        """Move the mark of ``symbol`` to ``px`` and fill the resting orders it crosses."""
        self._marks[symbol] = px

    def step(self) -> None:
        """Advance the random walk of every mark to ``clock.now_ms()``."""
