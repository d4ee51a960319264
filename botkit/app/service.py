"""The service's wiring: a runner assembled from the settings (``botkit run``, ``plan``,
``cancel``, ``flatten``), and the journal each command opens.

``live`` talks to the exchange over HTTPS; ``sim`` (the default) talks to the embedded simulator
in process through the same client, signatures and all. Dry run swaps only the execution adapter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from botkit.app.clients import make_client
from botkit.clock import RealTimeWaiter, Stop, wall_ms
from botkit.journal import Journal, lock_journal
from botkit.live.client import ExchangeClient
from botkit.pipeline import GuardSettings
from botkit.redaction import url_secrets
from botkit.rules.store import StrategyStore, ran_in
from botkit.runner.cycle import CycleReport, Runner
from botkit.runner.execution import DryRunExecution, Execution, LiveExecution
from botkit.runner.loop import Loop, install_signal_handlers
from botkit.runner.manual import ManualRun
from botkit.runner.orders import Executor
from botkit.runner.reader import SnapshotReader
from botkit.service.metrics import Metrics
from botkit.service.notify import Notifier
from botkit.settings import Settings
from botkit.sources import FileSource

__all__ = [
    "SPEC_WINDOW_MS",
    "Assembly",
    "acceptance_window_ms",
    "assemble",
    "grace_ms",
    "install_signal_handlers",
    "open_journal",
    "read_journal",
    "reload_guards",
    "secrets_of",
    "service_loop",
]


SPEC_WINDOW_MS = 5_000
"""The spec's clock rule: a request is accepted while its timestamp is less than 5 s from the
server's time (section 5)."""


def acceptance_window_ms(settings: Settings) -> int:
    """How long after its timestamp the exchange may still accept a request: the spec's 5 s,
    or the ``recv_window`` sent with it when longer (the live host's receive window)."""
    return max(SPEC_WINDOW_MS, settings.recv_window or 0)


def grace_ms(settings: Settings) -> int:
    """How long after an order's latest send the exchange may still accept it: the acceptance
    window of its request plus the time the request may take (``request_deadline``, else
    ``request_timeout``). 15 s by default (5 s + 10 s). Reconcile waits it out before it calls
    an order never placed; an order with an unknown outcome is re-sent only after it."""
    took = max(settings.request_timeout, settings.request_deadline or 0.0)
    return acceptance_window_ms(settings) + int(took * 1000)


def secrets_of(settings: Settings) -> list[str]:
    """The configured credentials and the notification URLs (and every token they embed):
    what the log sink and the journal redact."""
    found = [
        s.get_secret_value()
        for s in (settings.api_key, settings.api_secret, settings.api_passphrase)
        if s is not None
    ]
    for target in settings.notify:
        found += url_secrets(target.url.get_secret_value())
    return found


def open_journal(
    settings: Settings, *, command: str = "botkit", clock: Callable[[], int] = wall_ms
) -> Journal:
    """The journal of the settings, **for writing**: held by this process (``command`` names it
    in the refusal a second process gets, :class:`~botkit.errors.JournalLocked`), credentials
    redacted from what it stores, its folder created if needed (a folder it cannot create is a
    one-line JournalError). Every command that writes the journal opens it here. ``clock``:
    what the rows are stamped with; the service passes the exchange clock (see
    :func:`assemble`)."""
    path = Path(settings.journal)
    return Journal(
        path,
        clock=clock,
        synchronous=settings.journal_synchronous,
        secrets=secrets_of(settings),
        lock=None if str(path) == ":memory:" else lock_journal(path, command),
    )


def read_journal(settings: Settings) -> Journal:
    """The journal of the settings for reading (``botkit status``): no lock, so it works while
    the service holds the journal."""
    return Journal(Path(settings.journal), clock=wall_ms)


@dataclass
class Assembly:
    """A runner and the resources it holds; close it (or use ``with``) when done."""

    runner: Runner
    client: ExchangeClient
    journal: Journal
    dry: bool
    _stack: ExitStack = field(default_factory=ExitStack, repr=False)

    def manual(self) -> ManualRun:
        """``botkit cancel`` / ``flatten``'s hands on the account: the runner's own execution
        adapter (dry or live), reader and clock, on this assembly's client and journal."""
        return ManualRun(
            port=self.client,
            journal=self.journal,
            execution=self.runner.execution,
            reader=self.runner.reader,
            now_ms=self.runner.now_ms,
        )

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
    command: str = "botkit run",
) -> Assembly:
    """Wire a :class:`Runner` for ``settings`` (``dry_run`` overrides the setting).

    ``sleep``: how the pipeline waits (backoffs, retries, reconcile's grace); the service passes
    its :meth:`~botkit.clock.Stop.sleep` so a stop request cuts every wait short.
    The journal runs on the exchange clock (the client's synced estimate), the clock the runner
    decides with: fire times, cooldowns, ``max_fires`` and every journal time compare on it.
    The journal is held (:func:`open_journal`, ``command`` names this process) before any
    exchange request: a second process on it stops there."""
    stack = ExitStack()
    dry = settings.dry_run if dry_run is None else dry_run
    if client is None:  # sends nothing yet: the journal is held before the first request
        # a dry run changes nothing: it reads a copy of the paper account (exchange = sim)
        client = stack.enter_context(make_client(settings, paper="read" if dry else "hold"))
    journal = stack.enter_context(
        open_journal(settings, clock=client.clock.now_ms, command=command)
    )
    executor = Executor(
        client,
        journal,
        resync=client.resync_clock,
        reconcile_grace_ms=grace_ms(settings),
        band_recheck=settings.price_band_recheck,
        sleep=sleep,
    )
    execution: Execution = (
        DryRunExecution(journal) if dry else LiveExecution(executor, client, journal)
    )
    clock = client.clock
    runner = Runner(
        port=client,
        store=StrategyStore(
            FileSource(
                strategies or [settings.strategies_dir],
                outside_links=settings.allow_strategy_symlinks,
            ),
            ran=ran_in(journal, f"the journal {journal.path}"),  # their orders keep their tag
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


def service_loop(
    parts: Assembly,
    *,
    notifier: Notifier,
    stop: Stop,
    on_reload: Callable[[], None],
    on_cycle: Callable[[CycleReport], None],
) -> Loop:
    """The service's :class:`Loop` around an assembly's runner: real time (waits cut short by
    ``stop``, the watchdog fed through ``notifier``), the client's clock resynced as it asks."""
    runner = parts.runner
    return Loop(
        runner,
        RealTimeWaiter(runner.now_ms, notifier),
        notifier=notifier,
        sync=parts.client.clock.maybe_resync,
        on_reload=on_reload,
        on_cycle=on_cycle,
        stop=stop.event,
    )


def reload_guards(parts: Assembly, settings: Settings) -> None:
    """Hand the runner the guards (kill switch, halt, limits) of freshly read ``settings``."""
    parts.runner.guards = GuardSettings.from_settings(settings)
