"""Paths in the settings that the operating system refuses outright (a name too long, a
component that is a file): found by the settings fuzz pass raising a bare OSError."""

from __future__ import annotations

import pytest

from botkit.cli import main
from botkit.errors import SettingsError
from botkit.settings import load_settings

LONG = "9" * 400  # longer than NAME_MAX (255)

pytestmark = pytest.mark.usefixtures("clean_env")


@pytest.mark.parametrize("variable", ["BOTKIT_CREDENTIALS_FILE", "BOTKIT_CONFIG"])
@pytest.mark.parametrize("value", [LONG, "/dev/null/x"], ids=["too-long", "under-a-file"])
def test_an_impossible_path_is_a_one_line_settings_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError):
        load_settings()
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_an_impossible_env_file_path_is_a_one_line_settings_error() -> None:
    with pytest.raises(SettingsError):
        load_settings(env_file=LONG)


def test_a_kill_switch_file_that_cannot_be_checked_stops_new_orders() -> None:
    """Fail safe: the check raised OSError (inside the cycle: the service's crash path)."""
    from botkit.pipeline import GuardSettings, RiskLimits
    from botkit.runner.killswitch import kill_switch_reason

    reason = kill_switch_reason(GuardSettings(limits=RiskLimits(), kill_switch_file=LONG))
    assert reason is not None
    assert "cannot be checked" in reason
