"""Regressions found in review: history retries, read-failure retry time, wake-ups, demo end."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from botkit.cli import main
from botkit.clock import SimulatedTime
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.runner.cycle import READ_RETRY_MS
from botkit.runner.loop import Loop
from botkit.runner.reader import SnapshotReader
from botkit.sim.faults import FaultKind
from tests.runner.conftest import ONE_ORDER, T0, Rig

AFTER_A_FILL = """\
    strategy: after-a-fill
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: follow-up
        when: history.fills.count('1h') > 0
        place:
          order: {side: SELL, type: LIMIT, px: price.mark * 1.01, sz: 1}
"""


def test_a_history_page_that_fails_once_is_read_again_not_taken_as_empty(rig: Rig) -> None:
    rig.runner.reader = SnapshotReader(rig.client, sleep=lambda _s: None)
    buy = OrderRequest(
        symbol="BTC_USDT_PERP",
        side=OrderSide.BUY,
        type=OrderType.MARKET,
        sz=Decimal(1),
        clOrdId="manual-1",
    )
    assert rig.client.place_orders([buy])[0].accepted
    rig.write("follow.yaml", AFTER_A_FILL)
    fault = rig.sim.faults.add(FaultKind.HTTP_503, path="/v3/trade/order/trades", times=1)
    report = rig.runner.run_cycle()
    assert fault.fired == 1
    assert report.evaluations[0].fired == ("follow-up",)


def test_a_failed_read_is_tried_again_soon_not_a_period_later(rig: Rig) -> None:
    rig.runner.reader = SnapshotReader(rig.client, sleep=lambda _s: None)
    rig.write("one.yaml", ONE_ORDER.replace("every: 1m", "every: 1h"))
    rig.runner.reader.instruments(rig.clock.now_ms())
    rig.sim.faults.add(FaultKind.HTTP_500, path="/v3/trade/position/opens", times=10)
    report = rig.runner.run_cycle()
    assert report.error.startswith("read failed")
    assert rig.runner.next_due_ms() == report.now_ms + READ_RETRY_MS


def test_a_reload_asked_during_a_cycle_is_served_without_waiting_a_period(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER.replace("every: 1m", "every: 1h"))
    reloaded_at: list[int] = []
    loop: Loop

    def reload_during_first_cycle(_report: object) -> None:
        if not reloaded_at:
            loop.request_reload()  # SIGHUP arriving while the cycle runs

    loop = Loop(
        rig.runner,
        SimulatedTime(rig.clock),
        on_cycle=reload_during_first_cycle,
        on_reload=lambda: reloaded_at.append(rig.clock.now_ms()),
    )
    loop.run(cycles=2)
    assert reloaded_at == [T0]  # not an hour later


@pytest.mark.slow
def test_the_demo_ends_even_when_no_strategy_is_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "none"
    empty.mkdir()
    argv = [
        "demo",
        "--strategies",
        str(empty),
        "--hours",
        "1",
        "--journal",
        str(tmp_path / "j.sqlite"),
    ]
    assert main(argv) == 0
    assert "No fills" in capsys.readouterr().out


def test_an_unexpected_error_in_a_cycle_is_logged_and_the_loop_goes_on(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig.write("one.yaml", ONE_ORDER)
    real = rig.runner.run_cycle
    calls: list[int] = []

    def flaky() -> object:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug")
        return real()

    monkeypatch.setattr(rig.runner, "run_cycle", flaky)
    loop = Loop(rig.runner, SimulatedTime(rig.clock))
    # the loop goes on after the bug; a bounded run counts that cycle as failed (exit 1)
    assert loop.run(cycles=2) == 1
    assert loop.cycles_run == 2
    assert len(calls) == 2
    assert loop.failures == ["unexpected RuntimeError: a bug"]
