"""``make`` finds a Python 3.11+ under any of its usual names, ``python3`` alone included, and
says in one line what to do when there is none."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")

pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def _make(tmp_path: Path, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``make ARGS`` in a copy of the project's Makefile, with only ``path`` on the PATH."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "Makefile", work)
    (work / "pyproject.toml").write_text("")
    assert MAKE is not None
    return subprocess.run(
        [MAKE, *args],
        cwd=work,
        env={"PATH": str(path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_python3_alone_is_used_when_it_is_3_11_or_newer(tmp_path: Path) -> None:
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").symlink_to(Path(sys.executable).resolve())  # this test runs on 3.11+
    done = _make(tmp_path, shims, "-n", "install")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "python3 -m venv .venv"


def test_the_first_new_enough_candidate_wins_over_an_old_python3(tmp_path: Path) -> None:
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").write_text("#!/bin/sh\nexit 1\n")  # an old Python: the check fails
    (shims / "python3").chmod(0o755)
    (shims / "python3.12").symlink_to(Path(sys.executable).resolve())
    done = _make(tmp_path, shims, "-n", "install")
    assert done.stdout.splitlines()[0] == "python3.12 -m venv .venv"


def test_no_new_enough_python_is_one_clear_line(tmp_path: Path) -> None:
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").write_text("#!/bin/sh\nexit 1\n")
    (shims / "python3").chmod(0o755)
    done = _make(tmp_path, shims, "install")
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert re.fullmatch(
        r"Makefile:\d+: \*\*\* botkit needs Python 3\.11 or newer, and none of python3\.13 "
        r"python3\.12 python3\.11 python3 on the PATH is: install one, or name it: make "
        r"PYTHON=/path/to/python3\.11\.  Stop\.",
        line,
    ), line


def test_the_readme_says_how_to_reach_the_botkit_command() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "`.venv/bin/botkit`" in readme
    assert "`source .venv/bin/activate`" in readme
