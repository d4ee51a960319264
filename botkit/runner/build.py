"""Assembling a runner from the settings: the one place that wires adapters to the core.

``live`` talks to the exchange over HTTPS; ``sim`` (the default) talks to the embedded simulator
in process through the same client, signatures and all. Dry run swaps only the execution adapter.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from botkit.exchange.client import ExchangeClient
from botkit.exchange.factory import make_client
from botkit.journal import Journal
from botkit.pipeline import Executor, GuardSettings
from botkit.rules.store import StrategyStore
from botkit.runner.cycle import Runner
from botkit.runner.execution import DryRunExecution, Execution, LiveExecution
from botkit.service.metrics import Metrics
from botkit.settings import Settings

__all__ = [
    "SPEC_WINDOW_MS",
    "Assembly",
    "acceptance_window_ms",
    "assemble",
    "grace_ms",
    "open_journal",
    "wall_ms",
]


def wall_ms() -> int:
    """The local wall clock in Unix ms (the journal's clock)."""
    return time.time_ns() // 1_000_000


SPEC_WINDOW_MS = 5_000
"""The spec's clock rule: a request is accepted while its timestamp is less than 5 s from the
server's time (section 5)."""


def acceptance_window_ms(settings: Settings) -> int:
    """How long after its timestamp the exchange may still accept a request: the spec's 5 s,
    or the ``recv_window`` sent with it when longer (the live host's receive window)."""
    return max(SPEC_WINDOW_MS, settings.recv_window or 0)


def grace_ms(settings: Settings) -> int:
    """How long after an order's latest send the exchange may still accept it: the acceptance
    window of its request plus the request timeout (the time the request may take to get
    there and be answered). 15 s by default (5 s + 10 s). Reconcile waits it out before it
    calls an order never placed; an order with an unknown outcome is re-sent only after it."""
    return acceptance_window_ms(settings) + int(settings.request_timeout * 1000)


def open_journal(settings: Settings) -> Journal:
    """The journal database of the settings, its folder created if needed (by the journal,
    which turns a folder it cannot create into a one-line JournalError)."""
    path = Path(settings.journal)
    return Journal(path, clock=wall_ms, synchronous=settings.journal_synchronous)


@dataclass
class Assembly:
    """A runner and the resources it holds; close it (or use ``with``) when done."""

    runner: Runner
    client: ExchangeClient
    journal: Journal
    dry: bool
    _stack: ExitStack = field(default_factory=ExitStack, repr=False)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Assembly:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def assemble(
    settings: Settings,
    *,
    dry_run: bool | None = None,
    client: ExchangeClient | None = None,
    metrics: Metrics | None = None,
    strategies: list[Path] | None = None,
) -> Assembly:
    """Wire a :class:`Runner` for ``settings`` (``dry_run`` overrides the setting)."""
    stack = ExitStack()
    dry = settings.dry_run if dry_run is None else dry_run
    if client is None:
        client = stack.enter_context(make_client(settings))
    journal = stack.enter_context(open_journal(settings))
    executor = Executor(
        client,
        journal,
        resync=client.resync_clock,
        reconcile_grace_ms=grace_ms(settings),
        band_recheck=settings.price_band_recheck,
    )
    execution: Execution = (
        DryRunExecution(executor, journal) if dry else LiveExecution(executor, client, journal)
    )
    clock = client.clock
    runner = Runner(
        port=client,
        store=StrategyStore(
            strategies or [settings.strategies_dir],
            outside_links=settings.allow_strategy_symlinks,
        ),
        journal=journal,
        execution=execution,
        now_ms=clock.now_ms,
        guards=GuardSettings.from_settings(settings),
        clock_offset_ms=lambda: clock.offset_ms if clock.last_sync else None,
        metrics=metrics,
        evaluations=settings.journal_evaluations,
        band_margin_bps=settings.price_band_margin_bps,
        orphans=True,
    )
    return Assembly(runner, client, journal, dry, stack)
