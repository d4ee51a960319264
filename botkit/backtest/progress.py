"""A plain-text progress bar on stderr for long runs (backtest, fetch).

It draws only when its stream is a terminal, at most every ``interval`` seconds, on one line
rewritten with ``\\r``; piped or captured output stays clean. ``update`` is cheap enough to
call once per candle: it looks at the clock only every ~0.1 % of the total.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``Progress(total, stream)``; ``update(n)`` adds ``n`` done; ``close()`` ends the line."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        label: str = "",
        clock: Callable[[], float] = time.monotonic,
        interval: float = 0.25,
        width: int = 30,
        enabled: bool | None = None,
    ) -> None:
        self.total = max(0, total)
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.done = 0
        self._clock = clock
        self._interval = interval
        self._width = width
        self._step = max(1, self.total // 1000)
        self._next_check = self._step
        self._started = clock()
        self._last_draw: float | None = None
        self._drawn = False
        self._closed = False
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty()) if callable(isatty) else False
        self.enabled = enabled

    def update(self, n: int = 1) -> None:
        """Count ``n`` more done; redraw if it is time."""
        self.done += n
        if not self.enabled or self.done < self._next_check:
            return
        self._next_check = self.done + self._step
        now = self._clock()
        if self._last_draw is None or now - self._last_draw >= self._interval:
            self._draw(now)

    def close(self) -> None:
        """Draw the final state and end the line (only if anything was drawn or enabled)."""
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            self._draw(self._clock())
            self.stream.write("\n")
            self.stream.flush()

    def render(self, now: float) -> str:
        """The bar's text at time ``now`` (no ``\\r``)."""
        total = self.total
        done = min(self.done, total) if total else self.done
        fraction = done / total if total else 1.0
        filled = int(fraction * self._width)
        bar = "#" * filled + "." * (self._width - filled)
        elapsed = max(0.0, now - self._started)
        rate = done / elapsed if elapsed > 0 else 0.0
        text = f"[{bar}] {fraction * 100:5.1f}% {done:,}/{total:,}"
        if rate > 0:
            text += f" {rate:,.0f}/s"
            if done < total:
                text += f" ETA {_clock_text((total - done) / rate)}"
        text += f" {_clock_text(elapsed)}" if done >= total else ""
        return f"{self.label} {text}" if self.label else text

    def _draw(self, now: float) -> None:
        self._last_draw = now
        self._drawn = True
        self.stream.write("\r" + self.render(now))
        self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _clock_text(seconds: float) -> str:
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
