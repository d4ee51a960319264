"""``botkit run --once`` / ``--cycles N`` exit non-zero when a cycle (or the start-up) failed,
with one line saying why; the service (unbounded) keeps retrying. Real processes: ``botkit sim
serve`` on loopback and ``botkit run`` against it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.simserve import clean_env, sim_serve

ROOT = Path(__file__).resolve().parents[2]
KEY, SECRET, PASSPHRASE = "exit-key-0001", "exit-secret-XYZ/+=", "exit-pass-phrase"
STRATEGY = """\
strategy: exits
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: rest-one
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.98, sz: 1}
"""
WAIT_S = 60.0
"""A hang guard for each process, not a timing assertion."""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``botkit sim serve`` on a free loopback port; its URL."""
    folder = tmp_path_factory.mktemp("serve")
    env = {**clean_env(), "BOTKIT_API_KEY": KEY, "BOTKIT_API_SECRET": SECRET,
           "BOTKIT_API_PASSPHRASE": PASSPHRASE}  # fmt: skip
    with sim_serve(env, cwd=folder) as url:
        yield url


def _env(tmp_path: Path, url: str, key: str = KEY) -> dict[str, str]:
    strategies = tmp_path / "strategies"
    strategies.mkdir(exist_ok=True)
    (strategies / "exits.yaml").write_text(STRATEGY)
    (tmp_path / "botkit.toml").write_text("")
    return {
        **clean_env(),
        "BOTKIT_CONFIG": str(tmp_path / "botkit.toml"),
        "BOTKIT_EXCHANGE": "live",
        "BOTKIT_BASE_URL": url,
        "BOTKIT_API_KEY": key,
        "BOTKIT_API_SECRET": SECRET,
        "BOTKIT_API_PASSPHRASE": PASSPHRASE,
        "BOTKIT_STRATEGIES_DIR": str(strategies),
        "BOTKIT_JOURNAL": str(tmp_path / "journal.sqlite"),
        "BOTKIT_LOG_FORMAT": "json",
        "BOTKIT_REQUEST_TIMEOUT": "2",
    }


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", "run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


@pytest.fixture
def dead_port() -> Iterator[int]:
    """A loopback port bound but not listening: every connection is refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


def test_once_against_the_exchange_succeeds_with_exit_0(tmp_path: Path, served: str) -> None:
    done = _run(_env(tmp_path, served), "--once")
    assert done.returncode == 0, done.stderr
    assert "error:" not in done.stderr


def test_once_after_a_401_exits_1_with_one_line_saying_why(tmp_path: Path, served: str) -> None:
    done = _run(_env(tmp_path, served, key="wrong-key-0001"), "--once")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: botkit run --once: cycle 1: read failed: ")
    assert "401" in last


def test_cycles_n_with_every_read_failing_exits_1_and_counts_the_failed_cycles(
    tmp_path: Path, served: str
) -> None:
    env = _env(tmp_path, served, key="wrong-key-0001")
    (tmp_path / "strategies" / "exits.yaml").write_text(STRATEGY.replace("1m", "1s"))
    done = _run(env, "--cycles", "2")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: botkit run --cycles 2: 2 of 2 cycles failed; the last: cycle 2:")


def test_once_against_a_port_nothing_listens_on_exits_1_instead_of_retrying(
    tmp_path: Path, dead_port: int
) -> None:
    done = _run(_env(tmp_path, f"http://127.0.0.1:{dead_port}"), "--once")
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("error: botkit run --once: start-up failed: could not connect")
    )


def test_the_service_keeps_retrying_an_unreachable_exchange(tmp_path: Path, dead_port: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "botkit", "run"],
        cwd=ROOT,
        env=_env(tmp_path, f"http://127.0.0.1:{dead_port}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + WAIT_S
        seen = ""
        while "retrying in" not in seen and time.monotonic() < deadline:
            seen = proc.stderr.readline()
        assert "retrying in" in seen
        assert proc.poll() is None  # still running: the service retries
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=WAIT_S)
        if proc.stderr is not None:
            proc.stderr.close()
    assert code == 0


def test_once_with_a_strategy_file_that_does_not_load_exits_1_naming_it(
    tmp_path: Path, served: str
) -> None:
    env = _env(tmp_path, served)
    broken = tmp_path / "strategies" / "broken.yaml"
    broken.write_text(
        STRATEGY.replace("strategy: exits", "strategy: broken").replace("sz: 1", "sz: 10 ** 60")
    )
    done = _run(env, "--once")
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: botkit run --once: cycle 1: 1 strategy file(s) did not load (")
    assert str(broken) in last
