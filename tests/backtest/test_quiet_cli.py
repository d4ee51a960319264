"""``botkit backtest`` skips the cycles that provably change nothing (botkit.runner.quiet).

The dip ladder alone on the shipped week's first day: once a rung has filled and the ladder is
cancelled, its only rule is gated on ``position.qty == 0`` with a position held and nothing
resting, so the cycles from then on are skipped — they journal no cycle row — and the orders
and fills are those of the run that evaluates every cycle (``--evaluations all`` never skips).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.cli import main
from botkit.journal import Journal, OrderFilter

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
DAY = ["--end", "2024-01-02T00:00:00Z"]


def _run(tmp: Path, evaluations: str) -> tuple[int, list[tuple[str, str, str | None]], str]:
    path = tmp / f"{evaluations}.sqlite"
    report = tmp / f"report-{evaluations}"
    args = ["backtest", "--data", str(DATA), "--strategies", str(LADDER), *DAY, "--evaluations",
            evaluations, "--journal", str(path), "--report", str(report)]  # fmt: skip
    assert main(args) == 0
    with Journal(path, clock=lambda: 0) as journal:
        cycles = len(journal.cycles())
        orders = [(o.cl_ord_id, o.outcome.value if o.outcome else "", o.px)
                  for o in journal.orders(OrderFilter())]  # fmt: skip
    return cycles, orders, (report / "fills.csv").read_text()


def test_quiet_cycles_of_the_dip_ladder_are_skipped_with_the_same_orders_and_fills(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    every, every_orders, every_fills = _run(tmp_path, "all")
    quick, quick_orders, quick_fills = _run(tmp_path, "changes")
    capsys.readouterr()
    assert every == 1440  # a cycle a minute
    assert quick < every // 4, "most cycles of the day hold a position with nothing to do"
    assert quick_orders == every_orders
    assert len(quick_orders) == 12
    assert quick_fills == every_fills
