"""``botkit sim serve`` and ``botkit sim config`` as an operator runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_sim_config_prints_the_effective_config_with_secrets_masked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BOTKIT_API_KEY", raising=False)
    monkeypatch.delenv("BOTKIT_API_SECRET", raising=False)
    code = main(["sim", "config", "--key", "op-key", "--secret", "op-secret", "--schemes", "v3"])
    assert code == 0
    out = capsys.readouterr().out
    shown = json.loads(out)
    assert shown["auth"]["keys"][0]["key"] == "op-…"  # masked as `sim serve` shows it
    assert shown["auth"]["schemes"] == ["v3"]
    assert "op-key" not in out
    assert "op-secret" not in out
    assert "sim-passphrase" not in out


def test_sim_config_never_prints_the_operators_api_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key comes from BOTKIT_API_KEY, a setting documented as a secret never printed."""
    monkeypatch.setenv("BOTKIT_API_KEY", "SEKRETKEY123")
    monkeypatch.setenv("BOTKIT_API_SECRET", "SEKRETSECRET456")
    monkeypatch.setenv("BOTKIT_API_PASSPHRASE", "SEKRETPASS789")
    assert main(["sim", "config"]) == 0
    out = capsys.readouterr().out
    assert "SEKRET" not in out.replace("SEK…", "")
    assert json.loads(out)["auth"]["keys"][0]["key"] == "SEK…"


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--key", "k"], "an API secret is missing"),
        (["--schemes", "hmac"], "--schemes: unknown scheme hmac"),
        (["--tolerance-ms", "0"], "--tolerance-ms must be a positive"),
        (["--config", "no/such.toml"], "no/such.toml: simulator config file not found"),
    ],
)
def test_sim_config_mistakes_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    assert main(["sim", "config", *argv]) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert "Traceback" not in err
    assert err.count("\n") == 1


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sim_serve_answers_and_stops_cleanly_on_a_signal(
    tmp_path: Path, stop: signal.Signals
) -> None:
    env = {
        **os.environ,
        "BOTKIT_API_KEY": "env-key",
        "BOTKIT_API_SECRET": "env-secret",
        "BOTKIT_CONFIG": str(tmp_path / "none.toml"),
    }
    (tmp_path / "none.toml").write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-m", "botkit", "sim", "serve", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in first, first
        keys_line = proc.stdout.readline()
        assert "env…" in keys_line
        assert "env-secret" not in keys_line
        url = first.rsplit(" ", 1)[1].strip()
        assert isinstance(httpx.get(f"{url}/timestamp", timeout=5).json()["serverTime"], int)
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "stopped after 1 requests" in out
    assert "Traceback" not in err


def test_sim_serve_on_a_busy_port_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert main(["sim", "serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert "choose another --port" in err
    assert "Traceback" not in err


def test_a_bad_fault_in_the_config_file_is_reported_with_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from botkit.sim.config import default_config_text

    path = tmp_path / "sim.toml"
    path.write_text(default_config_text() + '\n[[faults]]\nkind = "rate_limit"\nevery = 0\n')
    assert main(["sim", "config", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: faults[0].every:")
    assert err.count("\n") == 1
