"""Fixtures of the backtest data tests: a simulator with four hours of minute candles."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.sim.config import load_sim_config
from botkit.sim.inprocess import SimHandle, make_sim

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
M = 60_000


@pytest.fixture
def sim_with_history() -> Iterator[tuple[SimHandle, ExchangeClient]]:
    """Minutes 0..239 from T0 (open 100+i, low 99+i, high 102+i, close 101+i), then one
    forming candle; the real client over the in-process transport."""
    config = load_sim_config(None)
    config = config.model_copy(
        update={"prices": config.prices.model_copy(update={"model": "static"})}
    )
    clock = ManualClock(T0 - M)  # the simulator's own first candle is before the period
    sim = make_sim(config, clock, auto_step=False)
    for i in range(240):  # four hours of minutes, each with a low, a high and a close
        for offset, px in (
            (1_000, 100 + i),
            (20_000, 99 + i),
            (40_000, 102 + i),
            (50_000, 101 + i),
        ):
            clock.set(T0 + i * M + offset)
            sim.set_mark("BTC_USDT_PERP", Decimal(px))
    clock.set(T0 + 240 * M + 1_000)
    sim.set_mark("BTC_USDT_PERP", Decimal(400))  # the forming candle
    cred = sim.credential
    client = ExchangeClient(SIM_BASE_URL, key=cred.key, secret=cred.secret,
                            passphrase=cred.passphrase, transport=sim.transport,
                            clock=ClockSync(local=clock.now_ms, interval_ms=0))  # fmt: skip
    yield sim, client
    client.close()
