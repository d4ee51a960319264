"""Times, spans and candle intervals as people write them ↔ Unix milliseconds: one grammar.

Every command that takes a time or an interval, the candle files, the strategies' durations and
the exchange's candle words go through here, so the same text means the same instant and the same
length everywhere (docs/times.md). Pure: no clock is read; a relative time is resolved against the
``now_ms`` the caller passes.

* A **span** is one or more ``<number><unit>`` with the units ``ms s m h d w`` (``90s``, ``15m``,
  ``1h30m``, ``7d``).
* A **time** is Unix milliseconds (``1714564800000``), ISO-8601 *with a zone*
  (``2024-05-01T12:00:00Z``, ``…+02:00``), a date alone (``2024-05-01``: midnight UTC), ``now``, or
  a span meaning that long before now (``7d``, ``2h``, ``30m``). An ISO time of day without a zone
  is refused (the machine's zone is not the exchange's, and a silent guess shifts every window):
  add ``Z`` or an offset. A number that is not a plausible Unix time in ms is refused with the
  unit it looks like (seconds, microseconds, nanoseconds). Times run from :data:`MIN_MS` to
  :data:`MAX_MS`.
* An **interval** is a span (``1m``, ``4h``, ``1d``) or the exchange's word for it (``MINUTE_1``,
  ``HOUR_4``, ``DAY_1``, any letter case). :data:`CANDLE_WORDS` are the words
  ``/v3/market/candles`` serves; :func:`exchange_interval` maps a length to its word.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache

__all__ = [
    "CANDLE_WORDS",
    "INTERVAL_FORMS",
    "MAX_MS",
    "MIN_MS",
    "TIME_FORMS",
    "UNIT_MS",
    "check_ms",
    "exchange_interval",
    "format_interval",
    "format_time",
    "parse_instant",
    "parse_interval",
    "parse_time",
    "span_ms",
]

UNIT_MS: dict[str, int] = {
    "ms": 1,
    "s": 1_000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
}
"""The units of a span, in milliseconds."""

_PART = re.compile(r"(\d+)(ms|s|m|h|d|w)")
_WHOLE = re.compile(r"(?:\d+(?:ms|s|m|h|d|w))+")
_WORD = re.compile(r"(MINUTE|HOUR|DAY|WEEK)_(\d+)", re.IGNORECASE)
_WORD_MS = {"MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000, "WEEK": 604_800_000}

CANDLE_WORDS: dict[str, int] = {
    "MINUTE_1": 60_000,
    "MINUTE_5": 300_000,
    "MINUTE_15": 900_000,
    "MINUTE_30": 1_800_000,
    "HOUR_1": 3_600_000,
    "HOUR_2": 7_200_000,
    "HOUR_4": 14_400_000,
    "HOUR_6": 21_600_000,
    "HOUR_12": 43_200_000,
    "DAY_1": 86_400_000,
    "DAY_3": 259_200_000,
    "WEEK_1": 604_800_000,
}
"""The ``interval`` words of ``/v3/market/candles`` (the client checks, the simulator serves and
``data fetch`` asks for exactly these), with their lengths in ms."""
_WORD_OF_MS = {ms: word for word, ms in CANDLE_WORDS.items()}

MIN_MS = 100_000_000_000
"""1973-03-03T09:46:40Z: a smaller Unix time in ms is more likely in seconds."""
MAX_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z, the last time ISO-8601 (and :func:`format_time`) can write."""

TIME_FORMS = "Unix ms (1714564800000), ISO-8601 with a zone (2024-05-01T12:00:00Z), a date "
TIME_FORMS += "(2024-05-01, midnight UTC), an age (30m, 2h, 7d) or now"
"""The accepted forms of a time, as error messages and help texts list them."""
INTERVAL_FORMS = "a length such as 1m, 15m, 4h, 1d, 1w, or the exchange's word (MINUTE_1, HOUR_4)"
"""The accepted forms of an interval."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def span_ms(text: str) -> int | None:
    """``"1h30m"`` → 5_400_000; ``None`` when the text is not a span (zero is a span: 0).

    Spaces are ignored (``"1h 30m"``); units are lower case, so ``1M`` is not a month."""
    cleaned = text.strip().replace(" ", "")
    if not _WHOLE.fullmatch(cleaned):
        return None
    return sum(int(n) * UNIT_MS[u] for n, u in _PART.findall(cleaned))


def parse_interval(text: str) -> int:
    """``"1m"`` → 60000, ``"HOUR_4"`` → 14400000. ``ValueError`` saying what to write."""
    value = span_ms(text)
    if value is None:
        word = _WORD.fullmatch(text.strip())
        if not word:
            raise ValueError(f"interval {text!r} is not understood: write {INTERVAL_FORMS}")
        value = int(word.group(2)) * _WORD_MS[word.group(1).upper()]
    if value <= 0:
        raise ValueError(f"interval {text!r} must be longer than zero")
    return value


def format_interval(ms: int) -> str:
    """60000 → ``"1m"``; the largest unit that divides the length exactly (ms as ``"250ms"``)."""
    for unit in ("w", "d", "h", "m", "s"):
        size = UNIT_MS[unit]
        if ms >= size and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def exchange_interval(ms: int) -> str:
    """The exchange's word for an interval (``MINUTE_1``); ``ValueError`` if it has none."""
    try:
        return _WORD_OF_MS[ms]
    except KeyError:
        known = ", ".join(format_interval(k) for k in CANDLE_WORDS.values())
        raise ValueError(
            f"the exchange has no {format_interval(ms)} candles: use one of {known}"
        ) from None


def check_ms(ms: int) -> int:
    """``ms`` when it is a plausible Unix time in milliseconds; otherwise a ``ValueError``
    saying which unit it looks like and what to do (times in seconds, microseconds or
    nanoseconds are the usual mix-ups)."""
    if MIN_MS <= ms <= MAX_MS:
        return ms
    if ms < 0:
        raise ValueError(f"time {ms} is before 1970: write Unix ms or ISO-8601 with Z")
    if ms < MIN_MS:
        raise ValueError(f"time {ms} looks like Unix seconds, not milliseconds: multiply by 1000")
    if ms < MAX_MS * 1000:
        raise ValueError(
            f"time {ms} looks like Unix microseconds, not milliseconds: divide by 1000"
        )
    raise ValueError(f"time {ms} looks like Unix nanoseconds, not milliseconds: divide by 1000000")


def _in_range(ms: int, text: str) -> int:
    if not MIN_MS <= ms <= MAX_MS:
        raise ValueError(
            f"time {text!r} is outside the times botkit reads: give one from "
            f"{format_time(MIN_MS)} to {format_time(MAX_MS)}"
        )
    return ms


def _iso(text: str) -> int | None:
    """ISO-8601 (a date alone is midnight UTC) → Unix ms; ``None`` if it is not ISO-8601."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        pass
    else:
        return (datetime(day.year, day.month, day.day, tzinfo=UTC) - _EPOCH) // _MS
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        raise ValueError(
            f"time {text!r} has no zone: add Z for UTC ({text}Z) or an offset such as +02:00"
        )
    ms: int = (moment - _EPOCH) // _MS
    return ms


def _absolute(text: str) -> int | None:
    """Unix ms or ISO-8601 → Unix ms, checked; ``None`` when the text is neither."""
    stripped = text.strip()
    digits = stripped.removeprefix("-")
    if digits.isascii() and digits.isdigit():
        return check_ms(int(stripped))
    ms = _iso(stripped)
    return None if ms is None else _in_range(ms, text)


def parse_instant(text: str | int) -> int:
    """An absolute time — Unix ms, ISO-8601 with a zone, or a date — → Unix ms (candle files).

    ``ValueError`` for anything else, for a time of day without a zone, for a number that is
    not Unix ms (:func:`check_ms`), and for a time outside :data:`MIN_MS` .. :data:`MAX_MS`.
    """
    if isinstance(text, int):
        return check_ms(text)
    ms = _absolute(text)
    if ms is None:
        raise ValueError(
            f"time {text!r} is neither Unix milliseconds nor ISO-8601 "
            "(write e.g. 2024-01-01T00:00:00Z)"
        )
    return ms


def parse_time(text: str, now_ms: int) -> int:
    """Any form a command accepts (:data:`TIME_FORMS`) → Unix ms; an age or ``now`` is
    resolved against ``now_ms``. ``ValueError`` naming the forms for text that is none."""
    stripped = text.strip()
    if stripped.lower() == "now":
        return _in_range(now_ms, text)
    age = span_ms(stripped)
    if age is not None:
        return _in_range(now_ms - age, f"{stripped} ago")
    ms = _absolute(stripped)
    if ms is None:
        raise ValueError(f"cannot read {text!r}: it is not a time; write {TIME_FORMS}")
    return ms


def format_time(ms: int) -> str:
    """Unix ms → ``2024-01-01T00:00:00Z`` (``.250Z`` when the ms are not whole seconds).

    The date is written by ``strftime`` once per day (a report writes a time for each of a
    year's orders), the time of day by arithmetic: the same text as ``strftime`` of the whole
    moment (tests/test_timeparse.py compares them)."""
    days, rest = divmod(ms, 86_400_000)
    seconds, milli = divmod(rest, 1000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    if milli:
        return f"{_format_day(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}.{milli:03d}Z"
    return f"{_format_day(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}Z"


@lru_cache(maxsize=4096)
def _format_day(days: int) -> str:
    """The date ``days`` after 1970-01-01, ``2024-01-01``."""
    return (_EPOCH + timedelta(days=days)).strftime("%Y-%m-%d")
