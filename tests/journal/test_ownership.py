"""One process per journal, and a journal the service can no longer trust stops it — with real
``botkit run`` processes against the simulator served on loopback.

* a second ``botkit run`` (or ``plan``, ``demo``, ``cancel``, ``flatten``) on a held journal
  refuses in one line naming the holder; ``botkit status`` and ``botkit journal`` still read;
  after SIGKILL of the holder the next run starts (the OS dropped the lock);
* random bytes over the journal, or the journal deleted or replaced, under a running service:
  it exits 1 with one line, without a traceback;
* journal, WAL, shared-memory and lock files are mode 0600 under ``umask 000``.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.reliability.procs import ROOT, Service, make_service

pytestmark = pytest.mark.slow

WAIT_S = 30.0


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = make_service(tmp_path)
    yield svc
    svc.server.stop()


def _until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _running(service: Service, *, umask: int | None = None) -> subprocess.Popen[bytes]:
    """``botkit run`` up and trading: it has placed orders at the exchange."""
    if umask is not None:
        old = os.umask(umask)  # inherited by the child
        try:
            proc = service.start()
        finally:
            os.umask(old)
    else:
        proc = service.start()
    try:
        _until(lambda: service.placed() > 0 or proc.poll() is not None, "the first orders")
    except TimeoutError:
        proc.kill()
        raise
    assert proc.poll() is None, service.output()[-2000:]
    return proc


def _botkit(service: Service, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=ROOT,
        env=service.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _exits(proc: subprocess.Popen[bytes]) -> int:
    try:
        return proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
        raise


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=10)


def test_a_second_run_on_a_held_journal_refuses_naming_the_holder(service: Service) -> None:
    first = _running(service)
    try:
        second = _botkit(service, "run", "--once")
        assert second.returncode == 1
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert f"is in use by pid {first.pid} on host {socket.gethostname()} since" in lines[0]
        assert "(botkit run)" in lines[0]
        assert "Traceback" not in second.stdout + second.stderr
        for other in (("plan",), ("cancel", "--all", "--yes"), ("flatten", "--all", "--yes")):
            refused = _botkit(service, *other)
            assert refused.returncode == 1, refused.stderr
            assert f"is in use by pid {first.pid}" in refused.stderr
            assert len(refused.stderr.strip().splitlines()) == 1

        # readers keep working while the service holds the journal
        status = _botkit(service, "status")
        assert "in use" not in status.stdout + status.stderr
        assert status.stdout.startswith(("healthy", "unhealthy")), status.stderr
        tail = _botkit(service, "journal", "tail", "-n", "3")
        assert tail.returncode == 0, tail.stderr

        os.kill(first.pid, signal.SIGKILL)  # no chance to unlock: the OS drops the lock
        first.wait(timeout=10)
        after = _botkit(service, "run", "--once")
        assert after.returncode == 0, after.stderr[-2000:]
    finally:
        _stop(first)


def test_a_demo_on_the_journal_a_service_holds_refuses_and_removes_nothing(
    service: Service,
) -> None:
    first = _running(service)
    try:
        size = service.journal.stat().st_size
        demo = _botkit(service, "demo", "--journal", str(service.journal), "--hours", "1")
        assert demo.returncode != 0
        assert f"is in use by pid {first.pid}" in demo.stderr
        assert service.journal.stat().st_size >= size  # not removed to start afresh
        assert first.poll() is None
    finally:
        _stop(first)


def _scramble(path: Path, keep: int) -> None:
    """Random bytes over ``path`` after its first ``keep`` bytes (its header)."""
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(keep)
        handle.write(os.urandom(max(size - keep, 4096)))


def _one_error_line(service: Service) -> str:
    lines = [
        line for line in service.output().splitlines() if line and not line.startswith("{")
    ]  # JSON log lines aside, what the operator sees
    assert "Traceback" not in service.output()
    assert len(lines) == 1, lines
    return lines[0]


def test_random_bytes_in_the_journal_stop_the_service(service: Service) -> None:
    proc = _running(service)
    try:
        _scramble(service.journal, 4096)  # the database header page is left alone
        wal = Path(f"{service.journal}-wal")
        _scramble(wal, 32)  # most of the journal is in its WAL until a checkpoint
        assert _exits(proc) == 1
    finally:
        _stop(proc)
    line = _one_error_line(service)
    assert line.startswith(f"error: journal {service.journal} is corrupt (")
    assert "stopping" in line


def _delete(journal: Path) -> None:
    journal.unlink()


def _replace(journal: Path) -> None:
    other = journal.with_name("other.sqlite")
    other.write_bytes(journal.read_bytes())
    other.replace(journal)  # the same content, another file


def _remove_lock(journal: Path) -> None:
    Path(f"{journal}-lock").unlink()  # a second process could lock a new one now


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_delete, "was deleted or moved while this process had it open"),
        (_replace, "was replaced by another file"),
        (_remove_lock, "its lock file"),
    ],
)
def test_a_journal_deleted_or_replaced_under_the_service_stops_it(
    service: Service, change: Callable[[Path], None], says: str
) -> None:
    proc = _running(service)
    try:
        change(service.journal)
        assert _exits(proc) == 1
    finally:
        _stop(proc)
    line = _one_error_line(service)
    assert line.startswith(f"error: journal {service.journal}")
    assert says in line


def test_a_corrupt_journal_is_refused_at_start(service: Service) -> None:
    assert _botkit(service, "run", "--once").returncode == 0
    _scramble(service.journal, 4096)  # closed: everything was checkpointed into the file
    again = _botkit(service, "run", "--once")
    assert again.returncode == 1
    assert again.stderr.startswith(f"error: journal {service.journal} is corrupt (")
    assert len(again.stderr.strip().splitlines()) == 1


def test_journal_files_are_private_whatever_the_umask(service: Service) -> None:
    proc = _running(service, umask=0)
    try:
        names = [
            "journal.sqlite",
            "journal.sqlite-wal",
            "journal.sqlite-shm",
            "journal.sqlite-lock",
        ]
        paths = {n: service.folder / n for n in names}
        modes = {
            n: stat.S_IMODE(p.stat().st_mode) if p.exists() else None for n, p in paths.items()
        }
    finally:
        _stop(proc)
    assert modes == dict.fromkeys(names, 0o600)
