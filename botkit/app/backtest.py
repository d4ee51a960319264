"""The backtest's wiring: the embedded simulator on a manual clock, its in-process port, a
journal and the service's very :class:`~botkit.runner.cycle.Runner`, handed to the replay
(:func:`botkit.backtest.driver.replay`); a prepared run executed; a sweep's variants run.

:func:`run_backtest` builds the simulator from a config with the ``static`` price model (only
the replay moves the mark), the in-process :class:`~botkit.sim.port.SimPort` (no HTTP, no
signing), a journal and the runner — rules, validation, batching, submission and journal are
production code; only the exchange underneath differs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor as PoolExecutor
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from botkit.backtest.bars import CandleSeries
from botkit.backtest.driver import BacktestRun, replay
from botkit.backtest.legs import Legs
from botkit.backtest.metrics import compute_figures, result_trades
from botkit.backtest.portfolio import PortfolioRun, replay_portfolio
from botkit.backtest.setup import BacktestOptions, Prepared, prepare
from botkit.backtest.sweep import Variant, VariantOutcome, journal_name, variant_folder
from botkit.clock import ManualClock
from botkit.errors import BotkitError
from botkit.journal import Journal, lock_journal
from botkit.rules import Strategy
from botkit.rules.store import ReloadReport, StrategyStore
from botkit.runner.cycle import EvaluationRecords, Runner
from botkit.runner.execution import LiveExecution
from botkit.runner.orders import Executor
from botkit.runner.quiet import QuietCycles
from botkit.runner.reader import ReadPolicy, SnapshotReader
from botkit.sim.config import SimConfig
from botkit.sim.engine import SimEngine
from botkit.sim.port import SimPort
from botkit.sources import FileSource

__all__ = [
    "GROUP_ROWS",
    "FixedStore",
    "backtest_journal",
    "execute",
    "make_runner",
    "run_backtest",
    "run_sweep",
    "run_variant",
]

GROUP_ROWS = 1024
"""A backtest's journal writes its bookkeeping rows (cycles, evaluations, events) in groups of
this many per commit (:class:`~botkit.journal.Journal` ``group_rows``): the same rows and ids as
writing each at once, for a quarter of the cost. A journal no file keeps (the default) is
``transient``: its orders wait too, sent and settled in memory, and are written once in their
final form; a ``--journal FILE`` writes them at once as always. Every read sees everything
before it."""


def backtest_journal(path: str | Path, clock: ManualClock) -> Journal:
    """The journal of a backtest: on the replay's ``clock``, ``synchronous=OFF`` (nothing real
    is at stake), bookkeeping grouped by :data:`GROUP_ROWS`, held by this process when it is a
    file (:func:`~botkit.journal.lock_journal`). ``close()`` writes what waits."""
    kept = str(path) not in (":memory:", "")
    lock = lock_journal(path, "botkit backtest") if kept else None
    return Journal(
        path,
        clock=clock.now_ms,
        synchronous="OFF",
        group_rows=GROUP_ROWS,
        transient=not kept,
        lock=lock,
    )


class FixedStore(StrategyStore):
    """A :class:`StrategyStore` holding strategies loaded once: a backtest's files do not change
    while it runs, so nothing is re-read each cycle."""

    def __init__(self, strategies: Sequence[Strategy]) -> None:
        super().__init__(FileSource([]))
        self._fixed = {s.name: s for s in strategies}
        self._pending = ReloadReport(loaded=tuple(strategies))

    @property
    def strategies(self) -> dict[str, Strategy]:
        return self._fixed

    @property
    def fixed(self) -> bool:
        """After the first :meth:`refresh` nothing changes."""
        return self._pending is _NOTHING

    def refresh(self, instruments: object = None) -> ReloadReport:
        """The first call reports the strategies loaded; later calls change nothing."""
        report, self._pending = self._pending, _NOTHING
        return report


_NOTHING = ReloadReport()


def _no_sleep(_seconds: float) -> None:
    """Simulated time does not wait (the in-process simulator never asks for a retry)."""


def make_runner(
    port: SimPort,
    journal: Journal,
    strategies: Sequence[Strategy],
    evaluations: EvaluationRecords = "changes",
    skip_quiet: bool = False,
) -> Runner:
    """The live :class:`Runner` on the in-process simulator: live execution (every order
    journaled, then placed), the default read policy, a fixed store, simulated time (the
    simulator's clock; nothing sleeps) and no rate limit between batches. Rule evaluations
    are journaled when they change (``evaluations``, see :class:`Runner`): a year of minute
    cycles would otherwise write a row per rule per minute that nobody reads.

    ``skip_quiet`` (with ``changes``; :func:`run_backtest` asks for it): the cycles that
    provably change nothing are skipped (:mod:`botkit.runner.quiet`): the same orders, fills,
    equity and journal rows, without the cycle rows of the cycles skipped. The simulator's
    change counters say when the book moved. Off by default: a runner driven cycle by cycle
    (the live/backtest equivalence test) then runs and reports every cycle as live does."""
    executor = Executor(port, journal, sleep=_no_sleep, batch_rate=None)
    engine = port.engine
    reader = SnapshotReader(port, ReadPolicy(), sleep=_no_sleep)
    quiet = None
    if skip_quiet and evaluations == "changes":
        quiet = QuietCycles(
            book_rev=lambda: (engine.matcher.rev, engine.settings_rev),
            open_orders=port.open_orders,
            reads=reader.read,
            position_rev=lambda: (engine.account.fills, engine.settings_rev),
        )
    return Runner(
        port=port,
        store=FixedStore(strategies),
        journal=journal,
        execution=LiveExecution(executor, port, journal),
        now_ms=port.engine.clock.now_ms,
        reader=reader,
        evaluations=evaluations,
        quiet=quiet,
    )


def _each(
    on_candle: Callable[[], None] | None, on_candles: Callable[[int], None]
) -> Callable[[], None]:
    """One callback per candle for both (the portfolio replay takes one)."""

    def each() -> None:
        if on_candle is not None:
            on_candle()
        on_candles(1)

    return each


def run_backtest(
    series: CandleSeries,
    strategies: Sequence[Strategy],
    config: SimConfig,
    *,
    symbol: str,
    journal: Journal | None = None,
    clock: ManualClock | None = None,
    meta: Mapping[str, str] | None = None,
    on_candle: Callable[[], None] | None = None,
    evaluations: EvaluationRecords = "changes",
    skip_quiet: bool = True,
    legs: Legs = (),
    on_candles: Callable[[int], None] | None = None,
    fast_forward: bool = True,
) -> BacktestRun:
    """Replay ``series`` for ``strategies`` on a simulator built from ``config`` — or, given
    ``legs``, every symbol's candles in lockstep on one account
    (:func:`~botkit.backtest.portfolio.replay_portfolio`, a
    :class:`~botkit.backtest.portfolio.PortfolioRun`).

    ``config`` should use the ``static`` price model and an instrument ``symbol`` whose start
    price is the first open (:func:`~botkit.backtest.setup.backtest_sim_config` does both).
    ``journal`` defaults to :func:`backtest_journal` in SQLite's private temporary database
    (``""``: a small page cache in memory, the rest in a file the system deletes at the end —
    a year of orders and their decisions held in memory was most of a run's peak), closed at
    the end; a given journal must run on ``clock`` and is left open. ``on_candle()`` is
    called once per candle, ``on_candles(n)`` after each ``n`` candles (a progress bar's
    ``update``): for progress only — the calls of a quiet stretch passed at once come after
    the stretch, so the clock and the simulator are then at its end.
    ``evaluations``: which rule evaluations are journaled (``all`` or ``changes``, see
    :class:`~botkit.runner.cycle.Runner`); ``skip_quiet``: skip the cycles that provably
    change nothing (see :func:`make_runner`); ``fast_forward``: pass stretches of such
    cycles at once (see :func:`~botkit.backtest.driver.replay`; off: one candle at a
    time, the same result).
    """
    clock = clock if clock is not None else ManualClock(series.start_ms)
    clock.set(series.start_ms)
    engine = SimEngine(config, clock)
    port = SimPort(engine)
    owned = journal is None
    if journal is None:
        journal = backtest_journal("", clock)
    runner = make_runner(port, journal, strategies, evaluations, skip_quiet)
    try:
        if legs:
            if on_candles is not None:
                on_candle = _each(on_candle, on_candles)
            return replay_portfolio(
                legs,
                runner,
                engine=engine,
                port=port,
                clock=clock,
                journal=journal,
                meta=meta,
                on_candle=on_candle,
                strategy_symbols={s.name: s.symbol for s in strategies},
            )
        return replay(
            series,
            runner,
            engine=engine,
            port=port,
            clock=clock,
            journal=journal,
            symbol=symbol,
            meta=meta,
            on_candle=on_candle,
            on_candles=on_candles,
            fast_forward=fast_forward,
        )
    finally:
        if owned:
            journal.close()


def execute(
    prepared: Prepared,
    *,
    journal: Journal | None = None,
    clock: ManualClock | None = None,
    on_candle: Callable[[], None] | None = None,
    evaluations: EvaluationRecords = "changes",
    skip_quiet: bool = True,
    on_candles: Callable[[int], None] | None = None,
    fast_forward: bool = True,
) -> BacktestRun:
    """Run a prepared backtest (journal in a temporary database unless one is given, on
    ``clock``); the result carries the prepared run's :attr:`~Prepared.notes`.
    ``evaluations``, ``skip_quiet``, ``on_candles`` and ``fast_forward`` as for
    :func:`run_backtest`."""
    p = prepared
    run = run_backtest(
        p.series,
        p.strategies,
        p.config,
        symbol=p.symbol,
        journal=journal,
        clock=clock,
        meta=p.meta,
        on_candle=on_candle,
        evaluations=evaluations,
        legs=p.legs,
        skip_quiet=skip_quiet,
        on_candles=on_candles,
        fast_forward=fast_forward,
    )
    if p.notes:
        run.result = dataclasses.replace(run.result, notes=p.notes)
        if isinstance(run, PortfolioRun):
            run.parts = {k: dataclasses.replace(r, notes=p.notes) for k, r in run.parts.items()}
    return run


def run_variant(
    options: BacktestOptions,
    index: int = 0,
    report: str | None = None,
    journal: str | None = None,
) -> VariantOutcome:
    """Run one variant (``options.params``) from scratch; never raises for a botkit error.
    ``report``: a folder to write the variant's whole report into
    (:func:`~botkit.backtest.report.write_report`; a failure to write is the variant's error).
    ``journal``: a new file to keep the variant's journal in (default: a temporary one).

    A top-level function of plain picklable values: a process pool, or a Ray or Dask task,
    calls it as is. The candle file is loaded once per process (cached)."""
    kept: Journal | None = None
    try:
        prepared = prepare(options)
        if journal is None:
            run = execute(prepared)
        else:
            clock = ManualClock(prepared.series.start_ms)
            kept = backtest_journal(journal, clock)
            run = execute(prepared, journal=kept, clock=clock)
    except BotkitError as exc:
        return VariantOutcome(index, dict(options.params), {}, error=str(exc).splitlines()[0])
    finally:
        if kept is not None:
            kept.close()
    trades = result_trades(run.result)
    computed = compute_figures(run.result, trades)
    errors = []
    if run.problems:
        errors.append(
            f"{sum(run.problems.values()):,} problem(s) in cycles; {run.problem_lines(1)[0]}"
        )
    if report is not None:
        # matplotlib: only when asked
        from botkit.backtest.portfolio_report import write_portfolio_report
        from botkit.backtest.report import write_report

        parts = run.parts if isinstance(run, PortfolioRun) else None
        try:
            if parts:
                write_portfolio_report(run.result, parts, report, computed, trades)
            else:
                write_report(run.result, report, computed, trades)
        except OSError as exc:
            errors.append(f"cannot write its report to {exc.filename or report}: {exc.strerror}")
    figures = computed.as_dict()
    return VariantOutcome(index, dict(options.params), figures, run.cycles, "; ".join(errors))


def _quiet_worker() -> None:
    """Pool workers log warnings only (the runner's per-fire lines would flood the terminal),
    each message once per worker (the variant's outcome counts its problems)."""
    from botkit.service.logs import configure_logging
    from botkit.service.repeats import Repeats

    configure_logging(level="WARNING", fmt="text", repeats=Repeats())


def run_sweep(
    base: BacktestOptions,
    variants: Sequence[Variant],
    *,
    jobs: int | None = None,
    on_done: Callable[[VariantOutcome], None] | None = None,
    executor: PoolExecutor | None = None,
    report: Path | None = None,
    journals: Path | None = None,
) -> list[VariantOutcome]:
    """Run every variant (``base.params`` plus the variant's values); outcomes in grid order.

    ``jobs`` processes (default: the number of cores, at most one per variant); ``jobs=1``
    runs in this process. ``executor`` replaces the pool (any :class:`concurrent.futures`
    executor, e.g. a distributed one). ``report``: each variant's report is written into
    its folder (:func:`~botkit.backtest.sweep.variant_folder`) of ``report``. ``journals``:
    each variant's journal is kept in its file (:func:`~botkit.backtest.sweep.journal_name`)
    of that folder."""
    options = [replace(base, params={**base.params, **v}) for v in variants]
    folders: list[str | None] = [
        None if report is None else str(report / variant_folder(i, len(variants)))
        for i in range(len(variants))
    ]
    kept: list[str | None] = [
        None if journals is None else str(journals / journal_name(v, i, len(variants)))
        for i, v in enumerate(variants)
    ]
    outcomes: list[VariantOutcome] = []
    workers = max(1, min(jobs or os.cpu_count() or 1, len(options)))
    if executor is None and workers == 1:
        for i, o in enumerate(options):
            outcomes.append(run_variant(o, i, folders[i], kept[i]))
            if on_done is not None:
                on_done(outcomes[-1])
        return outcomes
    pool = executor or ProcessPoolExecutor(max_workers=workers, initializer=_quiet_worker)
    try:
        futures = [
            pool.submit(run_variant, o, i, folders[i], kept[i]) for i, o in enumerate(options)
        ]
        for future in as_completed(futures):
            outcome = future.result()
            outcomes.append(outcome)
            if on_done is not None:
                on_done(outcome)
    finally:
        if executor is None:
            pool.shutdown(cancel_futures=True)
    return sorted(outcomes, key=lambda o: o.index)
