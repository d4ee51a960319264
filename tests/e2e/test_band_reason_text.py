"""The price-band refusal as an operator reads it in ``botkit plan``: numbers written plainly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

STRATEGY = """\
strategy: low
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: rest
    when: true
    place: {order: {side: BUY, px: price.mark * 0.5, sz: 1}}
"""


@pytest.mark.parametrize(("bps", "shown"), [(None, "10 bps"), ("25.50", "25.5 bps")])
def test_the_band_margin_is_written_plainly(tmp_path: Path, bps: str | None, shown: str) -> None:
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "low.yaml").write_text(STRATEGY)
    (tmp_path / "botkit.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTKIT_")}
    env.update(BOTKIT_CONFIG=str(tmp_path / "botkit.toml"))
    if bps is not None:
        env["BOTKIT_PRICE_BAND_MARGIN_BPS"] = bps
    result = subprocess.run(
        [sys.executable, "-m", "botkit", "plan"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    refusal = next(line for line in result.stdout.splitlines() if "px_below_band" in line)
    assert f", {shown} inside the band)" in refusal, refusal
