"""Helpers of the ``botkit serve`` tests: a folder where ``botkit run`` trades on the embedded
simulator (paper), a ``botkit serve`` process reading it, and HTTP over loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.simserve import clean_env

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0
"""A hang guard, not a timing assertion."""
TOKEN = "serve-token-7d1e5b9a2c4f"
"""alice's token."""
BOB = "bob-token-5c0f9e7d3a21b8"
SECRETS = {
    "BOTKIT_API_KEY": "api-key-sekrit-4f1a9c",
    "BOTKIT_API_SECRET": "api-secret-sekrit-8e2b7d",
    "BOTKIT_API_PASSPHRASE": "api-pass-sekrit-3c6a1f",
}
EVERY_TEXT = (TOKEN, BOB, *SECRETS.values())
"""What no answer, header or log line may hold."""
BTC = "BTC_USDT_PERP"
REST = """\
strategy: rest
symbol: BTC_USDT_PERP
every: 1s
rules:
  - name: rest-one
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.98, sz: 1}
"""
TAKER = """\
strategy: taker
symbol: BTC_USDT_PERP
every: 1s
rules:
  - name: buy
    when: price.mark > 0
    place:
      order: {side: BUY, type: MARKET, sz: 1}
"""


def service_env(folder: Path, *, taker: bool = False) -> dict[str, str]:
    """The environment of a paper service in ``folder`` (journal, strategies, stop-control
    files, credentials that must never show)."""
    strategies = folder / "strategies"
    strategies.mkdir(exist_ok=True)
    (strategies / "rest.yaml").write_text(REST)
    if taker:
        (strategies / "taker.yaml").write_text(TAKER)
    (folder / "botkit.toml").write_text("")
    return {
        **clean_env(),
        **SECRETS,
        "BOTKIT_CONFIG": str(folder / "botkit.toml"),
        "BOTKIT_STRATEGIES_DIR": str(strategies),
        "BOTKIT_JOURNAL": str(folder / "journal.sqlite"),
        "BOTKIT_KILL_SWITCH_FILE": str(folder / "STOP"),
        "BOTKIT_HALT_FILE": str(folder / "HALT"),
        "BOTKIT_LOG_FORMAT": "json",
    }


def botkit(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S * 2,
        check=False,
    )


@dataclass
class Served:
    base: str
    proc: subprocess.Popen[str]
    log: Path

    def url(self, path: str) -> str:
        return self.base + path


@contextmanager
def serving(env: dict[str, str], folder: Path, *args: str, tokens: bool = True) -> Iterator[Served]:
    """``botkit serve --port 0 [--token-file F] ARGS`` on ``folder``'s journal (its stderr in a
    file, read by the tests that look for secrets)."""
    extra: list[str] = []
    if tokens:
        token_file = folder / "tokens"
        token_file.write_text(f"# who may use the API\nalice:{TOKEN}\nbob:{BOB}\n")
        os.chmod(token_file, 0o600)
        extra = ["--token-file", str(token_file)]
    log = folder / "serve.err"
    with (
        log.open("w") as stderr,
        subprocess.Popen(
            [sys.executable, "-m", "botkit", "serve", "--port", "0", *extra, *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        ) as proc,
    ):
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until it serves (or exits)
        assert line.startswith("serving the status API on http://127.0.0.1:"), (
            line + log.read_text()
        )
        base = line.split(" on ", 1)[1].strip().removesuffix("/api/health")
        try:
            yield Served(base, proc, log)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(WAIT_S)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any
    raw: bytes


def call(
    url: str,
    *,
    method: str = "GET",
    token: str | None = TOKEN,
    body: Any = None,
    headers: dict[str, str] | None = None,
    csrf: bool = True,
) -> Answer:
    """One request; a control request (POST) carries the CSRF header and a JSON body unless
    told otherwise."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)  # noqa: S310 - loopback
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    if method == "POST":
        request.add_header("Content-Type", "application/json")
        if csrf:
            request.add_header("X-Botkit-Csrf", "1")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=WAIT_S) as answer:  # noqa: S310
            raw = answer.read()
            status, got = answer.status, dict(answer.headers.items())
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        status, got = exc.code, dict(exc.headers.items())
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    return Answer(status, got, parsed, raw)
