"""``botkit serve``: a real process answering ``/api/health`` from the journal a ``botkit run``
wrote, behind a bearer token (401 without it), refusing to bind beyond loopback without one."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.simserve import clean_env

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "serve-token-7d1e5b9a2c4f"  # the secret looked for in every output
WAIT_S = 60.0
"""A hang guard, not a timing assertion."""
STRATEGY = """\
strategy: rest
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: rest-one
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.98, sz: 1}
"""


def _env(tmp_path: Path) -> dict[str, str]:
    strategies = tmp_path / "strategies"
    strategies.mkdir(exist_ok=True)
    (strategies / "rest.yaml").write_text(STRATEGY)
    (tmp_path / "botkit.toml").write_text("")
    return {
        **clean_env(),
        "BOTKIT_CONFIG": str(tmp_path / "botkit.toml"),
        "BOTKIT_STRATEGIES_DIR": str(strategies),
        "BOTKIT_JOURNAL": str(tmp_path / "journal.sqlite"),
        "BOTKIT_LOG_FORMAT": "json",
    }


def _botkit(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``botkit run --once`` wrote a journal; ``botkit serve`` on a free port reads it."""
    env = _env(tmp_path)
    assert _botkit(env, "run", "--once").returncode == 0
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    with subprocess.Popen(
        [sys.executable, "-m", "botkit", "serve", "--port", "0", "--token-file", str(token_file)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until it serves (or exits)
        assert line.startswith("serving the status API on http://127.0.0.1:"), line
        base = line.split(" on ", 1)[1].strip().removesuffix("/api/health")
        yield base, proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(WAIT_S)


def _get(url: str, token: str | None) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url)  # noqa: S310 - a loopback http URL the test built
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=WAIT_S) as answer:  # noqa: S310
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_health_answers_what_status_says_with_the_token(
    served: tuple[str, subprocess.Popen[str]],
) -> None:
    base, proc = served
    code, body = _get(base + "/api/health", TOKEN)
    assert code == 200
    assert body["healthy"] is True
    assert body["last_cycle"] == 1
    assert body["kill_switch"] is None
    assert body["unsettled"] == 0
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(WAIT_S) == 0
    assert proc.stderr is not None
    assert TOKEN not in proc.stderr.read()


@pytest.mark.parametrize("token", [None, "wrong-token-0000000000", TOKEN + "x"])
def test_without_the_right_token_every_endpoint_is_401(
    served: tuple[str, subprocess.Popen[str]], token: str | None
) -> None:
    base, _proc = served
    for path in ("/api/health", "/api/nothing", "/nothing"):  # "/": the page, public
        code, body = _get(base + path, token)
        assert code == 401
        assert TOKEN not in json.dumps(body)


def test_an_unknown_endpoint_is_404(served: tuple[str, subprocess.Popen[str]]) -> None:
    base, _proc = served
    assert _get(base + "/api/nothing", TOKEN)[0] == 404


def test_beyond_loopback_without_a_token_is_refused_with_one_line(tmp_path: Path) -> None:
    done = _botkit(_env(tmp_path), "serve", "--host", "0.0.0.0", "--port", "0")  # noqa: S104
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "refusing to serve on 0.0.0.0 without a token" in lines[0]


def test_an_address_this_machine_lacks_blames_the_host_and_a_taken_port_the_port(
    tmp_path: Path,
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    env = _env(tmp_path)
    # 192.0.2.1 is TEST-NET-1: documentation only, never an address of this machine
    done = _botkit(
        env, "serve", "--host", "192.0.2.1", "--port", "0", "--token-file", str(token_file)
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: --host: cannot serve on 192.0.2.1: Cannot assign requested address"
        " — give an address of this machine (127.0.0.1, the default; 0.0.0.0 for all)"
    ]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = _botkit(env, "serve", "--port", port, "--token-file", str(token_file))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: --port: cannot serve on 127.0.0.1:{port}: Address already in use"
        " — pick a free port above 1024"
    ]


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    os.chmod(token_file, 0o644)
    done = _botkit(_env(tmp_path), "serve", "--port", "0", "--token-file", str(token_file))
    assert done.returncode != 0
    assert "readable by other users" in done.stderr
    assert TOKEN not in done.stderr
