"""A runner wired to the in-process simulator on a manual clock, with strategy files in tmp."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.journal import Journal
from botkit.live.client import ExchangeClient
from botkit.pipeline import GuardSettings
from botkit.rules.store import StrategyStore
from botkit.runner.cycle import EvaluationRecords, Runner
from botkit.runner.execution import DryRunExecution, Execution, LiveExecution
from botkit.runner.orders import Executor
from botkit.runner.reader import SnapshotReader
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sources import FileSource
from tests.pipeline.simharness import client_for, static_config

T0 = 1_763_000_000_000 - (1_763_000_000_000 % 60_000)
"""A minute boundary, so the first slot starts at T0."""

ONE_ORDER = """\
    strategy: one-order
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: buy-below
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.99, sz: 2}
        keep_open: true
"""


class CountingTransport(httpx.BaseTransport):
    """Counts requests per (method, path) on their way to the simulator."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.calls: Counter[tuple[str, str]] = Counter()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls[(request.method, request.url.path)] += 1
        return self.inner.handle_request(request)


@dataclass
class Rig:
    sim: SimHandle
    clock: ManualClock
    client: ExchangeClient
    transport: CountingTransport
    journal: Journal
    strategies: Path
    runner: Runner

    def write(self, name: str, text: str) -> Path:
        path = self.strategies / name
        path.write_text(textwrap.dedent(text))
        return path

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)


def make_rig(
    tmp_path: Path,
    *,
    dry: bool = False,
    guards: GuardSettings | None = None,
    evaluations: EvaluationRecords = "all",
    sleep: Callable[[float], None] | None = None,
) -> Rig:
    """``sleep``: what the executor's and the reader's back-offs wait with (default: real)."""
    clock = ManualClock(T0)
    sim = make_sim(static_config(), clock, auto_step=False)
    transport = CountingTransport(sim.transport)
    client = client_for(SIM_BASE_URL, sim.config, local=clock.now_ms, transport=transport)
    journal = Journal(tmp_path / "journal.sqlite", clock=clock.now_ms, synchronous="NORMAL")
    strategies = tmp_path / "strategies"
    strategies.mkdir()
    waits: dict[str, Any] = {} if sleep is None else {"sleep": sleep}
    executor = Executor(client, journal, resync=client.resync_clock, batch_rate=None, **waits)
    execution: Execution = (
        DryRunExecution(journal) if dry else LiveExecution(executor, client, journal)
    )
    runner = Runner(
        port=client,
        store=StrategyStore(FileSource(strategies)),
        journal=journal,
        execution=execution,
        now_ms=client.clock.now_ms,
        guards=guards,
        evaluations=evaluations,
        reader=SnapshotReader(client, **waits),
    )
    return Rig(sim, clock, client, transport, journal, strategies, runner)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path)
    yield r
    r.client.close()
    r.journal.close()


@pytest.fixture
def dry_rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path, dry=True)
    yield r
    r.client.close()
    r.journal.close()


def open_orders(rig: Rig) -> list[Any]:
    return rig.client.open_orders("BTC_USDT_PERP")
