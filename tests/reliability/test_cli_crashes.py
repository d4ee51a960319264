"""Command lines the hostile-input pass found ending in a traceback (or never ending): each
is now one line on stderr and an exit code, and every run is bounded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("clean_env")


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("port", ["99999", "-5", "65536", "http"])
def test_an_impossible_metrics_port_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], port: str
) -> None:
    assert main(["run", "--once", "--metrics-port", port]) == 2
    assert "--metrics-port" in _one_line_error(capsys)


def test_an_impossible_simulator_port_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "serve", "--port", "99999"]) == 2  # it listened on 99999 % 65536
    assert "--port" in _one_line_error(capsys)


def test_a_metrics_port_in_use_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["run", "--once", "--metrics-port", str(port)]) == 2
    assert f"127.0.0.1:{port}" in _one_line_error(capsys)


@pytest.mark.parametrize(
    "before", ["99999999999999d", "99999999999999999999999", "²", "-5d", "1e5d"]
)
def test_an_out_of_range_or_odd_time_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, before: str
) -> None:
    from botkit.journal import Journal

    Journal(tmp_path / "j.sqlite", clock=lambda: 0).close()
    code = main(["journal", "prune", "--journal", str(tmp_path / "j.sqlite"), "--before", before])
    assert code == 2
    assert "--before" in _one_line_error(capsys)


@pytest.mark.parametrize("where", ["/proc/no/such/dir/journal.sqlite", "/dev/null/journal"])
def test_a_journal_that_cannot_be_created_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], where: str
) -> None:
    assert main(["run", "--once", "--journal", where]) == 1
    assert "journal" in _one_line_error(capsys)


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--once"], ["--cycles", "2"]])
def test_run_once_without_any_strategy_ends(tmp_path: Path, args: list[str]) -> None:
    """It waited forever for a cycle that could never come."""
    (tmp_path / "strategies").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTKIT_")}
    env.update(
        BOTKIT_STRATEGIES_DIR=str(tmp_path / "strategies"),
        BOTKIT_JOURNAL=str(tmp_path / "journal.sqlite"),
        BOTKIT_CONFIG=str(tmp_path / "none.toml"),
    )
    (tmp_path / "none.toml").write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "botkit", "run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr[-500:]
    assert "no strategy" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unexpected_exception_is_one_line_with_secrets_redacted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last line of defence: a bug anywhere must not print a traceback or a secret."""
    import botkit.cli.run_cmd

    secret = "crash-path-secret-9431"
    monkeypatch.setenv("BOTKIT_API_SECRET", secret)

    def broken(_args: object) -> int:
        raise RuntimeError(f"boom\nwith {secret} inside")

    monkeypatch.setattr(botkit.cli.run_cmd, "_status", broken)
    assert main(["status"]) == 1
    err = _one_line_error(capsys)
    assert "internal error (RuntimeError: boom with *** inside)" in err
    assert secret not in err


@pytest.mark.parametrize("name", ["\n", "a\rb", "x\x1b[31mred"])
def test_a_file_name_with_control_characters_stays_on_one_line(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Found by the command-line fuzz pass: ``botkit data check $'\\n'`` printed two lines."""
    assert main(["data", "check", name]) == 2
    err = _one_line_error(capsys)
    assert "\x1b" not in err
    assert "\r" not in err


@pytest.mark.parametrize("argv", [["exchange", "balance", "\n"], ["demo", "x\ry"]])
def test_an_unrecognized_argument_with_control_characters_is_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """Found by the command-line fuzz pass: argparse echoed the newline."""
    assert main(argv) == 2
    _one_line_error(capsys)
