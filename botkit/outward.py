"""Decimal contexts that round outward: the lower end of a bound down, the upper end up.

Shared by the interval values of rule expressions (:mod:`botkit.rules.interval`) and the
simulator's figure bounds over a range of marks (``SimEngine.figures_between``). Pure.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Context, getcontext

__all__ = ["outward"]


def outward() -> tuple[Context, Context]:
    """The thread's decimal context rounding down and up (its precision and exponent limits;
    made once for each): an operation in the first is at most, in the second at least, what
    any rounding at that precision gives."""
    now = getcontext()
    key = (now.prec, now.Emax, now.Emin, now.clamp)
    found = _MADE.get(key)
    if found is None:
        down = now.copy()
        down.rounding = ROUND_FLOOR
        up = now.copy()
        up.rounding = ROUND_CEILING
        found = _MADE[key] = (down, up)
    return found


_MADE: dict[tuple[int, int, int, int], tuple[Context, Context]] = {}
"""The contexts of :func:`outward` by the thread context's precision and limits (only ever
used through their methods, which change nothing but their flags)."""
