"""Times and intervals as every command reads them (botkit.timeparse): Unix ms, ISO-8601 with a
zone, a date, an age or now; a number in another unit (seconds, microseconds, nanoseconds) refused
with what to do; intervals as spans or the exchange's words, one table of candle words."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.exchange.params import CANDLE_INTERVALS
from botkit.rules.durations import parse_duration
from botkit.sim.prices import interval_ms
from botkit.timeparse import (
    CANDLE_WORDS,
    MAX_MS,
    MIN_MS,
    exchange_interval,
    format_interval,
    format_time,
    parse_instant,
    parse_interval,
    parse_time,
    span_ms,
)
from tests.fuzz.profiles import FUZZ

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


def _strftime(ms: int) -> str:
    """The model: the whole moment through ``strftime``."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    if ms % 1000:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@FUZZ
@given(
    st.one_of(
        st.integers(-62_135_596_800_000, MAX_MS),  # year 1 to 9999, before 1970 too
        st.integers(MIN_MS // 1000, MAX_MS // 1000).map(lambda s: s * 1000),  # whole seconds
        st.integers(0, 400 * 366).map(lambda d: d * 86_400_000 - 1),  # a day's last ms
    )
)
def test_a_time_is_written_as_strftime_writes_the_whole_moment(ms: int) -> None:
    """The date once a day, the time of day by arithmetic: ``strftime``'s text."""
    assert format_time(ms) == _strftime(ms)


def test_intervals() -> None:
    assert parse_interval("1m") == 60_000
    assert parse_interval("HOUR_4") == 14_400_000


NOW = T0 + 86_400_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        (" Now ", NOW),
        ("7d", NOW - 7 * 86_400_000),
        ("2h", NOW - 7_200_000),
        ("30m", NOW - 1_800_000),
        ("1h 30m", NOW - 5_400_000),
        ("250ms", NOW - 250),
        ("0s", NOW),
        ("1704067200000", T0),
        ("2024-01-01", T0),
        ("2024-01-01T00:00:00.999+00:00", T0 + 999),
    ],
)
def test_a_command_time_is_absolute_or_an_age_before_now(text: str, expected: int) -> None:
    assert parse_time(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "cannot read 'soon': it is not a time; write Unix ms (1714564800000), ISO-8601"),
        ("7 days", "cannot read '7 days'"),
        ("-7d", "cannot read '-7d'"),
        ("7D", "cannot read '7D'"),
        ("2024-01-01T00:00:00", "has no zone: add Z for UTC (2024-01-01T00:00:00Z)"),
        ("1704067200", "looks like Unix seconds"),
        ("60000w", "'60000w ago' is outside the times botkit reads"),
    ],
)
def test_a_command_time_that_is_refused_says_what_to_write(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_time(text, NOW)


def test_a_candle_file_time_is_never_relative() -> None:
    with pytest.raises(ValueError, match="is neither Unix milliseconds nor ISO-8601"):
        parse_instant("7d")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1m", 60_000),
        ("90s", 90_000),
        ("250ms", 250),
        ("1h30m", 5_400_000),
        ("MINUTE_15", 900_000),
        ("hour_2", 7_200_000),
        ("DAY_3", 259_200_000),
        ("WEEK_1", 604_800_000),
    ],
)
def test_an_interval_is_a_span_or_the_exchange_word(text: str, expected: int) -> None:
    assert parse_interval(text) == expected
    assert parse_interval(format_interval(expected)) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("1M", "is not understood"), ("0h", "longer than zero"), ("MINUTE_0", "longer than zero")],
)
def test_an_interval_that_is_refused_says_what_to_write(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_interval(text)


def test_every_candle_word_maps_to_its_length_and_back() -> None:
    for word, ms in CANDLE_WORDS.items():
        assert parse_interval(word) == ms
        assert exchange_interval(ms) == word
    with pytest.raises(ValueError, match="the exchange has no 3m candles: use one of 1m, 5m"):
        exchange_interval(180_000)


def test_the_client_the_simulator_and_the_parser_know_the_same_candle_words() -> None:
    assert tuple(CANDLE_WORDS) == CANDLE_INTERVALS
    assert {w: interval_ms(w) for w in CANDLE_WORDS} == CANDLE_WORDS


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1h30m", 5_400_000), (" 1h 30m ", 5_400_000), ("0s", 0), ("1M", None), ("h", None)],
)
def test_a_span_is_the_strategies_duration_grammar(text: str, expected: int | None) -> None:
    assert span_ms(text) == expected
    if expected:
        assert parse_duration(text) == expected
