"""``botkit backtest``: a run prints the summary and writes the report; the same run twice
writes byte-identical files; every mistake is one line on stderr and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.backtest.report import REPORT_FILES
from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
EXITS = ROOT / "strategies" / "btc-exits.yaml"
HALF_DAY = ["--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T12:00:00Z"]


def backtest(*args: str | Path) -> list[str]:
    return ["backtest", "--data", str(DATA), "--strategies", str(LADDER), str(EXITS),
            *HALF_DAY, *map(str, args)]  # fmt: skip


def test_run_prints_the_summary_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(backtest("--report", tmp_path / "rep", "--balance", "5000")) == 0
    out = capsys.readouterr().out
    assert "Backtest   BTC_USDT_PERP 1m  2024-01-01T00:00:00Z → 2024-01-01T12:00:00Z" in out
    assert "(720 candles)" in out
    assert "Equity     5,000.00 →" in out
    assert f"Report     {tmp_path / 'rep' / 'index.html'}" in out
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == sorted(REPORT_FILES)
    fills = (tmp_path / "rep" / "fills.csv").read_text().splitlines()
    assert len(fills) > 1, "the example strategies traded in the first half day"


@pytest.mark.slow
def test_fixed_seed_run_writes_byte_identical_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        assert main(backtest("--seed", "7", "--report", tmp_path / name)) == 0
    capsys.readouterr()
    for file in REPORT_FILES:
        first = (tmp_path / "a" / file).read_bytes()
        assert first == (tmp_path / "b" / file).read_bytes(), file
    assert b"BUY" in (tmp_path / "a" / "fills.csv").read_bytes()


def test_journal_file_keeps_the_runs_orders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from botkit.journal import Journal, OrderFilter

    path = tmp_path / "bt.sqlite"
    assert main(backtest("--journal", path)) == 0
    assert f"Journal    {path}" in capsys.readouterr().out
    with Journal(path, clock=lambda: 0) as journal:
        assert journal.orders(OrderFilter())
    assert main(backtest("--journal", path)) == 2  # never appends to an old run's journal
    assert "already exists" in capsys.readouterr().err


def test_evaluations_all_journals_every_rule_every_cycle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from botkit.journal import Journal, OrderFilter

    counts = {}
    for mode in ("changes", "all"):
        path = tmp_path / f"{mode}.sqlite"
        assert main(backtest("--journal", path, "--evaluations", mode)) == 0
        with Journal(path, clock=lambda: 0) as journal:
            cycles = journal.cycles()
            counts[mode] = (
                sum(c.evaluations for c in cycles),
                sum(c.fired for c in cycles),
                [(o.cl_ord_id, o.outcome) for o in journal.orders(OrderFilter())],
            )
    capsys.readouterr()
    assert counts["all"][0] == 720 * 4  # 720 cycles; the two strategies have four rules
    assert counts["changes"][0] < counts["all"][0] // 10
    assert counts["changes"][1:] == counts["all"][1:]  # the same fires and the same orders


def test_param_override_changes_the_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(backtest("--param", "btc-dip-ladder.dip=0.5")) == 0  # a 50 % dip never comes
    assert "Orders     placed 0 ·" in capsys.readouterr().out


def _bad_csv(tmp_path: Path) -> Path:
    path = tmp_path / "bad.csv"
    path.write_text(
        "time,open,high,low,close\n"
        "1704067200000,60000,60010,59990,60000\n"
        "1704067260000,60000,59000,59990,60000\n"  # high below low
    )
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "missing.csv"], "missing.csv: no such data file"),
        (["--data", "{bad}"], "bad.csv:3: "),
        (["--strategies", "nowhere.yaml"], "nowhere.yaml: no such file or directory"),
        (["--symbol", "ETH_USDT_PERP"], "the data is ETH_USDT_PERP but"),
        (["--fees", "0.0002"], "write MAKER,TAKER"),
        (["--balance", "-5"], "is not a positive number"),
        (["--param", "nope=1"], "no strategy defines params nope"),
        (["--param", "dip"], "write KEY=VALUE"),
        (["--start", "2024-01-02", "--end", "2024-01-01"], "--end must be after --start"),
        (["--start", "2030-01-01T00:00:00Z"], "no candles in the selected period"),
        (["--sim-config", "none.toml"], "none.toml: simulator config file not found"),
        (["--sweep", "dip"], "write KEY=V1,V2"),
        (["--sweep", "dip=0.1,x"], "'x' is not a number"),
        (["--sweep", "missing=1,2"], "no strategy defines params missing"),
        (["--rank", "luck"], "'luck' is not a figure to rank by — use one of: final_equity,"),
        (["--rank", "retrun"], "'retrun' is not a figure to rank by — did you mean 'return'?"),
        (["--rank", "max_drawdown_trough_ms"], "'max_drawdown_trough_ms' is not a figure to rank"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    args = [a.replace("{bad}", str(_bad_csv(tmp_path))) for a in args]
    base = ["backtest", "--data", str(DATA), "--strategies", str(LADDER)]
    argv = base + args if "--data" not in args else ["backtest", "--strategies", str(LADDER), *args]
    if "--strategies" in args:
        argv = ["backtest", "--data", str(DATA), *args]
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in captured.err + captured.out
