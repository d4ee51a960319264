"""How a number is written for people: one function for every table and line botkit prints.

``str(Decimal)`` keeps the exponent an amount arrived with: the exchange's ``"0.00000000"``
prints as ``0E-8`` and ``"1E+1"`` as itself. :func:`plain` writes fixed-point, without trailing
zeros and without a negative zero. Machine output (JSON, CSV, the wire) keeps its own exact text;
this is for reading. Pure.
"""

from __future__ import annotations

from decimal import Decimal

__all__ = ["plain", "shown"]


def plain(value: Decimal | int) -> str:
    """``value`` fixed-point, as short as exact: ``0E-8`` → ``0``, ``12.50`` → ``12.5``,
    ``1E+2`` → ``100``, ``-0.0`` → ``0``. Infinity and NaN as ``str`` gives them."""
    if isinstance(value, int):
        return str(value)
    if not value.is_finite():
        return str(value)
    if value.is_zero():
        return "0"
    text = format(value, "f")  # never rounds (normalize() would, to the context's precision)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def shown(value: object) -> str:
    """Any value as a table cell: a :class:`~decimal.Decimal` through :func:`plain` (bools are
    not numbers here), everything else as ``str``."""
    if isinstance(value, Decimal):
        return plain(value)
    return str(value)
