"""The shipped systemd units: valid, and sandboxed to an exposure score of 1.5 or lower."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNITS = Path(__file__).resolve().parents[2] / "systemd"
ANALYZE = shutil.which("systemd-analyze")

pytestmark = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def _installable_copy(unit: str, tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at this interpreter's botkit, as after installation."""
    text = (UNITS / unit).read_text()
    botkit = Path(sys.executable).with_name("botkit")
    text = text.replace("/opt/botkit/.venv/bin/botkit", str(botkit))
    name = unit.replace("@.", "@test.")
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("unit", ["botkit.service", "botkit@.service"])
def test_unit_passes_systemd_analyze_verify(unit: str, tmp_path: Path) -> None:
    path = _installable_copy(unit, tmp_path)
    result = subprocess.run(
        [str(ANALYZE), "verify", str(path)], capture_output=True, text=True, check=False
    )
    problems = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if path.name in line and "Failed to" not in line  # unrelated host units are not ours
    ]
    assert result.returncode == 0, result.stderr
    assert problems == []


@pytest.mark.parametrize("unit", ["botkit.service", "botkit@.service"])
def test_unit_exposure_score_is_at_most_1_5(unit: str, tmp_path: Path) -> None:
    path = _installable_copy(unit, tmp_path)
    result = subprocess.run(
        [str(ANALYZE), "security", "--offline=true", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert match, result.stdout[-500:] + result.stderr
    assert float(match.group(1)) <= 1.5


def test_service_unit_is_type_notify_with_watchdog_and_restart() -> None:
    text = (UNITS / "botkit.service").read_text()
    for line in ("Type=notify", "Restart=on-failure", "StateDirectory=botkit", "User=botkit"):
        assert line in text.splitlines()
    assert re.search(r"^WatchdogSec=\d+", text, re.M)
    assert re.search(r"^EnvironmentFile=", text, re.M)


@pytest.mark.parametrize("unit", ["botkit.service", "botkit@.service"])
def test_unit_forbids_core_dumps_and_bounds_memory(unit: str) -> None:
    lines = (UNITS / unit).read_text().splitlines()
    assert "LimitCORE=0" in lines  # a core dump holds the secret
    assert "MemorySwapMax=0" in lines  # nor may the secret be swapped out
    (memory,) = [line for line in lines if line.startswith("MemoryMax=")]
    assert memory == "MemoryMax=512M"
