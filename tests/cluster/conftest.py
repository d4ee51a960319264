"""Real Dask clusters on loopback for the cluster tests: a scheduler and workers as separate
``dask scheduler`` / ``dask worker`` processes, stopped at the end of the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DASK = Path(sys.executable).with_name("dask")
START_TIMEOUT = 60.0  # a bound for a loaded 2-core machine, not a measured expectation


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)


def _wait_for_file(path: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args!r} exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear within {START_TIMEOUT} s")
        time.sleep(0.05)


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """``dask scheduler`` on 127.0.0.1 (a free port); workers are added by ``add_worker``."""
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    scheduler = subprocess.Popen(
        [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(scheduler_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    cluster = Cluster("", scheduler)
    try:
        _wait_for_file(scheduler_file, scheduler)
        for _ in range(100):  # the file is written whole, but may be seen before it is
            try:
                cluster.address = json.loads(scheduler_file.read_text())["address"]
                break
            except (ValueError, KeyError):
                time.sleep(0.05)
        yield cluster
    finally:
        for proc in [scheduler, *cluster.workers.values()]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def add_worker(cluster: Cluster, name: str, *, env: dict[str, str] | None = None,
               preload: Path | None = None) -> subprocess.Popen[bytes]:  # fmt: skip
    """A ``dask worker`` process (one thread, no nanny: its pid is the worker's)."""
    args = [str(DASK), "worker", cluster.address, "--nthreads", "1", "--no-nanny",
            "--no-dashboard", "--host", "127.0.0.1", "--name", name]  # fmt: skip
    if preload is not None:
        args += ["--preload", str(preload)]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    cluster.workers[name] = proc
    return proc


def wait_for_workers(cluster: Cluster, count: int) -> None:
    from distributed import Client

    with Client(cluster.address, timeout=START_TIMEOUT) as client:  # type: ignore[no-untyped-call]
        client.wait_for_workers(count, timeout=START_TIMEOUT)


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
