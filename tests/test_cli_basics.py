"""The command line's outer behaviour: help, version, usage errors."""

from __future__ import annotations

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
