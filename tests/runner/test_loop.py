"""The loop: bounded runs on simulated time, stop and reload requests, the notify protocol."""

from __future__ import annotations

import gc
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from botkit.clock import SimulatedTime
from botkit.runner.cycle import CycleReport
from botkit.runner.loop import LIVE_GC_THRESHOLDS, Loop, status_line
from botkit.service.notify import Notifier
from tests.runner.conftest import ONE_ORDER, T0, Rig

MINUTE = 60_000


@pytest.fixture
def notify_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def _drain(sock: socket.socket) -> list[str]:
    out: list[str] = []
    while True:
        try:
            out.append(sock.recv(4096).decode())
        except BlockingIOError:
            return out


def test_cycles_n_runs_n_cycles_one_period_apart_on_simulated_time(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    reports: list[CycleReport] = []
    loop = Loop(rig.runner, SimulatedTime(rig.clock), on_cycle=reports.append)
    assert loop.run(cycles=3) == 0
    assert [r.now_ms for r in reports] == [T0, T0 + MINUTE, T0 + 2 * MINUTE]
    assert all(r.ok for r in reports)


def test_notify_ready_after_sync_then_status_and_watchdog_each_cycle_and_stopping(
    rig: Rig, notify_socket: socket.socket
) -> None:
    rig.write("one.yaml", ONE_ORDER)
    notifier = Notifier()
    loop = Loop(rig.runner, SimulatedTime(rig.clock), notifier=notifier)
    loop.run(cycles=2)
    notifier.close()
    messages = _drain(notify_socket)
    assert messages[0] == "READY=1\nSTATUS=synced with the exchange"
    statuses = [m for m in messages if m.startswith("STATUS=cycle")]
    assert len(statuses) == 2
    assert statuses[0].startswith(
        "STATUS=cycle 1: 1 strategies, orders: 1 accepted, 0 rejected, 0 unknown, 0 failed"
    )
    assert messages.count("WATCHDOG=1") >= 2
    assert messages[-1] == "STOPPING=1"


def test_a_stop_request_ends_the_loop_after_the_cycle_in_flight(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    loop: Loop

    def stop_during(report: CycleReport) -> None:
        loop.request_stop()  # as the SIGTERM handler does, while the cycle is still running

    loop = Loop(rig.runner, SimulatedTime(rig.clock), on_cycle=stop_during)
    assert loop.run() == 0
    assert loop.cycles_run == 1
    rows = rig.journal.orders()
    assert rows
    assert all(r.outcome is not None for r in rows)  # the cycle's outcomes were recorded


def test_a_reload_request_makes_every_strategy_due_at_once(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    reloads: list[int] = []
    loop: Loop

    class ReloadThenWait(SimulatedTime):
        def wait_until(self, target_ms: int, wake: threading.Event) -> None:
            if not reloads:
                loop.request_reload()  # SIGHUP arrives while waiting
            super().wait_until(target_ms, wake)

    loop = Loop(rig.runner, ReloadThenWait(rig.clock), on_reload=lambda: reloads.append(1))
    loop.run(cycles=2)
    assert reloads == [1]
    assert loop.last_report is not None
    assert loop.last_report.now_ms == T0  # evaluated again at once, not a period later


def test_status_line_of_an_idle_and_a_failed_cycle() -> None:
    assert status_line(CycleReport(now_ms=0)) == "idle: no strategy due"
    failed = CycleReport(now_ms=0, cycle_id=7, error="read failed: boom")
    assert status_line(failed) == "cycle 7: read failed: boom"


def test_a_bounded_run_whose_orders_failed_returns_1_and_says_why(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    rig.sim.faults.add("rate_limit", method="POST", path="/v3/trade/orders", retry_after=0)
    loop = Loop(rig.runner, SimulatedTime(rig.clock))
    assert loop.run(cycles=2) == 1
    assert loop.failures == ["cycle 1: 1 order(s) failed", "cycle 2: 1 order(s) failed"]


def test_a_bounded_run_counts_an_unexpected_error_as_a_failed_cycle_and_ends(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig.write("one.yaml", ONE_ORDER)

    calls: list[int] = []

    def broken() -> CycleReport:
        calls.append(1)
        if len(calls) > 1:  # (before the fix the loop tried forever: stop it here)
            loop.request_stop()
        raise RuntimeError("a bug")

    monkeypatch.setattr(rig.runner, "run_cycle", broken)
    loop = Loop(rig.runner, SimulatedTime(rig.clock))
    assert loop.run(cycles=1) == 1
    assert loop.failures == ["unexpected RuntimeError: a bug"]
    assert len(calls) == 1


def test_what_start_up_made_is_frozen_after_the_first_cycle_that_ran(rig: Rig) -> None:
    """The loop freezes the heap once its first cycle ran (``gc.freeze``): the cyclic
    collector's full collections stop scanning the objects that live as long as the service."""
    rig.write("one.yaml", ONE_ORDER)
    frozen: list[int] = []
    gc.unfreeze()
    try:
        loop = Loop(
            rig.runner,
            SimulatedTime(rig.clock),
            on_cycle=lambda _report: frozen.append(gc.get_freeze_count()),
        )
        assert loop.run(cycles=2) == 0
    finally:
        gc.unfreeze()  # the test process's own objects go back to the collector
    # the first cycle's hook already sees the runner and its strategies frozen; nothing is
    # frozen later (frozen once, not at every cycle: frozen objects freed since only lower it)
    assert frozen[0] > 0
    assert frozen[1] <= frozen[0]


def test_the_loop_collects_young_objects_less_often_while_it_runs_and_restores_after(
    rig: Rig,
) -> None:
    """From its first cycle on, the loop runs with :data:`LIVE_GC_THRESHOLDS` (a cycle's
    short-lived containers do not trigger a collection every 700 allocations); a loop that
    ends leaves the collector's thresholds as it found them."""
    rig.write("one.yaml", ONE_ORDER)
    seen: list[tuple[int, int, int]] = []
    before = gc.get_threshold()
    gc.unfreeze()
    try:
        loop = Loop(
            rig.runner,
            SimulatedTime(rig.clock),
            on_cycle=lambda _report: seen.append(gc.get_threshold()),
        )
        assert loop.run(cycles=2) == 0
        after = gc.get_threshold()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert seen == [LIVE_GC_THRESHOLDS, LIVE_GC_THRESHOLDS]
    assert LIVE_GC_THRESHOLDS[0] >= 10_000
    assert after == before
