"""Candle intervals and timestamps as the data commands read and write them.

An interval is written ``90s``, ``1m``, ``15m``, ``1h``, ``4h``, ``1d``, ``1w`` or as the
exchange names it (``MINUTE_1``, ``HOUR_4``, ``DAY_1``); inside botkit it is a number of
milliseconds. A time is Unix milliseconds or ISO-8601 with a zone (``2024-01-01T00:00:00Z``;
a bare date means UTC midnight); output is always ISO-8601 UTC with a ``Z``.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

__all__ = [
    "EXCHANGE_INTERVALS",
    "MAX_MS",
    "MIN_MS",
    "check_ms",
    "exchange_interval",
    "format_interval",
    "format_time",
    "parse_interval",
    "parse_time",
]

_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_EXCHANGE_UNIT_MS = {"MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000, "WEEK": 604_800_000}

EXCHANGE_INTERVALS: dict[int, str] = {
    60_000: "MINUTE_1",
    180_000: "MINUTE_3",
    300_000: "MINUTE_5",
    900_000: "MINUTE_15",
    1_800_000: "MINUTE_30",
    3_600_000: "HOUR_1",
    7_200_000: "HOUR_2",
    14_400_000: "HOUR_4",
    21_600_000: "HOUR_6",
    43_200_000: "HOUR_12",
    86_400_000: "DAY_1",
    604_800_000: "WEEK_1",
}
"""The ``interval`` words of ``/v3/market/candles`` botkit knows, by length in ms."""

_SHORT = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_LONG = re.compile(r"^\s*(MINUTE|HOUR|DAY|WEEK)_(\d+)\s*$", re.IGNORECASE)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def parse_interval(text: str) -> int:
    """``"1m"`` → 60000, ``"HOUR_4"`` → 14400000. Raises ``ValueError`` with a usable message."""
    short = _SHORT.match(text)
    if short:
        value = int(short.group(1)) * _UNIT_MS[short.group(2)]
    else:
        long = _LONG.match(text)
        if not long:
            raise ValueError(
                f"interval {text!r} is not understood: write e.g. 1m, 5m, 1h, 1d or MINUTE_1"
            )
        value = int(long.group(2)) * _EXCHANGE_UNIT_MS[long.group(1).upper()]
    if value <= 0:
        raise ValueError(f"interval {text!r} must be longer than zero")
    return value


def format_interval(ms: int) -> str:
    """60000 → ``"1m"``; the largest unit that divides the length exactly (ms as ``"250ms"``)."""
    for unit in ("w", "d", "h", "m", "s"):
        size = _UNIT_MS[unit]
        if ms >= size and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def exchange_interval(ms: int) -> str:
    """The exchange's word for an interval (``MINUTE_1``); ``ValueError`` if it has none."""
    try:
        return EXCHANGE_INTERVALS[ms]
    except KeyError:
        known = ", ".join(format_interval(k) for k in EXCHANGE_INTERVALS)
        raise ValueError(
            f"the exchange has no {format_interval(ms)} candles: use one of {known}"
        ) from None


MIN_MS = 100_000_000_000
"""1973-03-03T09:46:40Z: a smaller Unix time in ms is more likely in seconds."""
MAX_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z, the last time ISO-8601 (and :func:`format_time`) can write."""


def check_ms(ms: int) -> int:
    """``ms`` when it is a plausible Unix time in milliseconds; otherwise a ``ValueError``
    saying which unit it looks like and what to do (times in seconds, microseconds or
    nanoseconds are the usual mix-ups)."""
    if MIN_MS <= ms <= MAX_MS:
        return ms
    if ms < 0:
        raise ValueError(f"time {ms} is before 1970: write Unix ms or ISO-8601 UTC")
    if ms < MIN_MS:
        raise ValueError(f"time {ms} looks like Unix seconds, not milliseconds: multiply by 1000")
    if ms < MAX_MS * 1000:
        raise ValueError(
            f"time {ms} looks like Unix microseconds, not milliseconds: divide by 1000"
        )
    raise ValueError(f"time {ms} looks like Unix nanoseconds, not milliseconds: divide by 1000000")


def parse_time(text: str | int) -> int:
    """Unix ms, or ISO-8601 with a zone (a bare date is UTC midnight) → Unix ms.

    Raises ``ValueError`` for text that is neither, for a date-time without a zone
    (ambiguous: add ``Z`` for UTC), for a number outside 1973..9999 as Unix ms
    (:func:`check_ms`: it is in another unit), and for an ISO-8601 time outside those years
    (earlier Unix ms would be taken for seconds; later ones ISO-8601 cannot write).
    """
    if isinstance(text, int):
        return check_ms(text)
    stripped = text.strip()
    if stripped.lstrip("-").isdigit():
        return check_ms(int(stripped))
    try:
        if len(stripped) == 10:
            day = date.fromisoformat(stripped)
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(stripped)
    except ValueError:
        raise ValueError(
            f"time {text!r} is neither Unix milliseconds nor ISO-8601 "
            "(write e.g. 2024-01-01T00:00:00Z)"
        ) from None
    if moment.tzinfo is None:
        raise ValueError(f"time {text!r} has no zone: add Z for UTC (2024-01-01T00:00:00Z)")
    ms: int = (moment - _EPOCH) // _MS
    if not MIN_MS <= ms <= MAX_MS:
        raise ValueError(
            f"time {text!r} is outside the times botkit reads: give one from "
            f"{format_time(MIN_MS)} to {format_time(MAX_MS)}"
        )
    return ms


def format_time(ms: int) -> str:
    """Unix ms → ``2024-01-01T00:00:00Z`` (``.250Z`` when the ms are not whole seconds)."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    if ms % 1000:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
