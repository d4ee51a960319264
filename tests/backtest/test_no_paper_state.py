"""A backtest keeps its simulator in memory: it writes no paper account state file, neither in
its working folder nor beside its journal (persistence is for ``botkit run`` and
``botkit sim serve --state``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.simserve import clean_env

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"


def test_a_backtest_creates_no_paper_state_file(tmp_path: Path) -> None:
    (tmp_path / "botkit.toml").write_text("")
    env = {**clean_env(), "BOTKIT_CONFIG": str(tmp_path / "botkit.toml"), "BOTKIT_EXCHANGE": "sim"}
    done = subprocess.run(
        [sys.executable, "-m", "botkit", "backtest", "--data", str(DATA),
         "--strategies", str(LADDER), "--start", "2024-01-01T00:00:00Z",
         "--end", "2024-01-01T06:00:00Z", "--journal", str(tmp_path / "var" / "bt.sqlite")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Journal" in done.stdout
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert [p for p in written if "paper" in p] == []
    assert (tmp_path / "var" / "bt.sqlite").exists()  # the run did write its journal
