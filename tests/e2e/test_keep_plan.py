"""``botkit plan --strategies EDITED_DIR`` shows what an edit of a keep: rule would change in
the book as it is (kept, placed, replaced, cancelled, and why), and sends nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.e2e.test_service_cli import Live, live  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow

GRID = """\
    strategy: e2e-grid
    symbol: BTC_USDT_PERP
    every: 2s
    params: {{step: {step}, levels: {levels}}}
    rules:
      - name: grid
        keep:
          grid:
            center: price.mark
            step_px: price.mark * params.step
            levels: params.levels
            sz: 1
"""


def _write(folder: Path, step: str, levels: int) -> None:
    folder.mkdir(exist_ok=True)
    text = textwrap.dedent(GRID.format(step=step, levels=levels))
    (folder / "grid.yaml").write_text(text)


def test_plan_of_an_edited_folder_shows_the_diff_against_the_book(
    live: Live,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    _write(live.strategies, "0.002", 2)
    placed = live.botkit("run", "--once")
    assert placed.returncode == 0, placed.stderr
    assert live.sizes() == ["1"] * 4
    edited = tmp_path / "edited"
    _write(edited, "0.002", 1)  # the outer rungs go
    same = live.botkit("plan")
    assert same.returncode == 0, same.stderr
    assert "e2e-grid/grid: 4 kept" in same.stdout
    result = live.botkit("plan", "--strategies", str(edited))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "e2e-grid/grid: 2 kept, 2 to cancel" in out
    assert "rung 2: cancel" in out
    assert "rung 3: cancel" in out
    assert "no longer declared (the rule declares 2 order(s))" in out
    assert "0 to send" in out
    assert live.sizes() == ["1"] * 4  # nothing sent
