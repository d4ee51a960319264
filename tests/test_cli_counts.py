"""Every count on the command line (processes, trials, candles, a page size, a limit) is read by
one type, :func:`botkit.cli.argtypes.positive_int`: a value that is not a whole number of at
least 1 is one usage line naming the flag, with exit 2, before anything runs."""

from __future__ import annotations

import pytest

from botkit.cli import main

COUNTS = [
    ["backtest", "--data", "x.csv", "--strategies", "s.yaml", "--jobs"],
    ["optimize", "--data", "x.csv", "--strategies", "s.yaml", "--space", "a=1..2", "--trials"],
    ["optimize", "--data", "x.csv", "--strategies", "s.yaml", "--trials", "2", "--batch"],
    ["optimize", "--data", "x.csv", "--strategies", "s.yaml", "--trials", "2", "--folds"],
    ["optimize", "--data", "x.csv", "--strategies", "s.yaml", "--trials", "2", "--jobs"],
    ["data", "synth", "--start", "2024-01-01", "--out", "x.csv", "--candles"],
    ["data", "fetch", "--symbol", "BTC_USDT_PERP", "--start", "2024-01-01", "--out", "x.csv",
     "--page-size"],
    ["exchange", "fills", "--limit"],
]  # fmt: skip


@pytest.mark.parametrize("argv", COUNTS, ids=lambda a: f"{a[0]} {a[-1]}")
@pytest.mark.parametrize("bad", ["0", "-2", "x", "2.5", "", "³"])
def test_a_count_that_is_not_a_whole_number_of_at_least_1_is_one_usage_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], bad: str
) -> None:
    assert main([*argv, bad]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1, err
    assert f"argument {argv[-1]}: {bad!r} must be a whole number of at least 1 (see " in err
    assert out == ""


@pytest.mark.parametrize("good", ["1", " 3", "+4", "1_000"])
def test_a_count_is_read_as_python_reads_a_whole_number(good: str) -> None:
    from botkit.cli.argtypes import positive_int

    assert positive_int(good) == int(good)
