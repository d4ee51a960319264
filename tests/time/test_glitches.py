"""Issue 14 item 5: one glitched server time, or the local clock stepping forward for 10 s,
stalled trading silently (0 cycles in the next minute, nothing logged). The service loop runs
here on the simulator with a manual clock (``SimulatedTime`` jumps to each wait's target): an
hour-long stall shows as an hour of clock advanced.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import httpx

from botkit.clock import ManualClock, RealTimeWaiter, SimulatedTime
from botkit.runner.loop import Loop
from botkit.service.notify import Notifier
from tests.time.support import Service, service

STRATEGY = """\
    strategy: steady
    symbol: BTC_USDT_PERP
    every: 10s
    rules:
      - name: look
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}
        keep_open: true
"""

HOUR = 3_600_000


class GlitchedTimestamp(httpx.BaseTransport):
    """Answers the ``nth`` ``/timestamp`` request an hour ahead; every other as the exchange."""

    def __init__(self, inner: httpx.BaseTransport, nth: int) -> None:
        self.inner = inner
        self.nth = nth
        self.seen = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path != "/timestamp":
            return response
        self.seen += 1
        if self.seen != self.nth:
            return response
        body = json.loads(response.read())
        body["serverTime"] = int(body["serverTime"]) + HOUR  # bare, as spec 4.1 gives it
        return httpx.Response(200, json=body, request=request)


def _run(svc: Service, cycles: int, sync: Callable[[], object]) -> tuple[int, int]:
    """Run the service loop for ``cycles`` cycles; (cycles run, exchange ms the clock moved)."""
    start = svc.clock.now_ms()
    loop = Loop(svc.parts.runner, SimulatedTime(svc.clock), sync=sync)
    assert loop.run(cycles) == 0
    return loop.cycles_run, svc.clock.now_ms() - start


def test_one_server_time_an_hour_ahead_neither_stalls_trading_nor_goes_unsaid(
    tmp_path: Path, logs: list[str]
) -> None:
    glitch: list[GlitchedTimestamp] = []

    def wrap(inner: httpx.BaseTransport) -> httpx.BaseTransport:
        glitch.append(GlitchedTimestamp(inner, nth=3))
        return glitch[0]

    with service(tmp_path, STRATEGY, wrap=wrap) as svc:
        cycles, moved = _run(svc, 7, svc.client.clock.resync)  # a re-sync before every cycle
        assert glitch[0].seen >= 3  # the glitched answer was read
    assert cycles == 7
    assert moved <= 70_000  # 7 cycles 10 s apart, not an hour's wait
    assert any(line.startswith("WARNING ignored a server time 36000") for line in logs), logs


def test_local_clock_stepping_forward_for_10_s_does_not_stall_trading(tmp_path: Path) -> None:
    def stepping(clock: ManualClock) -> Callable[[], int]:
        step_at = clock.now_ms() + 25_000

        def local() -> int:
            real = clock.now_ms() - clock.offset_ms
            return real + (HOUR if step_at <= real < step_at + 10_000 else 0)

        return local

    with service(tmp_path, STRATEGY, local=stepping) as svc:
        cycles, moved = _run(svc, 7, svc.client.clock.maybe_resync)
    assert cycles == 7
    assert moved <= 70_000


def test_exchange_clock_moving_back_an_hour_is_confirmed_said_and_waits_stay_within_a_period(
    tmp_path: Path, logs: list[str]
) -> None:
    with service(tmp_path, STRATEGY, skew_ms=HOUR) as svc:
        first, _ = _run(svc, 2, svc.client.clock.resync)
        svc.sim.faults.set_skew(0)  # the exchange's clock is stepped back an hour
        svc.sim.http.handle("GET", "/timestamp", "", {}, b"")
        then, moved = _run(svc, 3, svc.client.clock.resync)
    assert (first, then) == (2, 3)
    assert moved <= 30_000  # three cycles a period apart, not an hour
    warnings = [line for line in logs if line.startswith("WARNING")]
    assert any("the exchange clock moved by -36000" in line for line in warnings), warnings
    assert any("the clock moved back; due again" in line for line in warnings), warnings


class _Nap(threading.Event):
    """An event whose ``wait`` advances a manual clock instead of sleeping."""

    def __init__(self, advance: Callable[[float], None]) -> None:
        super().__init__()
        self.advance = advance
        self.naps = 0

    def wait(self, timeout: float | None = None) -> bool:
        self.advance(timeout or 0.0)
        self.naps += 1
        if self.naps > 100:  # an unbounded wait: end it, the test fails on the figure
            self.set()
        return self.is_set()


def test_real_time_waiter_never_waits_longer_than_the_distance_it_was_given() -> None:
    mono = [0.0]
    exchange = [1_000_000]

    def nap(seconds: float) -> None:
        mono[0] += seconds
        exchange[0] += int(seconds * 1000) - HOUR  # the estimate jumps back an hour each nap

    waiter = RealTimeWaiter(lambda: exchange[0], Notifier(), monotonic=lambda: mono[0])
    waiter.wait_until(exchange[0] + 20_000, _Nap(nap))
    assert mono[0] == 20.0
