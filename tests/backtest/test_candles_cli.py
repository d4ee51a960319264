"""Candle files that once crashed a command (exit 1, "internal error") are refused by both
``botkit data check`` and ``botkit backtest`` with one line per problem and exit 2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
HEADER = "time,open,high,low,close\n"

Command = Callable[[Path], list[str]]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.csv"
    path.write_text(text, encoding="utf-8")
    return path


def errors_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert "internal error" not in captured.err
    return captured.err.splitlines()


def check(path: Path, *args: str) -> list[str]:
    return ["data", "check", str(path), *args]


def backtest(path: Path, *args: str) -> list[str]:
    return ["backtest", "--data", str(path), "--strategies", str(LADDER), *args]


def test_check_refuses_microsecond_times_with_the_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, HEADER + "1704067200000000,60000,60001,59999,60000\n")
    assert errors_of(check(path), capsys) == [
        f"error: {path}:2: time 1704067200000000 looks like Unix microseconds, not milliseconds"
        " — divide by 1000"
    ]


@pytest.mark.parametrize(
    "argv",
    [
        lambda p: check(p),
        lambda p: check(p, "--interval", "1m"),
        lambda p: backtest(p),
        lambda p: backtest(p, "--interval", "1m"),
    ],
    ids=["check", "check-interval", "backtest", "backtest-interval"],
)
def test_header_only_file_says_it_has_no_candles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: Command
) -> None:
    path = write(tmp_path, HEADER)
    assert errors_of(argv(path), capsys) == [
        f"error: {path}:1: the file has no candles, only a header — add candle rows below it"
    ]


@pytest.mark.parametrize("command", [check, backtest])
def test_candles_too_close_for_the_price_path_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: Command
) -> None:
    rows = "".join(f"{1704067200000 + 2 * i},60000,60001,59999,60000\n" for i in range(3))
    path = write(tmp_path, HEADER + rows)
    assert errors_of(command(path), capsys) == [
        f"error: {path}: the candle interval 2ms is shorter than the 4ms the backtest needs"
        " (four price points a candle) — use longer candles, e.g. 1m"
    ]


@pytest.mark.parametrize("command", [check, backtest])
def test_a_directory_is_named_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: Command
) -> None:
    assert errors_of(command(tmp_path), capsys) == [
        f"error: {tmp_path}: is a directory, not a data file"
        " — give the candle file itself (a CSV or JSON-lines file)"
    ]
