"""A name that is not a setting stops start-up with a did-you-mean: a misspelt ``BOTKIT_DRYRUN``
must never be ignored while real orders go out. Through the real command line, as a process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from botkit.settings import NOT_SETTINGS, setting_variables

ROOT = Path(__file__).resolve().parents[1]


def _botkit(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("BOTKIT_")}
    clean["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=folder,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("BOTKIT_DRYRUN", "BOTKIT_DRY_RUN"),
        ("BOTKIT_KILLSWITCH", "BOTKIT_KILL_SWITCH"),
        ("botkit_journl", "BOTKIT_JOURNAL"),
        ("BOTKIT_API_SECRETS", "BOTKIT_API_SECRET"),
    ],
)
def test_a_misspelt_environment_variable_stops_start_up(
    tmp_path: Path, name: str, suggestion: str
) -> None:
    done = _botkit(tmp_path, "run", "--once", env={name: "true"})
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"error: {name}: not a botkit setting — did you mean {suggestion}? (or unset {name})\n"
    )


def test_a_prefixed_variable_like_no_setting_says_where_the_list_is(tmp_path: Path) -> None:
    done = _botkit(tmp_path, "exchange", "settings", env={"BOTKIT_FOO": "1"})
    assert done.returncode == 2
    assert done.stderr == (
        "error: BOTKIT_FOO: not a botkit setting — settings are listed in "
        "docs/configuration.md (or unset BOTKIT_FOO)\n"
    )


@pytest.mark.parametrize(
    ("line", "shown", "suggestion"),
    [
        ("BOTKIT_DRYRUN=true", "BOTKIT_DRYRUN", "did you mean BOTKIT_DRY_RUN?"),
        ("DRY_RUN=true", "DRY_RUN", "did you mean BOTKIT_DRY_RUN?"),
        ("export BOTKIT_EXCHANG=sim", "BOTKIT_EXCHANG", "did you mean BOTKIT_EXCHANGE?"),
    ],
)
def test_a_dotenv_key_that_is_not_a_setting_is_located(
    tmp_path: Path, line: str, shown: str, suggestion: str
) -> None:
    (tmp_path / ".env").write_text(f"# settings\nBOTKIT_EXCHANGE=sim\n{line}\n")
    done = _botkit(tmp_path, "exchange", "settings")
    assert done.returncode == 2
    assert done.stderr == (
        f"error: .env:3: '{shown}' is not a botkit setting — {suggestion} (or delete the line)\n"
    )


def test_a_misspelt_toml_key_is_located(tmp_path: Path) -> None:
    (tmp_path / "botkit.toml").write_text('exchange = "sim"\ndryrun = true\n')
    done = _botkit(tmp_path, "exchange", "settings", env={"BOTKIT_CONFIG": "botkit.toml"})
    assert done.returncode == 2
    assert done.stderr == (
        "error: botkit.toml:2: unknown setting 'dryrun' — did you mean 'dry_run'?\n"
    )


def test_botkit_config_in_dotenv_names_the_settings_file(tmp_path: Path) -> None:
    """Allowed beside the settings, and read (it was silently ignored in .env before)."""
    (tmp_path / "mine.toml").write_text("dry_run = true\n")
    (tmp_path / ".env").write_text("BOTKIT_CONFIG=mine.toml\n")
    done = _botkit(tmp_path, "exchange", "settings")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^dry_run\s+true$", done.stdout, re.MULTILINE)


def test_the_variables_the_units_docs_and_examples_use_are_all_allowed() -> None:
    """systemd units, the example .env and the docs name only settings and NOT_SETTINGS."""
    known = setting_variables()
    assert set(NOT_SETTINGS) <= known
    texts = [
        *(ROOT / "systemd").glob("*.service"),
        ROOT / "configs" / "botkit.example.env",
        ROOT / "docs" / "configuration.md",
    ]
    used = {
        name
        for path in texts
        for name in re.findall(r"\bBOTKIT_[A-Z0-9_]*[A-Z0-9]\b", path.read_text())
        if not name.startswith(("BOTKIT_TABLE__", "BOTKIT_API_"))  # the docs' patterns
        or name in {"BOTKIT_API_KEY", "BOTKIT_API_SECRET", "BOTKIT_API_PASSPHRASE"}
    }
    misspelt = {"BOTKIT_DRYRUN"}  # the docs show it as the example of a refused name
    assert used - misspelt <= known, sorted(used - misspelt - known)
