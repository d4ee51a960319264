"""Settings: precedence env > .env > TOML > defaults, located errors, secrets never shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from botkit.cli import main
from botkit.errors import SettingsError
from botkit.settings import SIM_DEFAULT_KEY, Settings, check_live, load_settings

SECRET = "s3cr3t-value-never-shown"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No BOTKIT_* variables from the machine; run in an empty folder."""
    for name in list(os.environ):
        if name.upper().startswith("BOTKIT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_file() -> None:
    s = load_settings()
    assert (s.exchange, s.signing, s.dry_run, s.base_url) == ("sim", "v3", False, None)
    assert (s.strategies_dir, s.journal) == (Path("strategies"), Path("var/journal.sqlite"))
    assert (s.request_timeout, s.clock_resync_interval, s.recv_window) == (10.0, 300.0, None)
    assert s.sim_config == Path("configs/sim.toml")


def test_env_beats_dotenv_beats_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _write(
        tmp_path / "configs/botkit.toml",
        'request_timeout = 3\nsigning = "pf"\njournal = "from-toml.sqlite"\n',
    )
    _write(tmp_path / ".env", "BOTKIT_REQUEST_TIMEOUT=4\nBOTKIT_SIGNING=v3\n")
    monkeypatch.setenv("BOTKIT_REQUEST_TIMEOUT", "5")
    s = load_settings()
    assert s.request_timeout == 5.0  # env
    assert s.signing == "v3"  # .env over TOML
    assert s.journal == Path("from-toml.sqlite")  # TOML over default
    assert load_settings(request_timeout=6).request_timeout == 6.0  # explicit override wins


def test_config_path_from_botkit_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _write(tmp_path / "elsewhere.toml", "dry_run = true\n")
    monkeypatch.setenv("BOTKIT_CONFIG", str(tmp_path / "elsewhere.toml"))
    assert load_settings().dry_run is True
    assert load_settings(config=_write(tmp_path / "b.toml", "dry_run = false\n")).dry_run is False


def test_named_config_file_that_is_missing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTKIT_CONFIG", "nope.toml")
    with pytest.raises(SettingsError, match=r"^nope\.toml: settings file not found"):
        load_settings()


def test_toml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.toml", 'exchange = "sim"\nsigning = v3\n')
    with pytest.raises(SettingsError, match=r"bad\.toml:2:\d+: not valid TOML"):
        load_settings(config=path)


def test_a_lone_carriage_return_is_a_located_toml_error(tmp_path: Path) -> None:
    # read without newline translation, as the settings source reads it again
    path = tmp_path / "cr.toml"
    path.write_bytes(b'exchange = "sim"\r')
    path.chmod(0o600)
    with pytest.raises(SettingsError, match=r"cr\.toml:1:\d+: not valid TOML"):
        load_settings(config=path, env_file=None)


def test_unknown_toml_key_is_located_with_a_suggestion(tmp_path: Path) -> None:
    path = _write(tmp_path / "typo.toml", '# comment\n\nexchnage = "live"\n')
    with pytest.raises(SettingsError) as info:
        load_settings(config=path)
    assert str(info.value) == (f"{path}:3: unknown setting 'exchnage' — did you mean 'exchange'?")


def test_invalid_value_in_toml_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.toml", 'dry_run = false\nexchange = "paper"\n')
    with pytest.raises(SettingsError) as info:
        load_settings(config=path)
    text = str(info.value)
    assert text.startswith(f"{path}:2: exchange: Input should be 'sim' or 'live' (got 'paper')")
    assert "\n" not in text


def test_invalid_value_in_env_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTKIT_REQUEST_TIMEOUT", "-2")
    with pytest.raises(SettingsError, match=r"^BOTKIT_REQUEST_TIMEOUT: request_timeout: "):
        load_settings()


def test_invalid_value_in_dotenv_names_the_file_line(tmp_path: Path) -> None:
    _write(tmp_path / ".env", "# settings\nBOTKIT_DRY_RUN=maybe\n")
    with pytest.raises(SettingsError, match=r"^\.env:2: dry_run: "):
        load_settings()


def test_bad_base_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTKIT_BASE_URL", "ftp://x")
    with pytest.raises(SettingsError, match="must start with http:// or https://"):
        load_settings()


def test_words_are_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTKIT_EXCHANGE", "SIM")
    monkeypatch.setenv("BOTKIT_SIGNING", "PF")
    assert (load_settings().exchange, load_settings().signing) == ("sim", "pf")


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({}, "BOTKIT_BASE_URL"),
        ({"BOTKIT_BASE_URL": "https://x.test"}, "missing: BOTKIT_API_KEY, BOTKIT_API_SECRET"),
        (
            {"BOTKIT_BASE_URL": "https://x.test", "BOTKIT_API_KEY": "k", "BOTKIT_API_SECRET": " "},
            "missing: BOTKIT_API_SECRET",
        ),
        (
            {
                "BOTKIT_BASE_URL": "https://x.test",
                "BOTKIT_API_KEY": "k",
                "BOTKIT_API_SECRET": "s",
                "BOTKIT_SIGNING": "pf",
            },
            "missing: BOTKIT_API_PASSPHRASE",
        ),
    ],
)
def test_live_without_what_it_needs_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], missing: str
) -> None:
    monkeypatch.setenv("BOTKIT_EXCHANGE", "live")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=missing):
        load_settings()


def test_live_with_credentials_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "BOTKIT_EXCHANGE": "live",
        "BOTKIT_BASE_URL": "https://x.test/",
        "BOTKIT_API_KEY": "k",
        "BOTKIT_API_SECRET": SECRET,
    }.items():
        monkeypatch.setenv(name, value)
    s = load_settings()
    assert s.base_url == "https://x.test"
    assert s.credentials().secret.get_secret_value() == SECRET
    check_live(s)


def test_secrets_never_in_repr_str_describe_or_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTKIT_API_SECRET", SECRET)
    monkeypatch.setenv("BOTKIT_API_PASSPHRASE", SECRET + "-p")
    monkeypatch.setenv("BOTKIT_API_KEY", SECRET + "-k")
    s = load_settings()
    shown = " ".join(
        [repr(s), str(s), str(s.describe()), s.model_dump_json(), repr(s.credentials())]
    )
    assert SECRET not in shown
    assert s.describe()["api_secret"] == "********"
    assert s.describe()["base_url"] == "(not set)"


def test_sim_mode_uses_the_simulator_default_credentials() -> None:
    creds = Settings(exchange="sim").credentials()
    assert creds.key == SIM_DEFAULT_KEY
    assert creds.secret.get_secret_value() == "sim-secret"
    assert creds.passphrase.get_secret_value() == "sim-passphrase"


def test_cli_reports_a_settings_problem_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOTKIT_EXCHANGE", "live")
    monkeypatch.setenv("BOTKIT_BASE_URL", "https://x.test")
    assert main(["exchange", "time"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: BOTKIT_API_KEY: exchange=live (signing=v3) needs credentials")
    assert err.count("\n") == 1
    assert "Traceback" not in err
