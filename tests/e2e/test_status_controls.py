"""``botkit status`` as a monitoring check runs it (a real process): it says when the halt or the
kill switch is engaged, on its first line, and exits 1."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from botkit.journal import Journal

ROOT = Path(__file__).resolve().parents[2]


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _status(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    journal = tmp_path / "journal.sqlite"
    if not journal.exists():
        with Journal(journal, clock=_wall_ms) as j:  # a recent, successful cycle
            j.end_cycle(j.begin_cycle(dry=False, clock_offset_ms=None))
    (tmp_path / "botkit.toml").write_text("")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BOTKIT_")}
    clean.update(BOTKIT_CONFIG=str(tmp_path / "botkit.toml"), BOTKIT_JOURNAL=str(journal), **env)
    return subprocess.run(
        [sys.executable, "-m", "botkit", "status"],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_status_is_healthy_and_says_both_controls_are_off(tmp_path: Path) -> None:
    result = _status(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("healthy: last cycle")
    assert "controls: halt off, kill switch off" in result.stdout


@pytest.mark.parametrize(
    ("env", "first", "line"),
    [
        ({"BOTKIT_KILL_SWITCH": "true"}, "KILL SWITCH ENGAGED", "kill switch: ENGAGED"),
        ({"BOTKIT_KILL_SWITCH_FILE": "STOP"}, "KILL SWITCH ENGAGED", "kill switch file STOP"),
        ({"BOTKIT_HALT": "true"}, "HALTED", "halt: ENGAGED — halt engaged by setting"),
        ({"BOTKIT_HALT_FILE": "HALT"}, "HALTED", "halt file HALT exists"),
    ],
    ids=["kill-setting", "kill-file", "halt-setting", "halt-file"],
)
def test_status_says_the_control_is_engaged_first_and_exits_1(
    tmp_path: Path, env: dict[str, str], first: str, line: str
) -> None:
    for name in ("STOP", "HALT"):
        (tmp_path / name).touch()
    result = _status(tmp_path, **env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].startswith(first)
    assert line in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "what"),
    [
        ("BOTKIT_HALT_FILE", "{tmp}/no-such-folder/HALT", "no-such-folder does not exist"),
        ("BOTKIT_KILL_SWITCH_FILE", "{tmp}/no-such-folder/STOP", "no-such-folder does not exist"),
        ("BOTKIT_HALT_FILE", "{tmp}", "is a folder"),
        ("BOTKIT_KILL_SWITCH_FILE", "{tmp}", "is a folder"),
    ],
    ids=["halt-missing-folder", "kill-missing-folder", "halt-folder", "kill-folder"],
)
def test_a_switch_file_that_can_never_be_touched_stops_start_up_in_one_line(
    tmp_path: Path, name: str, value: str, what: str
) -> None:
    """A switch file in a folder that does not exist can never be created (``touch`` fails), and
    one naming a folder can never be removed: either would leave the operator a control that does
    not work. Refused when the settings are read, naming the variable."""
    result = _status(tmp_path, **{name: value.format(tmp=tmp_path)})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {name}: ")
    assert what in lines[0]


@pytest.mark.parametrize("name", ["BOTKIT_HALT_FILE", "BOTKIT_KILL_SWITCH_FILE"])
def test_an_empty_switch_file_setting_means_not_set(tmp_path: Path, name: str) -> None:
    """``BOTKIT_HALT_FILE=`` (an emptied line in .env or an EnvironmentFile) is no switch file,
    not the working directory (which exists, so the control was engaged with the advice to
    remove '.')."""
    result = _status(tmp_path, **{name: ""})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "controls: halt off, kill switch off" in result.stdout
