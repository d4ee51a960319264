"""Turn the lines of a candle file (CSV or JSON lines) into bars, locating every bad row.

Each layout has two paths that give the same bars: a fast one for well-formed files (whole
columns converted at once, equal texts sharing one ``Decimal``), and a checked one, row by
row, taken whenever the fast one meets anything unusual; the checked path words each problem
with its line. Row checks: a CSV row has as many fields as the header (which names each column
once), the values parse, are finite, prices are positive, ``low <= open, close <= high``,
volume is not negative (an empty volume is 0, as is a missing one), times are Unix ms or
ISO-8601 with a zone. Ordering and gaps are :mod:`botkit.backtest.candles`' job.
"""

from __future__ import annotations

import csv
import json
import operator
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from botkit.backtest.bars import CSV_COLUMNS, Bar
from botkit.errors import ConfigError, DataFileError, Location
from botkit.timeparse import MAX_MS, MIN_MS, parse_instant

__all__ = ["Problems", "parse_lines"]

_REQUIRED = CSV_COLUMNS[:5]
_PRICES = CSV_COLUMNS[1:5]
_MAX_SHOWN = 20
_ZERO = Decimal(0)
_NUMBER_HINT = "write a decimal such as 43123.5"
_COMMAS = operator.methodcaller("count", ",")

Rows = tuple[list[Bar], Sequence[int]]


class Problems:
    """Collects located problems of one file; keeps the first 20, counts the rest."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.shown: list[ConfigError] = []
        self.count = 0

    def add(self, line: int | None, message: str, hint: str) -> None:
        self.count += 1
        if len(self.shown) < _MAX_SHOWN:
            where = Location(file=self.source, line=line)
            self.shown.append(ConfigError(message, where=where, hint=hint))

    def raise_if_any(self) -> None:
        """Raise :class:`DataFileError` with every problem kept, if there is any."""
        if not self.count:
            return
        problems = list(self.shown)
        more = self.count - len(problems)
        if more:
            problems.append(
                ConfigError(
                    f"… and {more} more problem{'s' if more > 1 else ''}",
                    where=Location(file=self.source),
                    hint="fix the ones above and load again",
                )
            )
        raise DataFileError(problems)


class _Bad(ValueError):
    """A row problem: message and hint, located by the caller."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_lines(lines: list[str], first_line: int, problems: Problems) -> Rows:
    """Bars of the well-formed rows and their line numbers; bad rows go to ``problems``.

    ``lines`` starts at the first non-blank line of the file, which is line ``first_line``.
    """
    if lines[0].lstrip()[:1] in ("{", "["):
        return _json_rows(lines, first_line, problems)
    return _csv_rows(lines, first_line, problems)


# --- single values ---------------------------------------------------------------------------


def _decimal(value: Any, column: str, cache: dict[str, Decimal]) -> Decimal:
    """Text or a JSON number → a finite Decimal; equal texts share one Decimal object."""
    is_text = type(value) is str
    if is_text:
        found = cache.get(value)
        if found is not None:
            return found
    elif isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise _Bad(f"{column} {value!r} is not a number", _NUMBER_HINT)
    try:
        number = value if isinstance(value, Decimal) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        raise _Bad(f"{column} {value!r} is not a number", _NUMBER_HINT) from None
    if not number.is_finite():
        raise _Bad(f"{column} is {value}", "write a finite decimal number, or remove the row")
    if is_text:
        cache[value] = number
    return number


def _time(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str | Decimal):
        raise _Bad(f"time {value!r} is not a time", "write Unix ms or ISO-8601 with Z")
    given = str(value) if isinstance(value, Decimal) else value
    try:
        millis = parse_instant(given)
    except ValueError as exc:
        raise _time_problem(given, str(exc)) from None
    return millis


def _time_problem(value: int | str, message: str) -> _Bad:
    """:func:`~botkit.timeparse.parse_instant`'s refusal as *what — what to do*: a date-time
    without a zone gets the fix written with its own value; a number in another unit
    (``time N looks like Unix seconds, not milliseconds: multiply by 1000``) is split at its
    colon."""
    text = str(value).strip()
    if isinstance(value, str) and not text.lstrip("-").isdigit():
        try:
            zone = datetime.fromisoformat(text).tzinfo
        except ValueError:
            return _Bad(message, "")  # neither ms nor ISO-8601; the message gives an example
        if zone is None:
            return _Bad(
                f"time {value!r} has no zone",
                f"add one: {text}Z for UTC, or an offset such as +01:00",
            )
        return _Bad(message, "")
    what, colon, fix = message.rpartition(": ")
    return _Bad(what, fix) if colon else _Bad(message, "")


def _bar(t: Any, o: Any, h: Any, lo: Any, c: Any, v: Any, cache: dict[str, Decimal]) -> Bar:
    """One checked candle; raises :class:`_Bad` naming the first problem of the row."""
    bar = Bar(
        _time(t),
        _decimal(o, "open", cache),
        _decimal(h, "high", cache),
        _decimal(lo, "low", cache),
        _decimal(c, "close", cache),
        _ZERO if v is None or (type(v) is str and not v.strip()) else _decimal(v, "volume", cache),
    )
    if min(bar[1:5]) <= 0:
        name, price = next((n, x) for n, x in zip(_PRICES, bar[1:5], strict=True) if x <= 0)
        raise _Bad(f"{name} {price} is not positive", "prices must be greater than zero")
    if bar.high < bar.low:
        raise _Bad(f"high {bar.high} is below low {bar.low}", "fix the row or remove it")
    for name, value in (("open", bar.open), ("close", bar.close)):
        if not bar.low <= value <= bar.high:
            raise _Bad(
                f"{name} {value} is outside [low {bar.low}, high {bar.high}]",
                "fix the row or remove it",
            )
    if bar.volume < 0:
        raise _Bad(f"volume {bar.volume} is negative", "write zero or a positive volume")
    return bar


# --- CSV -------------------------------------------------------------------------------------


def _csv_rows(lines: list[str], first_line: int, problems: Problems) -> Rows:
    header = [name.strip().lower() for name in next(csv.reader(lines[:1]))]
    missing = [name for name in _REQUIRED if name not in header]
    twice = [name for name in CSV_COLUMNS if header.count(name) > 1]
    if missing:
        problems.add(
            first_line,
            f"the header has no column {', '.join(missing)}",
            "the first line must name the columns: " + ",".join(CSV_COLUMNS),
        )
    if twice:
        problems.add(
            first_line,
            f"the header names {', '.join(twice)} more than once",
            "name each column once",
        )
    if missing or twice:
        return [], []
    index = [header.index(name) for name in _REQUIRED]
    if "volume" in header:
        index.append(header.index("volume"))
    body = lines[1:]
    fast = _csv_fast(body, len(header), index)
    if fast is not None:
        return fast, range(first_line + 1, first_line + 1 + len(fast))
    before = problems.count
    rows = _csv_checked(body, first_line, header, index, problems)
    if not rows[0] and problems.count == before:
        problems.add(
            first_line, "the file has no candles, only a header", "add candle rows below it"
        )
    return rows


def _csv_fast(body: list[str], width: int, index: list[int]) -> list[Bar] | None:
    """All rows at once, or ``None`` if any row is unusual (the checked path then explains).

    The rows are split as one text: every line must hold exactly ``width - 1`` commas and no
    quote or stray carriage return, so the cells of column ``i`` are every ``width``-th cell
    from ``i`` (seven times faster than splitting line by line and transposing)."""
    if not body or set(map(_COMMAS, body)) != {width - 1}:
        return None
    text = "".join(body).replace("\r\n", "\n")
    if '"' in text or "\r" in text:
        return None
    cells = text.replace("\n", ",").split(",")
    if len(cells) == width * len(body) + 1 and cells[-1] == "":
        cells.pop()  # the last line's newline
    if len(cells) != width * len(body):
        return None
    return _fast_bars([cells[i::width] for i in index])


def _fast_bars(columns: list[Sequence[Any]]) -> list[Bar] | None:
    """Bars from raw columns (time, open, high, low, close[, volume]) of text (times may be
    JSON integers), or ``None`` if any value is not plain and valid."""
    raw_times = columns[0]
    kinds = set(map(type, raw_times))
    if kinds == {int}:
        times = list(raw_times)
    elif kinds == {str}:
        try:
            times = list(map(int, raw_times))
        except ValueError:
            return None
    else:
        return None
    if min(times) < MIN_MS or max(times) > MAX_MS:
        return None  # the checked path says which unit the times look like
    converted: list[list[Decimal]] = []
    for i, column in enumerate(columns[1:]):
        if set(map(type, column)) != {str}:
            return None
        try:
            numbers = _shared_decimals(column) if i == 4 else list(map(Decimal, column))
        except InvalidOperation:
            return None
        if not all(map(Decimal.is_finite, numbers)):
            return None
        converted.append(numbers)
    if len(converted) == 4:
        converted.append([_ZERO] * len(times))
    opens, highs, lows, closes, volumes = converted
    if min(volumes) < 0:
        return None
    for o, h, lo, c in zip(opens, highs, lows, closes, strict=True):
        if not (_ZERO < lo <= o <= h and lo <= c <= h):
            return None
    return list(map(Bar, times, opens, highs, lows, closes, volumes))


def _shared_decimals(column: Sequence[str]) -> list[Decimal]:
    """The column as Decimals, equal texts sharing one object: for volumes, which repeat (prices
    are mostly distinct, and converting each is faster than looking it up)."""
    table = {text: Decimal(text) if text else _ZERO for text in set(column)}
    return list(map(table.__getitem__, column))


def _csv_checked(
    body: list[str], first_line: int, header: list[str], index: list[int], problems: Problems
) -> Rows:
    bars: list[Bar] = []
    numbers: list[int] = []
    cache: dict[str, Decimal] = {}
    i_t, i_o, i_h, i_l, i_c = index[:5]
    i_v = index[5] if len(index) > 5 else None
    reader = csv.reader(body)
    for row in reader:
        line = first_line + reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != len(header):
            problems.add(
                line,
                f"{len(row)} fields, the header names {len(header)}",
                "give every row the header's columns: " + ",".join(header),
            )
            continue
        volume = row[i_v] if i_v is not None else None
        try:
            bar = _bar(row[i_t], row[i_o], row[i_h], row[i_l], row[i_c], volume, cache)
        except _Bad as bad:
            problems.add(line, bad.message, bad.hint)
            continue
        bars.append(bar)
        numbers.append(line)
    return bars, numbers


# --- JSON lines ------------------------------------------------------------------------------


def _no_constants(name: str) -> Any:
    raise _Bad(f"{name} is not a number", "write a finite decimal number, or remove the row")


def _json_rows(lines: list[str], first_line: int, problems: Problems) -> Rows:
    decode = json.JSONDecoder(parse_float=Decimal, parse_constant=_no_constants).decode
    items: list[Any] | None = None
    if all(line.strip() for line in lines):
        try:  # one call for the whole file; any trouble and each line is read on its own
            items = decode("[" + ",".join(lines) + "]")
        except ValueError:
            items = None
    if items is None or len(items) != len(lines):
        items = []
        numbers: list[int] = []
        for line, text in enumerate(lines, start=first_line):
            if not text.strip():
                continue
            try:
                items.append(decode(text))
            except _Bad as bad:
                problems.add(line, bad.message, bad.hint)
                continue
            except json.JSONDecodeError as exc:
                what = f"not valid JSON ({exc.msg} at column {exc.pos + 1})"
                problems.add(line, what, "write one JSON value a line")
                continue
            numbers.append(line)
    else:
        numbers = list(range(first_line, first_line + len(lines)))
    fast = _json_fast(items)
    if fast is not None:
        return fast, numbers
    bars: list[Bar] = []
    kept: list[int] = []
    cache: dict[str, Decimal] = {}
    for line, item in zip(numbers, items, strict=True):
        try:
            bars.append(_json_bar(item, cache))
        except _Bad as bad:
            problems.add(line, bad.message, bad.hint)
            continue
        kept.append(line)
    return bars, kept


def _json_fast(items: list[Any]) -> list[Bar] | None:
    if not items:
        return None
    kinds = set(map(type, items))
    try:
        if kinds == {dict}:
            with_volume = sum("volume" in item for item in items)
            if 0 < with_volume < len(items):
                return None
            keys = CSV_COLUMNS if with_volume else _REQUIRED
            columns = [[item[key] for item in items] for key in keys]
        elif kinds == {list} and min(map(len, items)) >= 8:
            #                 sT, open, high, low, close, qty
            columns = [[item[k] for item in items] for k in (7, 2, 1, 0, 3, 5)]
        else:
            return None
    except KeyError:
        return None
    return _fast_bars(list(columns))


def _json_bar(item: Any, cache: dict[str, Decimal]) -> Bar:
    if isinstance(item, dict):
        absent = [k for k in _REQUIRED if k not in item]
        if absent:
            raise _Bad(
                f"missing key {', '.join(absent)}",
                f"each object needs {', '.join(_REQUIRED)} (volume is optional)",
            )
        get = item.get
        return _bar(get("time"), get("open"), get("high"), get("low"), get("close"),
                    get("volume"), cache)  # fmt: skip
    if isinstance(item, list):
        if len(item) < 8:
            raise _Bad(
                f"array of {len(item)} fields, expected 9",
                "write the exchange's row [low, high, open, close, amt, qty, tC, sT, cT]",
            )
        lo, h, o, c, _amt, qty, _trades, start = item[:8]
        return _bar(start, o, h, lo, c, qty, cache)
    raise _Bad(
        "the line is neither a JSON object nor an array",
        "write one candle object or exchange row a line",
    )
