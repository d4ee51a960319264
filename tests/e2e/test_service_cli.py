"""The real CLI as a subprocess against the simulator served on loopback, as an operator runs it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from botkit.clock import WallClock
from botkit.sim.inprocess import make_sim
from botkit.sim.server import SimServer
from tests.pipeline.simharness import static_config

ROOT = Path(__file__).resolve().parents[2]
KEY, SECRET, PASSPHRASE = "e2e-key-0001", "e2e-secret-XYZ/+=", "e2e-pass-phrase"

STRATEGY = """\
    strategy: e2e
    symbol: BTC_USDT_PERP
    every: 2s
    rules:
      - name: rest-one
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.98, sz: SIZE}
"""

pytestmark = pytest.mark.slow


@dataclass
class Live:
    url: str
    env: dict[str, str]
    strategies: Path
    journal: Path

    def write(self, size: int) -> None:
        text = textwrap.dedent(STRATEGY).replace("SIZE", str(size))
        (self.strategies / "e2e.yaml").write_text(text)

    def botkit(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "botkit", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "botkit", *args],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def sizes(self) -> list[str]:
        """Sizes of the orders the exchange accepted, as the journal holds them."""
        if not self.journal.exists():
            return []
        with sqlite3.connect(self.journal) as conn:
            try:
                rows = conn.execute(
                    "SELECT sz FROM orders WHERE dry = 0 AND outcome = 'accepted' ORDER BY id"
                ).fetchall()
            except sqlite3.OperationalError:  # the service is still creating its tables
                return []
        return [str(r[0]) for r in rows]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    config = static_config()
    from botkit.sim.config import ApiKeyConfig

    key = ApiKeyConfig(key=KEY, secret=SECRET, passphrase=PASSPHRASE)
    config = config.model_copy(update={"auth": config.auth.model_copy(update={"keys": [key]})})
    sim = make_sim(config, WallClock(), auto_step=False)
    strategies = tmp_path / "strategies"
    strategies.mkdir()
    (tmp_path / "botkit.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTKIT_")}
    with SimServer(sim.http) as server:
        env.update(
            BOTKIT_CONFIG=str(tmp_path / "botkit.toml"),
            BOTKIT_EXCHANGE="live",
            BOTKIT_BASE_URL=server.url,
            BOTKIT_API_KEY=KEY,
            BOTKIT_API_SECRET=SECRET,
            BOTKIT_API_PASSPHRASE=PASSPHRASE,
            BOTKIT_STRATEGIES_DIR=str(strategies),
            BOTKIT_JOURNAL=str(tmp_path / "journal.sqlite"),
        )
        yield Live(server.url, env, strategies, tmp_path / "journal.sqlite")


def _wait_for(predicate: object, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_run_once_places_orders_and_keeps_secrets_out_of_logs_and_journal(live: Live) -> None:
    live.write(3)
    result = live.botkit("run", "--once")
    assert result.returncode == 0, result.stderr
    assert live.sizes() == ["3"]
    lines = result.stderr.splitlines()
    assert lines
    assert all(line.startswith("{") for line in lines)  # JSON lines off a terminal
    journal_bytes = b"".join(
        p.read_bytes() for p in live.journal.parent.glob(live.journal.name + "*")
    )
    for secret in (KEY, SECRET, PASSPHRASE):
        assert secret not in result.stdout + result.stderr
        assert secret.encode() not in journal_bytes


def test_plan_prints_the_plan_and_sends_nothing(live: Live) -> None:
    live.write(2)
    result = live.botkit("plan")
    assert result.returncode == 0, result.stderr
    assert "rule rest-one: FIRED" in result.stdout
    assert "1 to send in 1 batch(es)" in result.stdout
    assert live.sizes() == []
    with sqlite3.connect(live.journal) as conn:
        assert conn.execute("SELECT sz, outcome FROM orders").fetchall() == [("2", "dry_run")]


def test_a_yaml_change_takes_effect_next_cycle_and_sigterm_exits_cleanly(live: Live) -> None:
    live.write(1)
    proc = live.start("run")
    try:
        _wait_for(lambda: live.sizes() == ["1"])
        live.write(4)
        _wait_for(lambda: "4" in live.sizes())
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "SIGTERM received" in err
    assert "Traceback" not in err
    status = live.botkit("status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.startswith("healthy: last cycle")


def test_live_without_credentials_is_a_one_line_start_up_error(live: Live) -> None:
    env = {k: v for k, v in live.env.items() if k not in {"BOTKIT_API_KEY", "BOTKIT_API_SECRET"}}
    result = subprocess.run(
        [sys.executable, "-m", "botkit", "run", "--once"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "BOTKIT_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
