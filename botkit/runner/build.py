"""Assembling a runner from the settings: the one place that wires adapters to the core.

``live`` talks to the exchange over HTTPS; ``sim`` (the default) talks to the embedded simulator
in process through the same client, signatures and all. Dry run swaps only the execution adapter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
from botkit.runner.reader import SnapshotReader
from botkit.service.metrics import Metrics
from botkit.settings import Settings

__all__ = ["Assembly", "assemble", "grace_ms", "open_journal", "wall_ms"]


def wall_ms() -> int:
    """The local wall clock in Unix ms (for commands that only read the journal)."""
    return time.time_ns() // 1_000_000


def grace_ms(settings: Settings) -> int:
    """How long a request of a killed process may still be in flight at the exchange: 1.5 ×
    the request timeout (15 s by default), waited out before start-up reconcile looks it up."""
    return int(settings.request_timeout * 1500)


def open_journal(settings: Settings, *, clock: Callable[[], int] = wall_ms) -> Journal:
    """The journal database of the settings, its folder created if needed (by the journal,
    which turns a folder it cannot create into a one-line JournalError). ``clock``: what the
    rows are stamped with; the service passes the exchange clock (see :func:`assemble`), a
    command that only reads may leave the wall clock."""
    path = Path(settings.journal)
    return Journal(path, clock=clock, synchronous=settings.journal_synchronous)


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
    sleep: Callable[[float], None] = time.sleep,
) -> Assembly:
    """Wire a :class:`Runner` for ``settings`` (``dry_run`` overrides the setting).

    ``sleep``: how the pipeline waits (backoffs, retries, reconcile's grace); the service passes
    its :meth:`~botkit.runner.stop.Stop.sleep` so a stop request cuts every wait short.
    The journal runs on the exchange clock (the client's synced estimate), the clock the runner
    decides with: fire times, cooldowns, ``max_fires`` and every journal time compare on it."""
    stack = ExitStack()
    dry = settings.dry_run if dry_run is None else dry_run
    if client is None:
        client = stack.enter_context(make_client(settings))
    journal = stack.enter_context(open_journal(settings, clock=client.clock.now_ms))
    executor = Executor(
        client,
        journal,
        resync=client.resync_clock,
        reconcile_grace_ms=grace_ms(settings),
        band_recheck=settings.price_band_recheck,
        sleep=sleep,
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
        reader=SnapshotReader(client, sleep=sleep),
        clock_offset_ms=lambda: clock.offset_ms if clock.last_sync else None,
        metrics=metrics,
        evaluations=settings.journal_evaluations,
        band_margin_bps=settings.price_band_margin_bps,
        orphans=True,
    )
    return Assembly(runner, client, journal, dry, stack)
