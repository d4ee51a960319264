"""The notify protocol, checked on a real datagram socket."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from botkit.service.notify import Notifier


@pytest.fixture
def notify_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    yield sock
    sock.close()


def test_notifier_sends_ready_watchdog_status_stopping(notify_socket: socket.socket) -> None:
    notifier = Notifier()
    notifier.ready("synced")
    notifier.watchdog()
    notifier.status("3 strategies, last cycle ok\nsecond line dropped")
    notifier.stopping()
    notifier.close()
    received = [notify_socket.recv(4096).decode() for _ in range(4)]
    assert received == [
        "READY=1\nSTATUS=synced",
        "WATCHDOG=1",
        "STATUS=3 strategies, last cycle ok",
        "STOPPING=1",
    ]
    assert notifier.watchdog_interval_s == 30.0


def test_notifier_without_systemd_is_a_silent_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notifier = Notifier()
    assert not notifier.enabled
    notifier.ready()
    notifier.watchdog()
    notifier.stopping()
