"""``botkit backtest`` checks what it is given before the run and says what it did: a report
folder that cannot be written, a sweep value a strategy refuses, ``--rank`` without a sweep and
an absurd balance are one line and exit 2 before any replay; a report that fails to write at
the end is one line, not a traceback; gaps allowed through, strategies ``--symbol`` left out
and a strategy due more often than the candles are listed in the summary and the report."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.backtest.sweep import VariantOutcome, parse_sweep, render_table
from botkit.cli import main
from botkit.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
EXITS = ROOT / "strategies" / "btc-exits.yaml"
ONE_HOUR = ["--end", "2024-01-01T01:00:00Z"]


def backtest(*args: str | Path, data: Path = DATA) -> list[str]:
    return ["backtest", "--data", str(data), "--strategies", str(LADDER), str(EXITS),
            *ONE_HOUR, *map(str, args)]  # fmt: skip


def one_line_error(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: "), err
    assert "Traceback" not in captured.err + captured.out
    assert "internal error" not in err
    return err, captured.out


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "afile"
    path.write_text("not a folder\n")
    return path


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ("{file}", "is a file — name a folder"),
        ("{file}/sub", "cannot create the folder"),
    ],
)
@pytest.mark.parametrize("sweep", [[], ["--sweep", "dip=0.003,0.004", "--jobs", "1"]])
def test_a_report_folder_that_cannot_be_written_is_refused_before_the_run(
    a_file: Path,
    capsys: pytest.CaptureFixture[str],
    report: str,
    message: str,
    sweep: list[str],
) -> None:
    target = report.replace("{file}", str(a_file))
    assert main(backtest("--report", target, *sweep)) == 2
    err, out = one_line_error(capsys)
    assert f"--report {target}" in err
    assert message in err
    assert out == "", "nothing ran: no summary, no table"


def test_a_report_that_fails_to_write_at_the_end_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "rep" / "summary.json").mkdir(parents=True)  # the write fails, as a full disk
    assert main(backtest("--report", tmp_path / "rep")) == 1
    err, out = one_line_error(capsys)
    assert f"cannot write the report to {tmp_path / 'rep' / 'summary.json'}" in err
    assert out.startswith("Backtest ")  # the summary was printed before


def test_a_sweep_table_that_fails_to_write_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sweep.csv").mkdir()
    argv = backtest("--sweep", "dip=0.003", "--jobs", "1", "--report", tmp_path)
    assert main(argv) == 1
    captured = capsys.readouterr()
    last = captured.err.strip().splitlines()[-1]
    assert last == (
        f"error: botkit backtest: cannot write the report to {tmp_path / 'sweep.csv'}: "
        "Is a directory"
    )
    assert "Traceback" not in captured.err
    assert captured.out.startswith("ranked by return")


@pytest.mark.parametrize("values", ["3,2.5", "2.5,3"])
def test_every_sweep_variant_is_checked_before_any_runs(
    capsys: pytest.CaptureFixture[str], values: str
) -> None:
    assert main(backtest("--sweep", f"rungs={values}", "--jobs", "2")) == 2
    err, out = one_line_error(capsys)
    assert "--sweep variant rungs=2.5: " in err
    assert "btc-dip-ladder.yaml:" in err
    assert "not a whole number" in err
    assert out == ""
    assert "sweep: " not in err, "no variant started"


def test_a_refused_sweep_variant_is_named_by_all_its_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = backtest("--sweep", "dip=0.003,0.004", "--sweep", "rungs=3,0", "--jobs", "1")
    assert main(argv) == 2
    err, _ = one_line_error(capsys)
    assert "--sweep variant dip=0.003, rungs=0: " in err
    assert "count: 0 is not a whole number 1..200" in err


def test_rank_without_sweep_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(backtest("--rank", "fees")) == 2
    err, out = one_line_error(capsys)
    assert "--rank fees" in err
    assert "--sweep" in err
    assert out == ""


@pytest.mark.parametrize(
    ("balance", "message"),
    [
        ("1e400", "is more than 1e15"),
        ("1000000000000001", "is more than 1e15"),
        ("1e15000000", "is more than 1e15"),
    ],
)
def test_balances_outside_zero_to_1e15_are_refused(
    capsys: pytest.CaptureFixture[str], balance: str, message: str
) -> None:
    assert main(backtest(f"--balance={balance}")) == 2
    err, _ = one_line_error(capsys)
    assert message in err


def test_fees_help_says_how_to_write_a_negative_maker_fee(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["backtest", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--fees=-0.0001,0.0006" in help_text
    assert main(backtest("--fees=-0.0001,0.0006")) == 0
    assert "Fees       -" in capsys.readouterr().out  # the maker rebate was paid


def _with_gaps(tmp_path: Path, drop: list[int]) -> Path:
    """The shipped data's first two hours without the rows at these 0-based candle indexes."""
    lines = DATA.read_text().splitlines()[: 1 + 120]
    kept = [lines[0]] + [row for i, row in enumerate(lines[1:]) if i not in drop]
    path = tmp_path / "gap.csv"
    path.write_text("\n".join(kept) + "\n")
    return path


def test_gaps_allowed_through_are_listed_in_the_summary_and_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _with_gaps(tmp_path, [48])  # 00:48 is missing; 00:49 is on line 50
    argv = ["backtest", "--data", str(data), "--strategies", str(LADDER), "--allow-gaps",
            "--report", str(tmp_path / "rep")]  # fmt: skip
    assert main(argv) == 0
    where = f"{data}:50: 1 missing between 2024-01-01T00:47:00Z and 2024-01-01T00:49:00Z"
    out = capsys.readouterr().out
    assert "Notes      1 gap, 1 candle missing, replayed across (--allow-gaps):" in out
    assert f"           {where}" in out
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert where in summary["notes"]
    assert where in (tmp_path / "rep" / "index.html").read_text()


def test_many_gaps_are_listed_up_to_ten_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _with_gaps(tmp_path, list(range(5, 100, 5)))  # 19 gaps
    argv = ["backtest", "--data", str(data), "--strategies", str(LADDER), "--allow-gaps"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "19 gaps, 19 candles missing" in out
    assert out.count(" missing between ") == 10
    assert "… and 9 more gaps" in out


def _strategy(folder: Path, name: str, symbol: str, every: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(
        f"strategy: {name}\nsymbol: {symbol}\nevery: {every}\nrules:\n"
        "  - name: buy\n    when: position.qty == 0\n"
        "    place:\n      order: {side: BUY, type: MARKET, sz: 1}\n"
    )
    return path


def test_a_strategy_due_more_often_than_the_candles_is_warned_about_and_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fast = _strategy(tmp_path, "btc-x", "BTC_USDT_PERP", "30s")
    argv = ["backtest", "--data", str(DATA), "--strategies", str(fast), *ONE_HOUR,
            "--report", str(tmp_path / "rep")]  # fmt: skip
    assert main(argv) == 0
    line = "btc-x: every 30s is shorter than the 1m candles: evaluated once per candle"
    captured = capsys.readouterr()
    assert f"warning: {line}" in captured.err
    assert f"Notes      {line}" in captured.out
    assert line in json.loads((tmp_path / "rep" / "summary.json").read_text())["notes"]


def test_symbol_selects_the_strategies_of_that_symbol_and_names_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "strategies"
    _strategy(folder, "btc-x", "BTC_USDT_PERP", "1m")
    eth = _strategy(folder, "eth-x", "ETH_USDT_PERP", "1m")
    argv = ["backtest", "--data", str(DATA), "--strategies", str(folder), *ONE_HOUR]
    assert main(argv) == 2
    err, _ = one_line_error(capsys)
    assert "pass --symbol with the data's symbol to run only its strategies" in err
    assert main([*argv, "--symbol", "BTC_USDT_PERP"]) == 0
    captured = capsys.readouterr()
    left_out = f"--symbol BTC_USDT_PERP: left out {eth} (ETH_USDT_PERP)"
    assert f"warning: {left_out}" in captured.err
    assert f"Notes      {left_out}" in captured.out
    assert "Orders     placed 1 ·" in captured.out  # btc-x alone bought once and held


def test_a_symbol_no_strategy_trades_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["backtest", "--data", str(DATA), "--strategies", str(LADDER), "--symbol",
            "ETH_USDT_PERP"]  # fmt: skip
    assert main(argv) == 2
    err, _ = one_line_error(capsys)
    assert "the data is ETH_USDT_PERP but no strategy trades it" in err


@pytest.mark.parametrize(
    "override", [["--sweep", "eth-x.size=1,2"], ["--param", "eth-x.size=2"], ["--param", "k=2"]]
)
def test_a_param_only_left_out_strategies_define_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: list[str]
) -> None:
    folder = tmp_path / "strategies"
    _strategy(folder, "btc-x", "BTC_USDT_PERP", "1m")
    eth = _strategy(folder, "eth-x", "ETH_USDT_PERP", "1m")
    eth.write_text(eth.read_text().replace("every: 1m\n", "every: 1m\nparams: {size: 1, k: 1}\n"))
    argv = ["backtest", "--data", str(DATA), "--strategies", str(folder), *ONE_HOUR,
            "--symbol", "BTC_USDT_PERP", *override]  # fmt: skip
    assert main(argv) == 2
    err, _ = one_line_error(capsys)
    key = override[1].split("=")[0]
    assert f"param {key}: only strategies that --symbol BTC_USDT_PERP leaves out define it" in err


def test_sweep_table_shows_money_with_two_decimals() -> None:
    figures: dict[str, str | int | None] = {
        "return": "-0.00008958", "fees": "0.08387144", "unrealized_pnl": "-0.8958",
        "realized_pnl": "-0.001", "final_equity": "12345.678", "fills": 3,
    }  # fmt: skip
    outcome = VariantOutcome(0, {"dip": Decimal("0.003")}, figures)
    header, row = render_table([outcome], ["dip"], "return").splitlines()[1:]
    cells = dict(zip(header.split(), row.split(), strict=True))
    assert cells["return"] == "-0.01%"
    assert cells["fees"] == "0.08"
    assert cells["unrealized_pnl"] == "-0.90"
    assert cells["realized_pnl"] == "0.00"
    assert cells["final_equity"] == "12,345.68"
    assert cells["fills"] == "3"
    assert cells["max_drawdown"] == "-"


def test_sweep_values_are_kept_as_written_within_bounds_and_absurd_ones_refused() -> None:
    values = ["0", "1e15", "-1e15", "1e-15", "0.0030", "123456789.012345678"]
    assert parse_sweep([f"dip={','.join(values)}"]) == [("dip", [Decimal(v) for v in values])]
    for value in ["1e999", "-1e16", "1e-30", "0.1234567890123456789", "0E-1000", "1e15000000"]:
        with pytest.raises(UsageError, match="out of range"):
            parse_sweep([f"dip={value}"])
