"""Real processes for the time tests: ``botkit sim serve`` on loopback with a fault plan, and
``botkit run`` against it (or against the embedded simulator). Every wait is bounded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from botkit.sim.config import default_config_text
from tests.reliability.harness import write_strategy
from tests.simserve import clean_env as bare_env
from tests.simserve import sim_serve as serve

ROOT = Path(__file__).resolve().parents[2]


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def clean_env(folder: Path, **values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTKIT_", "NOTIFY_"))}
    (folder / "botkit.toml").write_text("")
    strategies = folder / "strategies"
    if not strategies.exists():
        write_strategy(strategies, rungs=2, every="2s")
    env.update(
        BOTKIT_CONFIG=str(folder / "botkit.toml"),
        BOTKIT_STRATEGIES_DIR=str(strategies),
        BOTKIT_JOURNAL=str(folder / "journal.sqlite"),
        BOTKIT_JOURNAL_SYNCHRONOUS="NORMAL",
        BOTKIT_LOG_FORMAT="text",
    )
    env.update(values)
    return env


@contextmanager
def sim_serve(folder: Path, faults: str) -> Iterator[str]:
    """``botkit sim serve --port 0`` with the built-in config plus ``faults`` (TOML); the URL."""
    config = folder / "sim.toml"
    config.write_text(default_config_text() + "\n" + faults)
    with serve(bare_env(), "--config", str(config), log=folder / "sim-serve.err") as url:
        yield url


class Run:
    """A ``botkit run`` process whose output goes to a file."""

    def __init__(self, folder: Path, env: dict[str, str], *args: str) -> None:
        self.log = folder / "run.log"
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "botkit", "run", *args],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def says(self, text: str) -> Callable[[], bool]:
        return lambda: text in self.output() or self.proc.poll() is not None

    def stop(self, timeout: float) -> int | None:
        """SIGTERM, then wait up to ``timeout``; the exit code, or None if it did not end."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
