"""Price rechecks proven false over a range of marks: the candles of a held position passed at once.

A quiet verdict whose condition was false for a price or an account figure holds while a
:class:`~botkit.rules.deps.Recheck` of it stays false at each cycle's figures
(:mod:`botkit.runner.quiet`). With the book fixed — inside the simulator's quiet band no order
fills, no cycle runs — some of those figures are functions of the symbol's mark alone: the
mark itself (``price.mark``, ``price.last`` and ``price.index`` are the mark in the
simulator's ticker), and the position's and the account's figures
(:meth:`~botkit.sim.engine.SimEngine.figures_between` bounds them over a range of marks, from
the simulator's own formulas). :func:`proven_count` finds how many of the next candles close at
marks over whose whole range every recheck is proven false (each evaluated once over
:class:`~botkit.rules.interval.Interval` values: :meth:`~botkit.rules.deps.Recheck.false_over`):
their cycles are skipped as the per-candle check would skip them. Every other value — the 24h
window, the bid and ask, the price band, the margin and PnL ratios, another symbol's figures,
anything of time — is not bounded, and a recheck reading it is never proven false.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from botkit.exchange.models import PosSide
from botkit.rules.deps import Recheck
from botkit.rules.interval import Interval
from botkit.sim.figures import MarkBounds

__all__ = ["MarkRange", "proven_count"]

_ZERO = Decimal(0)
_MARK_PRICES = frozenset({"mark", "last", "index"})
"""``price.*`` fields the simulator's ticker gives as the mark itself."""
_POSITION_FIGURES = frozenset({"upl", "im", "mgn", "mm", "markPx"})
_ACCOUNT_FIGURES = frozenset({"eq", "upl", "im", "mm", "availMgn"})
_LEGS = {"long": PosSide.LONG, "short": PosSide.SHORT, "net": PosSide.BOTH}


class MarkRange(dict[str, Any]):
    """The environment keys a recheck of a strategy on ``symbol`` may read, as the intervals
    ``bounds`` gives them (a flat leg's figures are 0 at any mark); any other key raises
    ``KeyError`` (not bounded)."""

    __slots__ = ("_bounds", "_symbol", "unbounded")

    def __init__(self, bounds: MarkBounds, symbol: str) -> None:
        super().__init__()
        self._bounds = bounds
        self._symbol = symbol
        self.unbounded = False
        """Whether a key was asked that no mark bounds."""

    def __missing__(self, key: str) -> Any:
        found = self._bounded(key)
        if found is None:
            self.unbounded = True
            raise KeyError(key)
        self[key] = found
        return found

    def _bounded(self, key: str) -> Interval | Decimal | None:
        found = _figure_of(key)
        if found is None:
            return None
        bounds = self._bounds
        kind, side, name = found
        if kind == "mark":
            return Interval(*bounds.mark)
        if kind == "account":
            return Interval(*bounds.account[name])
        leg = bounds.positions.get((self._symbol, side))
        return _ZERO if leg is None else Interval(*leg[name])  # a flat leg reads zeros


@functools.lru_cache(maxsize=1024)
def _figure_of(key: str) -> tuple[str, PosSide, str] | None:
    """What the environment key ``key`` reads of :class:`~botkit.sim.figures.MarkBounds`:
    (``mark``, ``account`` or ``position``; the position's leg; the figure's name), or None
    when the mark does not bound it."""
    display, _, scope = key.partition("@")
    path = display.split(".")
    if len(path) == 2 and path[0] == "price" and path[1] in _MARK_PRICES and not scope:
        return "mark", PosSide.BOTH, ""
    if len(path) == 2 and path[0] == "account" and not scope:
        return ("account", PosSide.BOTH, path[1]) if path[1] in _ACCOUNT_FIGURES else None
    if len(path) == 2 and path[0] == "position":
        side, name = PosSide(scope or "BOTH"), path[1]
    elif len(path) == 3 and path[0] == "positions" and path[1] in _LEGS and not scope:
        side, name = _LEGS[path[1]], path[2]
    else:
        return None
    return ("position", side, name) if name in _POSITION_FIGURES else None


def proven_count(
    rechecks: Sequence[Recheck],
    bounds: Callable[[Decimal, Decimal], MarkBounds | None],
    symbol: str,
    closes: Callable[[int, int], list[Decimal]],
    room: Callable[[int], int],
    first: int = 16,
) -> tuple[int, int, bool]:
    """``(n, m, bounded)``: every one of ``rechecks`` (of strategies on ``symbol``) is proven
    false at any mark from the lowest to the highest of the next ``n`` closes, and not over
    the next ``m`` (``m == n`` when no more can be tried); ``bounded``: False when a recheck
    read a value no mark bounds (then none ever will be proven while the verdicts last).
    ``closes(i, j)``: closes ``i`` to ``j - 1`` of the candles ahead; ``bounds(lo, hi)``: the
    figures' bounds over a range of marks; ``room(k)``: how many of the next ``k`` candles may
    be passed at all (at most ``k``; fewer when one reaches the band, the envelope's time or
    the end). Tries ``first``, twice as many, …, then halves the gap to within an eighth of
    ``n`` or 4 candles (when ``n`` is not 0): the rest is cheaper stepped through."""
    seen: list[Decimal] = []
    unbounded = False

    def proven(count: int) -> bool:
        nonlocal unbounded
        if len(seen) < count:
            seen.extend(closes(len(seen), count))
        part = seen[:count]
        found = bounds(min(part), max(part))
        if found is None:
            return False
        env = MarkRange(found, symbol)
        if all(r.false_over(env) for r in rechecks):
            return True
        unbounded = env.unbounded
        return False

    good = 0
    want = first
    while True:  # gallop until one fails or no more can be tried
        size = room(want)
        if size <= good:
            return good, good, True
        if not proven(size):
            bad = size
            break
        good = size
        if size < want:
            return good, good, True
        want = size * 2
    while good and bad - good > max(4, good // 8):  # halve the gap
        middle = (good + bad) // 2
        if proven(middle):
            good = middle
        else:
            bad = middle
    return good, bad, not unbounded
