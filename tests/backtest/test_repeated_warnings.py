"""A rule that fails the same way on every candle writes its warning once, and the count."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
FAILING = """\
strategy: failing
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: divide
    when: 1 / position.qty > 0
    cancel: {}
"""


def test_a_warning_repeated_every_candle_is_written_once_with_its_count(tmp_path: Path) -> None:
    (tmp_path / "failing.yaml").write_text(FAILING)
    done = subprocess.run(
        [sys.executable, "-m", "botkit", "backtest", "--data", str(DATA), "--strategies",
         str(tmp_path / "failing.yaml"), "--start", "2024-01-01T00:00:00Z", "--end",
         "2024-01-01T02:00:00Z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "division by zero" in line]
    message = "[strategy=failing rule=divide] rule error: rule 'divide': division by zero"
    assert len(lines) == 2, lines
    assert lines[0].endswith(f"WARNING {message} in '1 / position.qty > 0'")
    assert lines[1] == (
        f"repeated: WARNING {message} in '1 / position.qty > 0' — 120 times in all (shown once)"
    )
    assert "failing/divide: 120×" in done.stdout  # the summary's problem count agrees
