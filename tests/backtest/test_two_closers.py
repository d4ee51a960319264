"""Two strategies that close one position in the same cycle: one close goes out, the other is
refused in the plan ("no_position_to_close") instead of being sent for the exchange to refuse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
ENTRY = """\
strategy: entry
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: buy
    when: position.qty == 0
    place: {order: {side: BUY, type: MARKET, sz: 2}}
"""
EXIT = """\
strategy: {name}
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: out
    when: position.qty != 0
    close: {{}}
"""


def test_the_second_close_of_one_position_is_refused_locally_not_by_the_exchange(
    tmp_path: Path,
) -> None:
    (tmp_path / "entry.yaml").write_text(ENTRY)
    for name in ("exit-a", "exit-b"):
        (tmp_path / f"{name}.yaml").write_text(EXIT.format(name=name))
    done = subprocess.run(
        [sys.executable, "-m", "botkit", "backtest", "--data", str(DATA), "--strategies",
         *(str(tmp_path / f"{n}.yaml") for n in ("entry", "exit-a", "exit-b")),
         "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T00:10:00Z"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "10018" not in done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert "rejected 0" in lines["Orders"]
    assert "filled 10" in lines["Orders"]  # five entries and five closes, as before
    assert lines["Refused"].split() == ["Refused", "no_position_to_close", "5"]
    assert lines["Rejected"].split() == ["Rejected", "none"]
