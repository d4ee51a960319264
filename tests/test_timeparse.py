"""Times and intervals as the data commands read them: Unix ms or ISO-8601 with a zone, and a
number in another unit (seconds, microseconds, nanoseconds) refused with what to do."""

from __future__ import annotations

import pytest

from botkit.timeparse import MAX_MS, MIN_MS, format_time, parse_instant, parse_interval

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1704067200000", T0),
        (" 1704067200000 ", T0),
        (T0, T0),
        ("2024-01-01", T0),
        ("2024-01-01T00:00:00Z", T0),
        ("2024-01-01T01:00:00+01:00", T0),
        (str(MIN_MS), MIN_MS),
        (str(MAX_MS), MAX_MS),
    ],
)
def test_times_that_are_read(text: str | int, expected: int) -> None:
    assert parse_instant(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "1704067200",
            "time 1704067200 looks like Unix seconds, not milliseconds: multiply by 1000",
        ),
        ("1704067200000000", "looks like Unix microseconds, not milliseconds: divide by 1000"),
        ("1704067200000000000", "looks like Unix nanoseconds, not milliseconds: divide by 1000000"),
        (str(MAX_MS + 1), "looks like Unix microseconds"),
        (str(MIN_MS - 1), "looks like Unix seconds"),
        ("-5", "time -5 is before 1970"),
        (-5, "time -5 is before 1970"),
        ("2024-01-01T00:00:00", "has no zone: add Z for UTC"),
        ("yesterday", "is neither Unix milliseconds nor ISO-8601"),
        ("1972-12-31", "'1972-12-31' is outside the times botkit reads: give one from 1973"),
        ("1960-01-01T00:00:00Z", "is outside the times botkit reads"),
        ("9999-12-31T23:59:59-05:00", "is outside the times botkit reads"),
    ],
)
def test_times_that_are_refused_say_what_to_do(text: str | int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_instant(text)


def test_the_last_time_accepted_can_be_written() -> None:
    assert format_time(MAX_MS) == "9999-12-31T23:59:59.999Z"
    assert format_time(MIN_MS) == "1973-03-03T09:46:40Z"


def test_intervals() -> None:
    assert parse_interval("1m") == 60_000
    assert parse_interval("HOUR_4") == 14_400_000
