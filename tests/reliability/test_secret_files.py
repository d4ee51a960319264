"""Secrets at rest: a file that holds a credential must not be readable by every user, and live
trading never sends credentials over plain HTTP to another machine.

* ``.env`` or the settings TOML holding an ``api_*`` value with any permission for "other"
  users → a one-line :class:`SettingsError` naming the file, its mode and the ``chmod``;
* ``BOTKIT_CREDENTIALS_FILE`` (``KEY=value`` lines, mode 600 or 640) fills the credentials not
  set otherwise, and is refused the same way when exposed, missing, or holding other keys;
* ``exchange=live`` with an ``http://`` address is refused unless the host is loopback.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from botkit.cli import main
from botkit.errors import SettingsError
from botkit.settings import load_settings

SECRET = "s3cr3t-at-rest-0042"
LIVE = {"BOTKIT_EXCHANGE": "live", "BOTKIT_BASE_URL": "https://x.test"}

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX"),
    pytest.mark.usefixtures("clean_env"),
]


def _file(path: Path, text: str, mode: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o602, 0o666])
def test_a_dotenv_holding_a_secret_and_open_to_others_is_refused(tmp_path: Path, mode: int) -> None:
    _file(tmp_path / ".env", f"BOTKIT_API_SECRET={SECRET}\n", mode)
    with pytest.raises(SettingsError) as info:
        load_settings()
    text = str(info.value)
    assert text.startswith(".env: ")
    assert f"mode {mode:04o}" in text
    assert "chmod 600 .env" in text
    assert SECRET not in text
    assert "\n" not in text


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o400])
def test_a_private_dotenv_with_secrets_is_read(tmp_path: Path, mode: int) -> None:
    _file(tmp_path / ".env", f"BOTKIT_API_SECRET={SECRET}\n", mode)
    settings = load_settings()
    assert settings.api_secret is not None
    assert settings.api_secret.get_secret_value() == SECRET


def test_a_world_readable_dotenv_without_secrets_is_fine(tmp_path: Path) -> None:
    _file(tmp_path / ".env", "BOTKIT_DRY_RUN=true\nBOTKIT_API_KEY=\n", 0o644)
    assert load_settings().dry_run is True


def test_a_settings_file_holding_a_secret_and_open_to_others_is_refused(tmp_path: Path) -> None:
    path = _file(tmp_path / "botkit.toml", f'api_passphrase = "{SECRET}"\n', 0o644)
    with pytest.raises(SettingsError, match=r"botkit\.toml: .*readable by other users") as info:
        load_settings(config=path)
    assert SECRET not in str(info.value)
    path.chmod(0o600)
    assert load_settings(config=path).api_passphrase is not None


def test_the_credentials_file_fills_the_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds = _file(
        tmp_path / "creds",
        f"# botkit credentials\nBOTKIT_API_KEY=k-1\nBOTKIT_API_SECRET={SECRET}\n",
        0o640,
    )
    monkeypatch.setenv("BOTKIT_CREDENTIALS_FILE", str(creds))
    for name, value in LIVE.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "k-1"
    assert settings.api_secret is not None
    assert settings.api_secret.get_secret_value() == SECRET
    assert SECRET not in repr(settings)
    monkeypatch.setenv("BOTKIT_API_KEY", "from-env")  # the environment still wins
    assert load_settings().api_key.get_secret_value() == "from-env"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "mode", "message"),
    [
        (f"BOTKIT_API_SECRET={SECRET}\n", 0o644, "readable by other users (mode 0644)"),
        ("BOTKIT_API_SECRET=x\nBOTKIT_DRY_RUN=true\n", 0o600, "only BOTKIT_API_KEY"),
        ("no equals sign\n", 0o600, "creds:1: not a NAME=value line"),
    ],
    ids=["world-readable", "other-keys", "garbled"],
)
def test_a_bad_credentials_file_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, mode: int, message: str
) -> None:
    creds = _file(tmp_path / "creds", text, mode)
    monkeypatch.setenv("BOTKIT_CREDENTIALS_FILE", str(creds))
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert message in str(info.value)
    assert str(creds) in str(info.value)
    assert SECRET not in str(info.value)


def test_a_missing_credentials_file_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOTKIT_CREDENTIALS_FILE", str(tmp_path / "nope"))
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "credentials file not found" in err


@pytest.mark.parametrize(
    "url", ["http://api.example.com", "http://10.0.0.7:8080", "http://[2001:db8::1]"]
)
def test_live_over_plain_http_to_another_host_is_refused(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    for name, value in {"BOTKIT_EXCHANGE": "live", "BOTKIT_BASE_URL": url}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BOTKIT_API_KEY", "k")
    monkeypatch.setenv("BOTKIT_API_SECRET", SECRET)
    with pytest.raises(SettingsError, match="https://"):
        load_settings()


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9", "https://x.test"]
)
def test_live_over_loopback_or_https_is_allowed(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    for name, value in {"BOTKIT_EXCHANGE": "live", "BOTKIT_BASE_URL": url}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BOTKIT_API_KEY", "k")
    monkeypatch.setenv("BOTKIT_API_SECRET", SECRET)
    assert load_settings().base_url == url
