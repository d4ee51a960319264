"""Interval values for a compiled expression: what it gives for *every* value in a range.

A compiled condition (:mod:`~botkit.rules.codegen`) is plain Python over Decimals: ``+ - * /``,
unary ``-``/``+``, comparisons, ``not``/``and``/``or``, ``a if c else b`` and the calls of
:data:`~botkit.rules.functions.FUNCTIONS`. Handed :class:`Interval` values instead of some of
its Decimals, the same function computes an enclosure: each arithmetic result is an interval
holding the Decimal result of the same operation for any values inside the operands' intervals
— the corners of the box, each rounded **outward** (down for the lower end, up for the upper
end, at the precision of the thread's context: whatever rounding the real evaluation then uses
at that precision, its result is between them) — and each comparison is decided (a plain
``bool``) only when it is the same for every value of the box; otherwise it raises
:class:`Undecided`. So is the truth of an interval that holds both zero and something else.
Since ``and``, ``or``, ``not`` and ``if`` ask the truth of their operands, an evaluation that
returns gave the answer that the plain evaluation gives at every point of the box, on the same
path; one that raises decided nothing.

Everything else refuses: an operand that is not a Decimal or an interval, a division by an
interval holding zero (the plain evaluation may fail there), the functions that round to a
step, ``sqrt``, ``//``, ``%`` and ``**`` (they call Decimal methods an interval has not). The
backtest uses it to prove a price recheck false over a range of marks (:meth:`~botkit.rules.
deps.Recheck.false_over`).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Context, Decimal
from typing import Any

from botkit.outward import outward

__all__ = ["Interval", "Undecided", "outward"]


class Undecided(ArithmeticError):
    """A comparison, or a truth, that differs inside the intervals (or cannot be bounded)."""


def _as_interval(value: Any) -> Interval | None:
    if type(value) is Interval:
        return value
    if type(value) is Decimal:
        return Interval(value, value)
    return None


class Interval:
    """Every Decimal from ``lo`` to ``hi`` (both included; ``lo <= hi``, neither NaN)."""

    __slots__ = ("hi", "lo")

    def __init__(self, lo: Decimal, hi: Decimal) -> None:
        if not lo <= hi:  # a NaN end raises here (Decimal comparisons with NaN signal)
            raise ValueError(f"an interval needs lo <= hi, got [{lo}, {hi}]")
        self.lo = lo
        self.hi = hi

    def __repr__(self) -> str:
        return f"Interval({self.lo}, {self.hi})"

    # --- arithmetic: the box's corners, rounded outward --------------------------------------

    def _corners(self, other: Any, op: Callable[[Context, Decimal, Decimal], Decimal]) -> Any:
        that = _as_interval(other)
        if that is None:
            return NotImplemented
        down, up = outward()
        pairs = ((self.lo, that.lo), (self.lo, that.hi), (self.hi, that.lo), (self.hi, that.hi))
        return Interval(min(op(down, a, b) for a, b in pairs), max(op(up, a, b) for a, b in pairs))

    def __add__(self, other: Any) -> Any:
        that = _as_interval(other)
        if that is None:
            return NotImplemented
        down, up = outward()  # a sum rises with each operand: the lowest ends, the highest
        return Interval(down.add(self.lo, that.lo), up.add(self.hi, that.hi))

    def __radd__(self, other: Any) -> Any:
        return self.__add__(other)

    def __sub__(self, other: Any) -> Any:
        that = _as_interval(other)
        if that is None:
            return NotImplemented
        down, up = outward()
        return Interval(down.subtract(self.lo, that.hi), up.subtract(self.hi, that.lo))

    def __rsub__(self, other: Any) -> Any:
        that = _as_interval(other)
        if that is None:
            return NotImplemented
        return that.__sub__(self)

    def __mul__(self, other: Any) -> Any:
        that = _as_interval(other)
        if that is None:
            return NotImplemented
        if self.lo >= 0 and that.lo >= 0:  # both not negative: the product rises with each
            down, up = outward()
            return Interval(down.multiply(self.lo, that.lo), up.multiply(self.hi, that.hi))
        return self._corners(that, Context.multiply)

    def __rmul__(self, other: Any) -> Any:
        return self.__mul__(other)

    def __truediv__(self, other: Any) -> Any:
        that = _as_interval(other)
        if that is None:
            return NotImplemented
        if that.lo <= 0 <= that.hi:  # x / y is monotone in y only on one side of zero
            raise Undecided(f"a division by {that!r}, which holds zero")
        return self._corners(that, Context.divide)

    def __rtruediv__(self, other: Any) -> Any:
        that = _as_interval(other)
        if that is None:
            return NotImplemented
        return that.__truediv__(self)

    def __neg__(self) -> Interval:
        down, up = outward()  # Decimal's unary minus rounds to the context too
        return Interval(down.minus(self.hi), up.minus(self.lo))

    def __pos__(self) -> Interval:
        down, up = outward()
        return Interval(down.plus(self.lo), up.plus(self.hi))

    def __abs__(self) -> Interval:
        down, up = outward()
        if self.lo >= 0:
            return Interval(down.abs(self.lo), up.abs(self.hi))
        if self.hi <= 0:
            return Interval(down.abs(self.hi), up.abs(self.lo))
        return Interval(Decimal(0), max(up.abs(self.lo), up.abs(self.hi)))

    # --- comparisons and truth: decided only for the whole box -------------------------------

    def _below(self, other: Any, strict: bool) -> bool:
        """``self < other`` (``strict``) or ``self <= other`` for every pair of the box."""
        that = _as_interval(other)
        if that is None:
            raise Undecided(f"a comparison with {type(other).__name__}")
        if self.hi < that.lo or (not strict and self.hi <= that.lo):
            return True
        if self.lo > that.hi or (strict and self.lo >= that.hi):
            return False
        raise Undecided(f"{self!r} against {that!r}")

    def __lt__(self, other: Any) -> bool:
        return self._below(other, True)

    def __le__(self, other: Any) -> bool:
        return self._below(other, False)

    def __gt__(self, other: Any) -> bool:
        that = _as_interval(other)
        if that is None:
            raise Undecided(f"a comparison with {type(other).__name__}")
        return that._below(self, True)

    def __ge__(self, other: Any) -> bool:
        that = _as_interval(other)
        if that is None:
            raise Undecided(f"a comparison with {type(other).__name__}")
        return that._below(self, False)

    def __eq__(self, other: object) -> bool:
        that = _as_interval(other)
        if that is None:
            raise Undecided(f"a comparison with {type(other).__name__}")
        if self.hi < that.lo or that.hi < self.lo:
            return False
        if self.lo == self.hi == that.lo == that.hi:
            return True
        raise Undecided(f"{self!r} against {that!r}")

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # compared by value, never a key

    def __bool__(self) -> bool:
        if self.lo > 0 or self.hi < 0:
            return True
        if self.lo == 0 and self.hi == 0:
            return False
        raise Undecided(f"the truth of {self!r}")
