"""``botkit sim serve`` as a real process for tests: started on a free loopback port, its URL
read from its first line, stopped (SIGTERM, then SIGKILL) on the way out."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ROOT", "clean_env", "sim_serve"]

ROOT = Path(__file__).resolve().parents[1]


def clean_env() -> dict[str, str]:
    """The environment without any botkit setting (nor the systemd notify socket)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("BOTKIT_", "NOTIFY_"))}


@contextmanager
def sim_serve(
    env: Mapping[str, str], *args: str, cwd: Path = ROOT, log: Path | None = None
) -> Iterator[str]:
    """``botkit sim serve --port 0 ARGS...``; yields its URL. Its stderr goes to ``log`` (a
    file, read back when it fails to start) so a chatty server never blocks on a full pipe."""
    err = log if log is not None else cwd / "sim-serve.err"
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "botkit", "sim", "serve", "--port", "0", *args],
            cwd=cwd,
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in first, first + err.read_text()
        yield first.split("listening on ", 1)[1].split()[0]
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
