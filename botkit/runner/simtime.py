"""Simulated time for the loop: the demo and the backtest wait by moving a manual clock.

``wait_until`` jumps the simulator's :class:`~botkit.sim.clock.ManualClock` to the target and lets
the market catch up (``on_advance``: the random walk, or replayed candles), so hours of trading
run in seconds through the very same loop and runner as the service.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

__all__ = ["ManualTime", "SimulatedTime"]


class ManualTime(Protocol):
    """A clock moved by hand (the simulator's :class:`~botkit.sim.clock.ManualClock` is one): the
    engine names only this, not the simulator."""

    offset_ms: int

    def now_ms(self) -> int: ...

    def set(self, ms: int) -> None: ...


class SimulatedTime:
    """A :class:`~botkit.runner.loop.Waiter` on a manual clock."""

    def __init__(
        self, clock: ManualTime, on_advance: Callable[[int], None] = lambda _ms: None
    ) -> None:
        self.clock = clock
        self.on_advance = on_advance

    def wait_until(self, target_ms: int, wake: threading.Event) -> None:
        if wake.is_set() or target_ms <= self.clock.now_ms():
            return
        self.clock.set(target_ms - self.clock.offset_ms)
        self.on_advance(target_ms)
