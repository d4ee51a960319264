"""The functions and operators strategy expressions may use, all in Decimal arithmetic.

Python's floor division and modulo semantics are kept (``-7 // 2 == -4``), unlike Decimal's own
truncating ones; powers are bounded. Every function takes and returns Decimals.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Any

from botkit.rules.durations import parse_duration

__all__ = ["FUNCTIONS", "MAX_EXPONENT", "OPERATORS", "Function"]

MAX_EXPONENT = Decimal(64)


class _StepError(ArithmeticError):
    pass


def _to_step(x: Decimal, step: Decimal, rounding: str) -> Decimal:
    if step <= 0:
        raise _StepError(f"step must be > 0, got {step}")
    return (x / step).to_integral_value(rounding=rounding) * step


def floor(x: Decimal, step: Decimal = Decimal(1)) -> Decimal:
    """Round down to a multiple of ``step``: floor(1234.56, 0.5) = 1234.5."""
    return _to_step(x, step, ROUND_FLOOR)


def ceil(x: Decimal, step: Decimal = Decimal(1)) -> Decimal:
    """Round up to a multiple of ``step``: ceil(1234.56, 0.5) = 1235.0."""
    return _to_step(x, step, ROUND_CEILING)


def round_(x: Decimal, step: Decimal = Decimal(1)) -> Decimal:
    """Round half up to a multiple of ``step``: round(2.5) = 3."""
    return _to_step(x, step, ROUND_HALF_UP)


def clamp(x: Decimal, low: Decimal, high: Decimal) -> Decimal:
    """``x`` limited to [low, high]."""
    return max(low, min(x, high))


def sqrt(x: Decimal) -> Decimal:
    """Square root (x >= 0)."""
    return x.sqrt()


def floordiv(a: Decimal, b: Decimal) -> Decimal:
    return (a / b).to_integral_value(rounding=ROUND_FLOOR)


def mod(a: Decimal, b: Decimal) -> Decimal:
    return a - b * floordiv(a, b)


def power(a: Decimal, b: Decimal) -> Decimal:
    if abs(b) > MAX_EXPONENT:
        raise _StepError(f"exponent {b} is too large (at most {MAX_EXPONENT})")
    return a**b


def ms(text: str) -> Decimal:
    """The duration ``text`` (``30s``, ``10m``, ``1h``, ``1d``) in milliseconds."""
    return Decimal(parse_duration(text))


@dataclass(frozen=True, slots=True)
class Function:
    impl: Callable[..., Decimal]
    min_args: int
    max_args: int | None
    doc: str


FUNCTIONS: dict[str, Function] = {
    "min": Function(min, 2, None, "smallest of the arguments: min(a, b, ...)"),
    "max": Function(max, 2, None, "largest of the arguments: max(a, b, ...)"),
    "abs": Function(abs, 1, 1, "absolute value"),
    "floor": Function(floor, 1, 2, "round down to a step: floor(x, instrument.lotSz)"),
    "ceil": Function(ceil, 1, 2, "round up to a step: ceil(x, instrument.tSz)"),
    "round": Function(round_, 1, 2, "round half up to a step: round(x, 0.5)"),
    "clamp": Function(clamp, 3, 3, "limit to a range: clamp(x, low, high)"),
    "sqrt": Function(sqrt, 1, 1, "square root"),
    "ms": Function(ms, 1, 1, "a duration in ms, for comparisons: ms('1h') = 3600000"),
}
"""Functions by name. ``ms`` is folded to its value when the file loads (its argument must be a
literal, so a bad duration is a load error with its place in the file)."""

OPERATORS: dict[type[Any], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: floordiv,
    ast.Mod: mod,
    ast.Pow: power,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
"""The operators expressions may use; anything else (bit operations, ``in``, ``is``) is refused.
:mod:`~botkit.rules.codegen` compiles an entry that is the :mod:`operator` function itself as
Python's own operator and any other entry as a call of it."""
