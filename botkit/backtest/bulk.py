"""Price rechecks proven false over a range of marks: the candles of a held position passed at once.

A quiet verdict whose condition was false for a price or an account figure holds while a
:class:`~botkit.rules.deps.Recheck` of it stays false at each cycle's figures
(:mod:`botkit.runner.quiet`). With the book fixed — inside the simulator's quiet band no order
fills, no cycle runs — some of those figures are functions of the symbol's mark alone: the
mark itself (``price.mark``, ``price.last`` and ``price.index`` are the mark in the
simulator's ticker), and the position's and the account's figures
(:meth:`~botkit.sim.engine.SimEngine.figures_between` bounds them over a range of marks, from
the simulator's own formulas); the 24h high is bounded over the stretch by its value now and
the candles' highest points above and each close below. :func:`proven_count` finds how many
of the next candles close at marks inside ranges over which every recheck is proven false
(each evaluated once over :class:`~botkit.rules.interval.Interval` values:
:meth:`~botkit.rules.deps.Recheck.false_over`): their cycles are skipped as the per-candle
check would skip them. Every other value — the 24h open and low, the bid and ask, the price
band, the margin and PnL ratios, another symbol's figures, anything of time — is not
bounded, and a recheck reading it is never proven false.
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
    ``bounds`` gives them (a flat leg's figures are 0 at any mark) and ``price.high_24h`` as
    ``high()`` gives it (when given); any other key raises ``KeyError`` (not bounded)."""

    __slots__ = ("_bounds", "_high", "_symbol", "unbounded")

    def __init__(
        self,
        bounds: MarkBounds,
        symbol: str,
        high: Callable[[], Interval] | None = None,
    ) -> None:
        super().__init__()
        self._bounds = bounds
        self._symbol = symbol
        self._high = high
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
        if kind == "high":
            return None if self._high is None else self._high()
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
    if display == "price.high_24h" and not scope:
        return "high", PosSide.BOTH, ""
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
    *,
    high_now: Decimal | None = None,
    tops: Callable[[int, int], list[Decimal]] | None = None,
    least: int = 0,
) -> tuple[int, int, bool]:
    """``(n, m, bounded)``: every one of ``rechecks`` (of strategies on ``symbol``) is proven
    false at the close of each of the next ``n`` candles, and not at the close of candle
    ``n`` (then ``m == n + 1``; ``m == n`` when no more can be tried); ``bounded``: False
    when a recheck read a value no mark bounds (then none ever will be proven while the
    verdicts last). ``closes(i, j)``: closes ``i`` to ``j - 1`` of the candles ahead;
    ``bounds(lo, hi)``: the figures' bounds over a range of marks; ``room(k)``: how many of the
    next ``k`` candles may be passed at all (at most ``k``; fewer when one reaches the band,
    the envelope's time or the end).

    ``high_now`` and ``tops(i, j)`` (the 24h high now; the highest price of each candle's
    path, ``i`` to ``j - 1``) bound ``price.high_24h`` at the close of candle ``k``: at most
    the highest of ``high_now`` and the tops of candles ``0..k`` (the window then holds the
    minutes it holds now, or later ones, whose highs are those of the candles' paths), at
    least the close of candle ``k`` (the window holds the minute of that close). Without
    them it is not bounded.

    A range of marks is proven at a time (every recheck false at any mark in it, and at any
    24h high from its low to the tops so far: its :meth:`~botkit.rules.deps.Recheck.
    false_over`), and grown as the closes leave it: each candle counted closes inside a range
    proven then, its top under that proof's 24h high when it read one (proofs only grow, so
    inside the last one). The next ``first`` closes' range is tried first, then blocks twice
    as long while they prove; once a block does not, the closes inside the range are counted
    and the range is grown to the first close no provable range holds, found by bisection over
    the closes that would widen it (:meth:`_Proofs.widen`: a range of marks proven is proven
    over any range inside it, so the closes before that one are counted) — and only that one
    is left to the per-candle check.

    ``least``: a count under which the caller has no use for the candles proven (it steps
    through them one by one anyway). When the first block does not prove, the range of the
    first ``least`` closes is tried before any search; when it does not prove either, the
    answer is ``(n, least, bounded)`` — fewer than ``least`` are proven, and where the first
    unproven close lies is not searched for (the per-candle check finds it): a position closed
    within a few candles of its opening costs one proof more instead of a search."""
    proofs = _Proofs(rechecks, bounds, symbol, closes, high_now, tops)
    good = 0
    block = first
    blocks = True
    size = 0
    while True:
        if good >= size:  # the room asked for again only once it is used up
            size = room(good + block)
            if size <= good:
                return good, good, not proofs.unbounded
            proofs.fetch(size)
        good = proofs.inside(good, size)
        if good == size:
            block *= 2
            continue
        if blocks:
            if proofs.grow(proofs.seen[good:size], size):  # the whole block at once
                good = size
                block *= 2
                continue
            blocks = False  # a close ahead is outside every range provable: search for it
            if good < least < size and not proofs.grow(proofs.seen[good:least], least):
                return good, least, not proofs.unbounded  # fewer than ``least``: not searched
        failed = proofs.widen(good, size)
        good = proofs.inside(good, size)
        if good == failed < size:  # the first close no provable range holds
            return good, good + 1, not proofs.unbounded
        # else every candle to ``size`` is proven, or one the search did not try stops them (a
        # top over the 24h high that a proof read for the first time): search again from it


class _Proofs:
    """The range of marks proven so far over the candles ahead (see :func:`proven_count`)."""

    __slots__ = (
        "bounds", "closes", "hi", "high_now", "highs", "lo", "rechecks", "seen", "symbol",
        "top", "tops", "unbounded",
    )  # fmt: skip

    def __init__(
        self,
        rechecks: Sequence[Recheck],
        bounds: Callable[[Decimal, Decimal], MarkBounds | None],
        symbol: str,
        closes: Callable[[int, int], list[Decimal]],
        high_now: Decimal | None,
        tops: Callable[[int, int], list[Decimal]] | None,
    ) -> None:
        self.rechecks = rechecks
        self.bounds = bounds
        self.symbol = symbol
        self.closes = closes
        self.high_now = high_now
        self.tops = tops
        self.seen: list[Decimal] = []
        """The closes fetched so far."""
        self.highs: list[Decimal] = []
        """The tops fetched so far (only once a proof reads the 24h high)."""
        self.unbounded = False
        self.lo: Decimal | None = None
        self.hi: Decimal | None = None
        self.top: Decimal | None = None
        """The 24h high's upper bound of the proof in force, when it read the 24h high."""

    def fetch(self, size: int) -> None:
        seen = self.seen
        if len(seen) < size:
            seen.extend(self.closes(len(seen), size))

    def _tops(self, size: int) -> list[Decimal]:
        highs, tops = self.highs, self.tops
        if len(highs) < size and tops is not None:
            highs.extend(tops(len(highs), size))
        return highs

    def inside(self, good: int, size: int) -> int:
        """The first candle from ``good`` on (at most ``size``) that closes outside the range
        proven (or whose top is over its proof's 24h high)."""
        lo, hi, seen = self.lo, self.hi, self.seen
        if lo is None or hi is None:
            return good
        top = self.top
        if top is None:
            while good < size and lo <= seen[good] <= hi:
                good += 1
            return good
        highs = self._tops(size)
        while good < size and lo <= seen[good] <= hi and highs[good] <= top:
            good += 1
        return good

    def widen(self, good: int, size: int) -> int:
        """Grow the range proven over the candles from ``good`` (inside it up to there) on, as
        far as it proves: the candles ``good`` to ``size - 1`` whose close (or, when the proof
        in force read the 24h high, whose top) widens the range of those before it are tried
        by bisection — the range up to one of them proves when it does up to a later one (the
        bounds, the interval evaluation and the 24h high's bound are each monotone in the
        range: a smaller one gives bounds inside) — and the range up to the last that proves
        is the one in force. Returns the first that does not (tried, and failed: its
        unbounded read counted as the one-by-one growth would count it), or ``size``. What is
        counted is still only what :meth:`inside` finds inside the range in force, whatever
        the bisection tried; by the monotony, the same candles as growing the range a close at
        a time, with a proof for each halving instead of one for each close that widens it."""
        seen = self.seen
        lo, hi, top = self.lo, self.hi, self.top
        highs = self._tops(size) if top is not None else None
        widening: list[tuple[int, Decimal, Decimal]] = []  # (candle, lowest, highest close)
        for j in range(good, size):
            close = seen[j]
            widens = True
            if lo is None or hi is None:
                lo = hi = close
            elif close < lo:
                lo = close
            elif close > hi:
                hi = close
            else:
                widens = False
            if highs is not None and top is not None and highs[j] > top:
                top, widens = highs[j], True
            if widens:
                widening.append((j, lo, hi))
        proven, failed = -1, len(widening)  # widening[proven] proves; widening[failed] fails
        unbounded = False
        while failed - proven > 1:
            mid = (proven + failed) // 2
            j, low, high = widening[mid]
            ok, unbounded_here = self._prove([low, high], j + 1)  # the closes' range up to j
            if ok:
                proven = mid
            else:
                failed, unbounded = mid, unbounded_here
        if failed == len(widening):
            return size
        self.unbounded = self.unbounded or unbounded
        return widening[failed][0]

    def grow(self, part: list[Decimal], upto: int) -> bool:
        """Prove the range grown by the closes ``part`` (candles up to ``upto``, excluded);
        when it proves, it is the range in force."""
        ok, unbounded = self._prove(part, upto)
        self.unbounded = self.unbounded or unbounded
        return ok

    def _prove(self, part: list[Decimal], upto: int) -> tuple[bool, bool]:
        """:meth:`grow` without counting its unbounded read: (proven, a value read that no
        mark bounds)."""
        low, high = min(part), max(part)
        if self.lo is not None and self.hi is not None:
            low, high = min(low, self.lo), max(high, self.hi)
        found = self.bounds(low, high)
        if found is None:
            return False, False
        reach: list[Decimal] = []
        high_now = self.high_now

        def window() -> Interval:  # the 24h high over the candles up to ``upto``
            assert high_now is not None
            most = max(high_now, max(self._tops(upto)[:upto], default=high_now))
            reach.append(most)
            return Interval(low, max(most, low))

        env = MarkRange(found, self.symbol, window if high_now is not None else None)
        if all(r.false_over(env) for r in self.rechecks):
            self.lo, self.hi, self.top = low, high, (reach[0] if reach else None)
            return True, False
        return False, env.unbounded
