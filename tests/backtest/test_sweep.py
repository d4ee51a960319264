"""Parameter sweeps: the grid, the ranking, the same outcomes in one process or several, and
``botkit backtest --sweep`` printing the ranked table."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.app.backtest import run_sweep
from botkit.backtest.setup import BacktestOptions
from botkit.backtest.sweep import (
    VariantOutcome,
    grid,
    journal_name,
    parse_sweep,
    rank,
    render_table,
)
from botkit.cli import main
from botkit.errors import UsageError
from botkit.journal import Journal, OrderFilter

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
EXITS = ROOT / "strategies" / "btc-exits.yaml"
D = Decimal
START, END = 1_704_067_200_000, 1_704_067_200_000 + 6 * 3_600_000  # the first six hours


def test_sweep_specs_parse_into_axes_and_the_grid_is_their_product_first_axis_slowest() -> None:
    axes = parse_sweep(["dip=0.003, 0.004,0.003", "btc-exits.take=0.05,0.1"])
    assert axes == [("dip", [D("0.003"), D("0.004")]), ("btc-exits.take", [D("0.05"), D("0.1")])]
    assert grid(axes) == [
        {"dip": D("0.003"), "btc-exits.take": D("0.05")},
        {"dip": D("0.003"), "btc-exits.take": D("0.1")},
        {"dip": D("0.004"), "btc-exits.take": D("0.05")},
        {"dip": D("0.004"), "btc-exits.take": D("0.1")},
    ]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (["dip"], "write KEY=V1,V2"),
        (["dip="], "write KEY=V1,V2"),
        (["dip=1,NaN"], "'NaN' is not a number"),
        (["dip=1", "dip=2"], "given twice"),
    ],
)
def test_bad_sweep_specs_say_what_to_write(specs: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_sweep(specs)


def test_a_grid_too_large_is_refused() -> None:
    values = ",".join(str(i) for i in range(101))
    with pytest.raises(UsageError, match="more than 10,000"):
        grid(parse_sweep([f"a={values}", f"b={values}"]))


def outcome(index: int, ret: str, drawdown: str, error: str = "") -> VariantOutcome:
    figures: dict[str, str | int | None] = (
        {} if error else {"return": ret, "max_drawdown": drawdown, "fills": 1}
    )
    return VariantOutcome(index, {"dip": D(index)}, figures, error=error)


def test_rank_puts_the_best_first_lower_is_better_for_drawdown_failures_last() -> None:
    outcomes = [
        outcome(0, "0.01", "0.05"),
        outcome(1, "0.03", "0.02"),
        outcome(2, "", "", error="boom"),
        outcome(3, "0.03", "0.01"),
    ]
    assert [o.index for o in rank(outcomes, "return")] == [1, 3, 0, 2]  # tie: grid order
    assert [o.index for o in rank(outcomes, "max_drawdown")] == [3, 1, 0, 2]
    with pytest.raises(UsageError, match="not a figure"):
        rank(outcomes, "luck")
    table = render_table(rank(outcomes, "return"), ["dip"], "return")
    lines = table.splitlines()
    assert lines[0] == "ranked by return (highest first)"
    assert lines[2].split()[:3] == ["1", "1", "3.00%"]
    assert lines[-1] == "#4: boom"


def test_variants_give_the_same_outcomes_in_one_process_and_in_a_pool() -> None:
    base = BacktestOptions(data=DATA, strategies=(LADDER, EXITS), start_ms=START, end_ms=END)
    variants = grid(parse_sweep(["dip=0.002,0.5"]))
    serial = run_sweep(base, variants, jobs=1)
    pooled = run_sweep(base, variants, jobs=2)
    assert serial == pooled
    assert [o.error for o in serial] == ["", ""]
    small, huge = serial
    assert small.params == {"dip": D("0.002")}
    assert small.figures["orders_placed"] != 0
    assert huge.figures["orders_placed"] == 0  # a 50 % dip never comes


def test_cli_sweep_prints_the_ranked_table_and_writes_sweep_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["backtest", "--data", str(DATA), "--strategies", str(LADDER), str(EXITS),
            "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T06:00:00Z",
            "--sweep", "dip=0.5,0.002", "--sweep", "btc-exits.take=0.08", "--rank", "orders_placed",
            "--jobs", "1", "--report", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ranked by orders_placed (highest first)"
    assert lines[1].split()[:4] == ["#", "dip", "btc-exits.take", "orders_placed"]
    assert lines[2].split()[:3] == ["1", "0.002", "0.08"]  # the smaller dip trades more
    assert lines[3].split()[:4] == ["2", "0.5", "0.08", "0"]
    with (tmp_path / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["rank"], r["dip"]) for r in rows] == [("1", "0.002"), ("2", "0.5")]
    assert rows[1]["orders_placed"] == "0"


def test_cli_sweep_keeps_a_journal_per_variant_named_by_its_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["backtest", "--data", str(DATA), "--strategies", str(LADDER), str(EXITS),
            "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T06:00:00Z",
            "--sweep", "dip=0.5,0.002", "--sweep", "btc-exits.take=0.08", "--rank", "orders_placed",
            "--jobs", "2"]  # fmt: skip
    assert main(argv) == 0
    table = capsys.readouterr().out
    folder = tmp_path / "journals"
    assert main([*argv, "--journal", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(table)  # the same table, and where the journals are
    assert out[len(table) :] == f"Journals   {folder} (one per variant, named by its values)\n"
    names = sorted(p.name for p in folder.glob("*.sqlite"))
    assert names == ["dip=0.002,btc-exits.take=0.08.sqlite", "dip=0.5,btc-exits.take=0.08.sqlite"]
    placed = {}
    for name in names:
        with Journal(folder / name, clock=lambda: 0) as journal:
            placed[name] = len(journal.orders(OrderFilter(include_dry=False)))
    assert placed["dip=0.5,btc-exits.take=0.08.sqlite"] == 0  # a 50 % dip never comes
    assert placed["dip=0.002,btc-exits.take=0.08.sqlite"] > 0
    assert main([*argv, "--journal", str(folder)]) == 2  # never over an earlier sweep's
    assert "already exists" in capsys.readouterr().err


def test_a_variant_named_past_the_limit_is_named_by_its_place() -> None:
    assert journal_name({"dip": D("0.003")}, 0, 12) == "dip=0.003.sqlite"
    assert journal_name({"a/b": D("-1")}, 0, 12) == "a_b=-1.sqlite"
    assert journal_name({"k" * 300: D(1)}, 6, 12) == "variant-007.sqlite"
