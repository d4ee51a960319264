"""The same text means the same instant and the same interval in every command (docs/times.md).

Every flag of every command that takes a time or an interval reads the same table of inputs
through the real command line: accepted texts give the same Unix ms (ages measured back from the
same "now"), refused ones the same one-line error naming the flag, before anything is opened."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from botkit.cli import build_parser, main
from botkit.cli.argtypes import TimeArg

T0 = 1_714_564_800_000  # 2024-05-01T12:00:00Z
NOW = T0 + 10 * 86_400_000
MIN, HOUR, DAY = 60_000, 3_600_000, 86_400_000

FETCH = ["data", "fetch", "--symbol", "S", "--interval", "1m", "--out", "x.csv"]

# (command line up to the flag, the flag): every time flag of every command
TIME_FLAGS: list[tuple[list[str], str]] = [
    *[
        (["journal", cmd], flag)
        for cmd in ("show", "export", "summary")
        for flag in ("--since", "--until")
    ],
    (["journal", "prune"], "--before"),
    *[
        (["exchange", *what], flag)
        for what in (["history"], ["fills"], ["position-history"], ["candles", "--symbol", "X"])
        for flag in ("--start", "--end")
    ],
    (["data", "synth", "--out", "x.csv", "--candles", "5"], "--start"),
    (["data", "synth", "--out", "x.csv", "--start", "2024-01-01"], "--end"),
    ([*FETCH], "--start"),
    ([*FETCH, "--start", "0d"], "--end"),
    (["data", "check", "x.csv"], "--start"),
    (["data", "check", "x.csv"], "--end"),
    (["backtest", "--data", "x.csv", "--strategies", "s.yaml"], "--start"),
    (["backtest", "--data", "x.csv", "--strategies", "s.yaml"], "--end"),
]  # fmt: skip

TIMES: list[tuple[str, int]] = [
    ("1714564800000", T0),
    ("2024-05-01T12:00:00Z", T0),
    ("2024-05-01T12:00:00.250Z", T0 + 250),
    ("2024-05-01T14:00:00+02:00", T0),
    ("2024-05-01 12:00:00+00:00", T0),
    ("2024-05-01", T0 - 12 * HOUR),
    ("now", NOW),
    ("NOW", NOW),
    ("7d", NOW - 7 * DAY),
    ("2h", NOW - 2 * HOUR),
    ("30m", NOW - 30 * MIN),
    ("1h30m", NOW - 90 * MIN),
    ("1w", NOW - 7 * DAY),
    ("90s", NOW - 90_000),
]

REFUSED_TIMES: list[tuple[str, str]] = [
    ("2024-05-01T12:00:00", "has no zone: add Z for UTC (2024-05-01T12:00:00Z)"),
    ("1714564800", "looks like Unix seconds, not milliseconds: multiply by 1000"),
    ("1714564800000000", "looks like Unix microseconds, not milliseconds: divide by 1000"),
    ("1714564800000000000", "looks like Unix nanoseconds, not milliseconds: divide by 1000000"),
    ("yesterday", "cannot read 'yesterday': it is not a time; write Unix ms"),
    ("7x", "cannot read '7x'"),
    ("1960-01-01T00:00:00Z", "is outside the times botkit reads"),
    ("100000w", "'100000w ago' is outside the times botkit reads"),
]

# every interval flag; the exchange's candle flags accept only the lengths it serves
INTERVAL_FLAGS: list[tuple[list[str], bool]] = [
    (["exchange", "candles", "--symbol", "X"], True),
    (["data", "fetch", "--symbol", "S", "--start", "2024-01-01", "--out", "x.csv"], True),
    (["data", "synth", "--out", "x.csv", "--start", "2024-01-01", "--candles", "5"], False),
    (["data", "check", "x.csv"], False),
    (["backtest", "--data", "x.csv", "--strategies", "s.yaml"], False),
]

INTERVALS: list[tuple[str, int]] = [
    ("1m", MIN),
    ("MINUTE_1", MIN),
    ("minute_5", 5 * MIN),
    ("15m", 15 * MIN),
    ("1h", HOUR),
    ("60m", HOUR),
    ("HOUR_4", 4 * HOUR),
    ("6h", 6 * HOUR),
    ("1d", DAY),
    ("DAY_3", 3 * DAY),
    ("1w", 7 * DAY),
    ("WEEK_1", 7 * DAY),
]


def _parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def _dest(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def _instant(value: Any) -> Any:
    return value.at(NOW) if isinstance(value, TimeArg) else value


def _refusal(capsys: pytest.CaptureFixture[str], argv: list[str], flag: str) -> str:
    """The one-line error of a refused value, from the flag's name on."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    _, found, rest = err.partition(f"argument {flag}: ")
    assert found, err
    return rest.rsplit(" (see ", 1)[0]


@pytest.mark.parametrize(("text", "expected"), TIMES)
def test_every_time_flag_reads_a_text_as_the_same_instant(text: str, expected: int) -> None:
    found = {
        " ".join([*argv, flag]): _instant(getattr(_parse([*argv, flag, text]), _dest(flag)))
        for argv, flag in TIME_FLAGS
    }
    assert found == dict.fromkeys(found, expected)


@pytest.mark.parametrize(("text", "message"), REFUSED_TIMES)
def test_every_time_flag_refuses_a_text_with_the_same_line(
    capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    lines = {
        " ".join([*argv, flag]): _refusal(capsys, [*argv, flag, text], flag)
        for argv, flag in TIME_FLAGS
    }
    assert len(set(lines.values())) == 1, lines
    assert message in next(iter(lines.values()))


@pytest.mark.parametrize(("text", "expected"), INTERVALS)
def test_every_interval_flag_reads_a_text_as_the_same_length(text: str, expected: int) -> None:
    found = {
        " ".join(argv): _parse([*argv, "--interval", text]).interval for argv, _ in INTERVAL_FLAGS
    }
    assert found == dict.fromkeys(found, expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("7x", "interval '7x' is not understood: write a length such as 1m"),
        ("0m", "interval '0m' must be longer than zero"),
        ("MONTH_1", "interval 'MONTH_1' is not understood"),
    ],
)
def test_every_interval_flag_refuses_a_text_with_the_same_line(
    capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    lines = {
        " ".join(argv): _refusal(capsys, [*argv, "--interval", text], "--interval")
        for argv, _ in INTERVAL_FLAGS
    }
    assert len(set(lines.values())) == 1, lines
    assert message in next(iter(lines.values()))


def test_a_length_the_exchange_has_no_candles_of_is_refused_where_the_exchange_is_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv, asks_exchange in INTERVAL_FLAGS:
        if asks_exchange:
            line = _refusal(capsys, [*argv, "--interval", "7m"], "--interval")
            assert line.startswith("the exchange has no 7m candles: use one of 1m, 5m, 15m")
        else:
            assert _parse([*argv, "--interval", "7m"]).interval == 7 * MIN
