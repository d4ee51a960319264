"""How a number is written for people: one function for every table and line botkit prints.

``str(Decimal)`` keeps the exponent an amount arrived with: the exchange's ``"0.00000000"``
prints as ``0E-8`` and ``"1E+1"`` as itself. :func:`plain` writes fixed-point, without trailing
zeros and without a negative zero. Machine output (JSON, CSV, the wire) keeps its own exact text;
this is for reading. Pure.
"""

from __future__ import annotations

from decimal import Decimal

__all__ = ["plain", "plain_text", "shown"]


def plain(value: Decimal | int) -> str:
    """``value`` fixed-point, as short as exact: ``0E-8`` → ``0``, ``12.50`` → ``12.5``,
    ``1E+2`` → ``100``, ``-0.0`` → ``0``. Infinity and NaN as ``str`` gives them."""
    if isinstance(value, int):
        return str(value)
    return plain_text(format(value, "f"))  # never rounds (normalize() would, to the context's)


def plain_text(text: str) -> str:
    """:func:`plain` of a ``Decimal`` given its exact text, ``format(value, "f")`` (a caller
    that keeps the text writes many values at once without the ``Decimal``): no trailing zeros
    after the point, ``0`` for any zero; a non-finite value's text as it is."""
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def shown(value: object) -> str:
    """Any value as a table cell: a :class:`~decimal.Decimal` through :func:`plain` (bools are
    not numbers here), everything else as ``str``."""
    if isinstance(value, Decimal):
        return plain(value)
    return str(value)
