"""The fast way in for a plain CSV candle file: its bytes parsed by numpy, column by column.

A plain file is ASCII, its first line the header, ``\\n`` or ``\\r\\n`` line ends, no quotes,
every row as many fields as the header, times in Unix ms, prices and volumes written as
``digits[.digits]`` (at most 17 digits; an empty volume is 0). Such a file is read without a
Python object per cell: the field bounds come from the positions of the commas and newlines,
each number is read digit by digit across the whole column at once, into exact fixed-point
keys (:mod:`botkit.backtest.columns`), and the row checks of
:mod:`botkit.backtest.candle_parse` (prices positive, ``low <= open, close <= high``) are
made on integers scaled to a common number of places, so nothing is rounded.

Anything else — and any row a check refuses — returns ``None``: the caller then takes the
row-by-row path, which gives the same candles for every file this one accepts and words each
problem with its line.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from botkit.backtest.bars import CSV_COLUMNS
from botkit.backtest.columns import MAX_KEY_DIGITS, PLACES_BITS
from botkit.timeparse import MAX_MS, MIN_MS

__all__ = ["FastColumns", "csv_columns"]

IntArray = npt.NDArray[np.int64]
FastColumns = tuple[IntArray, list[IntArray]]
"""Open times and the fixed-point keys of open, high, low, close and volume."""

_COMMA, _NEWLINE, _DOT, _ZERO, _NINE = 44, 10, 46, 48, 57
_BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 20
"""Bytes of lines parsed at a time."""


def csv_columns(raw: bytes) -> FastColumns | None:
    """The columns of ``raw``, a whole CSV file, or ``None`` when it is not plain or a row
    fails a check (see the module doc)."""
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    if not raw.isascii() or b'"' in raw:
        return None
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
        if b"\r" in raw:
            return None
    if not raw.endswith(b"\n") or raw.endswith(b"\n\n"):
        raw = raw.rstrip(b"\n") + b"\n"
    first = raw.find(b"\n")
    if first <= 0 or not raw[:1].strip():
        return None
    header = [name.strip().lower() for name in raw[:first].decode("ascii").split(",")]
    if any(header.count(name) != 1 for name in CSV_COLUMNS[:5]) or header.count("volume") > 1:
        return None
    rows = raw.count(b"\n", first + 1)
    if not rows:
        return None
    whole = np.frombuffer(raw, dtype=np.uint8)
    times = np.empty(rows, dtype=np.int64)
    keys = [np.empty(rows, dtype=np.int64) for _ in CSV_COLUMNS[1:]]
    begin, done = first + 1, 0
    while begin < len(raw):  # a block of lines at a time: the temporaries stay small
        end = raw.find(b"\n", min(begin + _BLOCK, len(raw) - 1)) + 1
        block = _columns(whole[begin:end], header)
        if block is None:
            return None
        count = len(block[0])
        times[done : done + count] = block[0]
        for column, values in zip(keys, block[1], strict=True):
            column[done : done + count] = values
        begin, done = end, done + count
    return times, keys


def _columns(body: npt.NDArray[np.uint8], header: list[str]) -> FastColumns | None:
    width = len(header)
    marks = np.flatnonzero((body == _COMMA) | (body == _NEWLINE))
    rows, extra = divmod(len(marks), width)
    if extra or not rows:
        return None
    ends = marks.reshape(rows, width)
    if not (body[ends[:, -1]] == _NEWLINE).all() or (body[ends[:, :-1]] == _NEWLINE).any():
        return None
    parsed: list[tuple[IntArray, IntArray]] = []
    for name in CSV_COLUMNS:
        if name not in header:  # a file without volumes: all zero
            parsed.append((np.zeros(rows, dtype=np.int64), np.zeros(rows, dtype=np.int64)))
            continue
        i = header.index(name)
        if i:
            starts = ends[:, i - 1] + 1
        else:
            starts = np.empty(rows, dtype=np.int64)
            starts[0] = 0
            starts[1:] = ends[:-1, -1] + 1
        number = _numbers(body, starts, ends[:, i], empty_ok=name == "volume")
        if number is None:
            return None
        parsed.append(number)
    (times, places), *prices_volume = parsed
    if places.any() or times.min() < MIN_MS or times.max() > MAX_MS:
        return None  # the row-by-row path says which unit the times look like
    if not _prices_ok(prices_volume[:4]):
        return None
    keys = [(coef << PLACES_BITS) | p for coef, p in prices_volume]
    return times, keys


def _numbers(
    body: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray, *, empty_ok: bool
) -> tuple[IntArray, IntArray] | None:
    """(coefficient, places) of every cell ``body[starts:ends]``, read as ``digits[.digits]``;
    ``None`` if any cell is not of that form."""
    lengths = ends - starts
    longest = int(lengths.max())
    if longest > MAX_KEY_DIGITS + 1 or (not empty_ok and int(lengths.min()) == 0):
        return None
    coef = np.zeros(len(starts), dtype=np.int64)
    places = np.zeros(len(starts), dtype=np.int64)
    digits = np.zeros(len(starts), dtype=np.int64)
    dots = np.zeros(len(starts), dtype=np.int64)
    last = len(body) - 1
    for j in range(longest):
        inside = lengths > j
        char = np.where(inside, body[np.minimum(starts + j, last)], _ZERO).astype(np.int64)
        is_digit = inside & (char >= _ZERO) & (char <= _NINE)
        is_dot = inside & (char == _DOT)
        if (inside & ~is_digit & ~is_dot).any():
            return None
        coef = np.where(is_digit, coef * 10 + (char - _ZERO), coef)
        places += is_digit & (dots > 0)
        digits += is_digit
        dots += is_dot
    if int(dots.max()) > 1 or int(digits.max()) > MAX_KEY_DIGITS:
        return None
    filled = lengths > 0
    # a dot must sit between digits: "5." and ".5" go the row-by-row way
    first_digit = _is_digit(body[np.minimum(starts, last)])
    last_digit = _is_digit(body[np.maximum(ends - 1, 0)])
    if not (first_digit | ~filled).all() or not (last_digit | ~filled).all():
        return None
    return coef, places


def _is_digit(chars: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    return (chars >= _ZERO) & (chars <= _NINE)


def _prices_ok(prices: list[tuple[IntArray, IntArray]]) -> bool:
    """Positive, and ``low <= open, close <= high``, compared exactly at common places."""
    common = max(int(p.max()) for _, p in prices)
    scaled: list[IntArray] = []
    for coef, places in prices:
        shift = common - places
        if int(shift.max()) and int((_digit_count(coef) + shift).max()) > 18:
            return False  # would overflow int64: let the Decimal path judge
        scaled.append(coef * (10**shift))
    opens, highs, lows, closes = scaled
    return bool(
        (lows > 0).all()
        & (lows <= opens).all()
        & (opens <= highs).all()
        & (lows <= closes).all()
        & (closes <= highs).all()
    )


def _digit_count(coef: IntArray) -> IntArray:
    count = np.ones(len(coef), dtype=np.int64)
    rest = coef // 10
    while rest.any():
        count += rest > 0
        rest //= 10
    return count
