"""``botkit backtest --sweep ... --cluster``: the variants on real Dask clusters on loopback
(scheduler and workers as separate processes) print the table of the local run, also when a
worker dies in the middle of a variant; the cluster's problems are one line and exit 2."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from botkit.cli import main
from tests.cluster.conftest import START_TIMEOUT, Cluster, add_worker, wait_for_workers

ROOT = Path(__file__).resolve().parents[2]
BOTKIT = Path(sys.executable).with_name("botkit")
SWEEP = [
    "backtest", "--data", str(ROOT / "data" / "btc-synth-7d.csv"),
    "--strategies", str(ROOT / "strategies" / "btc-dip-ladder.yaml"),
    str(ROOT / "strategies" / "btc-exits.yaml"),
    "--end", "2024-01-01T08:00:00Z",
    "--sweep", "dip=0.003,0.006", "--sweep", "btc-exits.take=0.05,0.08",
]  # fmt: skip
RUN_TIMEOUT = 180


def botkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BOTKIT), *args], capture_output=True, text=True, timeout=RUN_TIMEOUT,
        env={**os.environ, **(env or {})}, cwd=ROOT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def local_table() -> str:
    """The sweep's table run in the command's own process (``--jobs 1``)."""
    done = botkit(*SWEEP, "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 6  # the heading, the header and the four variants
    return done.stdout


def test_a_sweep_on_a_local_cluster_of_worker_processes_prints_the_local_table(
    local_table: str,
) -> None:
    done = botkit(*SWEEP, "--cluster", "local:2")
    assert done.returncode == 0, done.stderr
    assert done.stdout == local_table
    assert "sweep: 4 variants on local:2 (2 worker(s))" in done.stderr
    assert "sweep: 4/4 done · 0 running · 0 failed" in done.stderr


def test_a_worker_killed_mid_variant_has_its_variant_run_elsewhere_and_the_table_unchanged(
    dask_cluster: Cluster, local_table: str, tmp_path: Path
) -> None:
    signal_file = tmp_path / "victim.started"
    victim = add_worker(
        dask_cluster, "victim", env={"BOTKIT_TEST_VICTIM_SIGNAL": str(signal_file)},
        preload=Path(__file__).with_name("victim_preload.py"),
    )  # fmt: skip
    wait_for_workers(dask_cluster, 1)  # alone at first: it is sure to be given a variant

    sweep = subprocess.Popen(
        [str(BOTKIT), *SWEEP, "--cluster", dask_cluster.address],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not signal_file.exists():  # the victim has started a variant and holds it
            assert sweep.poll() is None, sweep.communicate()
            assert time.monotonic() < deadline, "the victim worker was given no variant"
            time.sleep(0.05)
        assert int(signal_file.read_text().split()[0]) == victim.pid
        add_worker(dask_cluster, "healthy")
        wait_for_workers(dask_cluster, 2)
        os.kill(victim.pid, signal.SIGKILL)  # in the middle of its variant
        assert victim.wait(timeout=RUN_TIMEOUT) == -signal.SIGKILL
        out, err = sweep.communicate(timeout=RUN_TIMEOUT)
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
    assert sweep.returncode == 0, err
    assert out == local_table
    assert "(1 worker(s))" in err
    assert "sweep: 4/4 done · 0 running · 0 failed" in err


def test_an_unreachable_scheduler_is_one_line_and_exit_2(
    unused_port: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "1s")
    assert main([*SWEEP, "--cluster", f"tcp://127.0.0.1:{unused_port}"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: --cluster tcp://127.0.0.1:{unused_port}: no Dask scheduler answers there "
        f"(OSError: Timed out trying to connect to tcp://127.0.0.1:{unused_port} after 1 s) — "
        "start one (dask scheduler) or check the address"
    ]


def test_without_the_cluster_extra_the_command_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    assert main([*SWEEP, "--cluster", "local:1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --cluster needs Dask distributed, which is not installed — install the "
        "cluster extra: pip install 'botkit[cluster]'"
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cluster", "local:0"], "write local:N with N workers from 1 to 64"),
        (["--cluster", "tcp://host"], "write a scheduler address tcp://HOST:PORT"),
        (["--cluster", "local:2", "--jobs", "2"], "--jobs sizes the local process pool"),
    ],
)
def test_bad_cluster_arguments_are_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*SWEEP, *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_cluster_without_a_sweep_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SWEEP[:8], "--cluster", "local:1"]) == 2
    assert "--cluster local:1 runs the variants of a --sweep" in capsys.readouterr().err


def test_a_portfolio_sweep_on_a_cluster_prints_the_local_table(
    dask_cluster: Cluster, tmp_path: Path
) -> None:
    """A portfolio's candle files (one per symbol) travel to the workers with the strategies:
    named relative to the command's folder, which the workers do not run in, the variants on
    the cluster print the table of the command's own run."""
    shutil.copy(ROOT / "data" / "btc-synth-7d.csv", tmp_path / "btc.csv")
    shutil.copy(ROOT / "strategies" / "btc-dip-ladder.yaml", tmp_path / "ladder.yaml")
    shutil.copy(ROOT / "strategies" / "portfolio" / "eth-follows-btc.yaml", tmp_path / "eth.yaml")
    synth = ["data", "synth", "--symbol", "ETH_USDT_PERP", "--start", "2024-01-01",
             "--candles", "720", "--seed", "8", "--out", str(tmp_path / "eth.csv")]  # fmt: skip
    assert botkit(*synth).returncode == 0
    sweep = [
        "backtest", "--data", "BTC_USDT_PERP=btc.csv", "--data", "ETH_USDT_PERP=eth.csv",
        "--strategies", "ladder.yaml", "eth.yaml", "--end", "2024-01-01T12:00:00Z",
        "--sweep", "dip=0.003,0.006", "--sweep", "eth-follows-btc.fast=10,20",
    ]  # fmt: skip

    def here(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BOTKIT), *sweep, *args], capture_output=True, text=True,
            timeout=RUN_TIMEOUT, cwd=tmp_path,
        )  # fmt: skip

    local = here("--jobs", "1")
    assert local.returncode == 0, local.stderr
    assert local.stdout.count("\n") == 6, local.stdout  # heading, header, four variants
    add_worker(dask_cluster, "w1")  # in the tests' folder, not tmp_path
    wait_for_workers(dask_cluster, 1)
    done = here("--cluster", dask_cluster.address)
    assert done.returncode == 0, done.stderr
    assert done.stdout == local.stdout
    assert "sweep: 4/4 done · 0 running · 0 failed" in done.stderr
