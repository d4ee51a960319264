"""The command line's outer behaviour: help, version, usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.cli import main


def test_version_prints_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("botkit ")


def test_unknown_command_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: botkit: argument COMMAND: invalid choice")
    assert "Traceback" not in err


def test_plan_with_a_missing_strategies_path_is_one_usage_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path / "journal.sqlite"))
    missing = tmp_path / "nowhere"
    assert main(["plan", "--strategies", str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"error: botkit plan: {missing}: no such file or directory — name a strategy file or a"
        " folder of *.yaml files (--strategies, or strategies_dir in the settings)"
    ]
    assert captured.out == ""
    assert not (tmp_path / "journal.sqlite").exists()  # nothing was opened
