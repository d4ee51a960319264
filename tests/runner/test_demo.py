"""``botkit demo``: the example strategies on paper, a summary, and a journal left to read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_demo_trades_the_examples_and_leaves_a_readable_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    journal = tmp_path / "demo.sqlite"
    assert main(["demo", "--hours", "2", "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert "Ran 121 cycles over 2.0h." in out
    assert (
        "Cycles: 121; strategies: btc-dip-ladder, btc-ema-cross, btc-exits, btc-grid-keep,"
        " btc-rsi-ladder, eth-margin-sized" in out
    )
    assert "Kept orders resting now" in out  # the kept grid and ladder, rung by rung
    assert "btc-grid-keep/grid" in out
    assert "0 unsettled" in out
    assert "Positions and PnL per symbol" in out
    assert "Equity: 10000.00 -> " in out
    # the trades' net PnL, by the rule that opened and closed them, is the equity's change
    net = re.search(r"net PnL (-?[\d.]+) USDT after", out)
    change = re.search(r"Equity: 10000\.00 -> [\d.]+ \(\+?(-?[\d.]+)\)", out)
    assert net is not None
    assert change is not None
    assert net.group(1) == change.group(1)
    assert "btc-dip-ladder/ladder-on-dip" in out
    assert "Fills per strategy" not in out  # the per-strategy replay that did not add up
    assert main(["journal", "summary", "--journal", str(journal)]) == 0
    summary = capsys.readouterr().out
    assert summary.strip(), "journal summary printed nothing"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--hours", "0"], "--hours must be between 1 and 168"),
        (["demo", "--strategies", "no/such/dir"], "no/such/dir does not exist"),
    ],
)
def test_demo_argument_mistakes_are_one_line_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
