"""Request parameters checked before a request leaves: a caller bug is never sent.

Each helper returns the wire text of a value or raises
:class:`~botkit.errors.RequestValidationError` with a one-line message naming the parameter,
the bad value and what is allowed (batch of more than 10, page size outside 1..100, an unknown
enum word, an empty symbol, a start after its end).
"""

from __future__ import annotations

from collections.abc import Sized
from enum import StrEnum
from typing import TypeVar

from botkit.errors import RequestValidationError
from botkit.timeparse import CANDLE_WORDS

__all__ = [
    "CANDLE_INTERVALS",
    "MAX_BATCH",
    "MAX_PAGE",
    "ORDER_BOOK_LIMITS",
    "batch",
    "book_limit",
    "candle_interval",
    "direction",
    "enum_word",
    "lever",
    "one_of_ids",
    "optional_text",
    "page_limit",
    "symbol",
    "time_range",
]

MAX_BATCH = 10
MAX_PAGE = 100
CANDLE_INTERVALS = tuple(CANDLE_WORDS)
"""The candle interval words the exchange serves (:data:`botkit.timeparse.CANDLE_WORDS`)."""
ORDER_BOOK_LIMITS = (5, 10, 20, 100, 150)

E = TypeVar("E", bound=StrEnum)


def symbol(value: str | None, name: str = "symbol") -> str:
    """A required, non-blank symbol (or currency) name, stripped."""
    text = (value or "").strip()
    if not text:
        raise RequestValidationError(f"{name} is required and must not be empty")
    return text


def optional_text(value: str | None, name: str) -> str | None:
    """An optional text parameter: None stays None, blank is refused."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        raise RequestValidationError(f"{name} must not be empty when given")
    return text


def enum_word(value: str | StrEnum | None, enum: type[E], name: str) -> str | None:
    """The wire word of an enum value given as a member or a word in any letter case."""
    if value is None:
        return None
    try:
        return enum(value).value
    except ValueError:
        allowed = ", ".join(m.value for m in enum)
        raise RequestValidationError(f"{name} {value!r} is not one of {allowed}") from None


def direction(value: str | None) -> str | None:
    """``direct``: NEXT or PREV."""
    if value is None:
        return None
    word = value.upper()
    if word not in {"NEXT", "PREV"}:
        raise RequestValidationError(f"direct {value!r} is not one of NEXT, PREV")
    return word


def page_limit(value: int | None, name: str = "limit", maximum: int = MAX_PAGE) -> str | None:
    """A page size in 1..``maximum`` (100 for the v3 queries)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise RequestValidationError(f"{name} {value!r} is outside 1..{maximum}")
    return str(value)


def time_range(start: int | None, end: int | None) -> tuple[str | None, str | None]:
    """``sTime`` / ``eTime`` in Unix ms: non-negative, and the start not after the end."""
    for name, value in (("start", start), ("end", end)):
        if value is not None and (isinstance(value, bool) or value < 0):
            raise RequestValidationError(f"{name} time {value!r} must be Unix ms >= 0")
    if start is not None and end is not None and start > end:
        raise RequestValidationError(f"start time {start} is after end time {end}")
    return (None if start is None else str(start), None if end is None else str(end))


def batch(items: Sized, name: str, maximum: int = MAX_BATCH) -> None:
    """A batch of 1..``maximum`` items (10 for placement and batch cancel)."""
    count = len(items)
    if count == 0:
        raise RequestValidationError(f"{name}: nothing to send (empty batch)")
    if count > maximum:
        raise RequestValidationError(
            f"{name}: {count} items, at most {maximum} per request — split the batch"
        )


def candle_interval(value: str) -> str:
    """A candle interval word (MINUTE_1 … WEEK_1), any letter case."""
    word = value.strip().upper() if isinstance(value, str) else ""
    if word not in CANDLE_INTERVALS:
        raise RequestValidationError(
            f"interval {value!r} is not one of {', '.join(CANDLE_INTERVALS)}"
        )
    return word


def book_limit(value: int | None) -> str | None:
    """Order-book depth: one of 5, 10, 20, 100, 150."""
    if value is None:
        return None
    if isinstance(value, bool) or value not in ORDER_BOOK_LIMITS:
        allowed = ", ".join(map(str, ORDER_BOOK_LIMITS))
        raise RequestValidationError(f"limit {value!r} is not one of {allowed}")
    return str(value)


def lever(value: int) -> str:
    """A leverage: a whole number >= 1, sent as a decimal string."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestValidationError(f"lever {value!r} must be a whole number >= 1")
    return str(value)


def one_of_ids(what: str, ord_id: str | None, cl_ord_id: str | None) -> None:
    """An order is named by ``ord_id`` or ``cl_ord_id``; at least one is needed."""
    if ord_id is None and cl_ord_id is None:
        raise RequestValidationError(f"{what} needs ord_id or cl_ord_id")
