"""One cycle of the loop: reload, read, evaluate, plan, execute, journal.

:class:`Runner` owns no I/O of its own: the exchange is an :class:`ExchangePort`, the strategies a
:class:`~botkit.rules.store.StrategyStore`, the journal a :class:`~botkit.journal.Journal`, time a
callable, and whether anything is sent an :class:`~botkit.runner.execution.Execution` adapter.
Live trading, paper trading on the embedded simulator, dry runs and backtests all run this code.

A failing strategy or a failing read is logged and journaled and the cycle goes on (or, for a
read every strategy needs, ends early); nothing in here stops the loop.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from loguru import logger

from botkit.errors import BotkitError, ExchangeError, StopRequested
from botkit.exchange.models import OpenOrder
from botkit.exchange.port import ExchangePort
from botkit.intents import CancelIntent, Intent, LeverageIntent, OrderIntent, PositionModeIntent
from botkit.journal import Evaluated, Journal
from botkit.pipeline import (
    ExecutionReport,
    GuardSettings,
    Plan,
    StrategyPolicy,
    build_plan,
    kill_switch_reason,
)
from botkit.rules import (
    Evaluation,
    OnDelete,
    RuleResult,
    RuleStatus,
    Strategy,
    belongs_to,
    evaluate,
)
from botkit.rules.store import ReloadReport, StrategyStore
from botkit.runner.activity import ActivityCache
from botkit.runner.execution import Execution, SideEffect
from botkit.runner.reader import Needs, SnapshotReader, needs_of
from botkit.service.metrics import Metrics
from botkit.snapshot import Snapshot

__all__ = ["CycleReport", "EvaluationRecords", "Runner"]

READ_RETRY_MS = 30_000
"""After a failed account read, due strategies are tried again this soon (within their slot)."""

LIMITS_MOVED_CODES = frozenset({10002, 10014})
"""Exchange codes that suggest the instrument limits or the band moved: re-read them."""


@dataclass(frozen=True, slots=True)
class CycleReport:
    """What one cycle did; ``plan`` and ``evaluations`` are what a dry run prints."""

    now_ms: int
    cycle_id: int | None = None
    due: tuple[str, ...] = ()
    evaluations: tuple[Evaluation, ...] = ()
    plan: Plan | None = None
    execution: ExecutionReport | None = None
    effects: tuple[SideEffect, ...] = ()
    reload: ReloadReport | None = None
    error: str = ""
    strategy_errors: dict[str, str] = field(default_factory=dict)
    rule_errors: tuple[tuple[str, str, str], ...] = ()
    """(strategy, rule, reason) of each rule whose evaluation failed (its ``error`` status)."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error


def _policy(strategy: Strategy) -> StrategyPolicy:
    return StrategyPolicy(off_tick=strategy.off_tick, limits=strategy.risk)


EvaluationRecords = Literal["all", "changes"]
"""Which rule evaluations a cycle journals (see :class:`Runner`)."""


def _evaluated(results: Sequence[RuleResult]) -> list[Evaluated]:
    return [
        Evaluated(rule=r.rule, fired=r.fired, reason=r.reason or r.status.value, inputs=r.inputs)
        for r in results
    ]


class _Changes:
    """The ``changes`` record policy: a rule's evaluation is journaled when it fired, failed,
    or its status differs from the last one journaled for it (the first evaluation of each
    loaded version included)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[str, tuple[str, dict[str, RuleStatus]]] = {}

    def select(self, evaluation: Evaluation) -> list[RuleResult]:
        known = self._last.get(evaluation.strategy)
        if known is None or known[0] != evaluation.version:
            known = (evaluation.version, {})
            self._last[evaluation.strategy] = known
        last = known[1]
        out = []
        for r in evaluation.results:
            status = r.status
            if last.get(r.rule) is not status or status is RuleStatus.FIRED:
                last[r.rule] = status
                out.append(r)
            elif status is RuleStatus.ERROR:
                out.append(r)
        return out

    def forget(self, strategy: str) -> None:
        self._last.pop(strategy, None)


class Runner:
    """Runs cycles. ``now_ms`` is exchange time (the synced clock, or the simulator's clock).

    ``evaluations`` says which rule evaluations each cycle journals: ``all`` (every rule of
    every due strategy, with the inputs it saw — the default) or ``changes`` (a rule's row when
    it fired or failed, or when its status differs from the last row journaled for it: a rule
    whose condition stays false is journaled once, when it becomes false). Orders, their
    outcomes, cycles and events are journaled the same either way, and so are the fires rule
    activity (cooldown, max_fires) is read from.

    ``metrics``: where cycles and orders are counted (the service's Prometheus registry);
    ``None`` counts nothing (a backtest, a one-off plan).
    """

    def __init__(
        self,
        *,
        port: ExchangePort,
        store: StrategyStore,
        journal: Journal,
        execution: Execution,
        now_ms: Callable[[], int],
        guards: GuardSettings | None = None,
        reader: SnapshotReader | None = None,
        clock_offset_ms: Callable[[], int | None] = lambda: None,
        metrics: Metrics | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        evaluations: EvaluationRecords = "all",
    ) -> None:
        self.port = port
        self.store = store
        self.journal = journal
        self.execution = execution
        self.now_ms = now_ms
        self.guards = guards or GuardSettings()
        self.reader = reader or SnapshotReader(port)
        self.clock_offset_ms = clock_offset_ms
        self.metrics = metrics
        self._monotonic = monotonic
        self._next_due: dict[str, int] = {}
        self._reported_errors: set[str] = set()
        self.activity = ActivityCache(journal, include_dry=execution.dry)
        self.last_reload: ReloadReport | None = None
        self._needs: tuple[tuple[Strategy, ...], tuple[tuple[str, ...], frozenset[str], Needs]] = (
            (),
            ((), frozenset(), needs_of(())),
        )
        self._policies: dict[str, tuple[Strategy, StrategyPolicy]] = {}
        if evaluations not in ("all", "changes"):
            raise ValueError(f"evaluations must be 'all' or 'changes', got {evaluations!r}")
        self._changes = _Changes() if evaluations == "changes" else None

    # --- scheduling --------------------------------------------------------------------------

    def next_due_ms(self) -> int | None:
        """When the next strategy is due (exchange time), or None when none is loaded. Never
        more than one period of that strategy after now: a clock that moved back since the time
        was set does not stretch the wait (see :meth:`_reschedule`)."""
        now = self.now_ms()
        times = [
            min(self._next_due.get(s.name, 0), now + s.period_ms)
            for s in self.store.strategies.values()
            if s.enabled
        ]
        return min(times) if times else None

    def _reschedule(self, now: int) -> None:
        """A strategy due more than one period after ``now`` was scheduled on a clock that has
        since moved back (a glitched server time, a local clock stepped forward, then back):
        due again at its next slot, and said once (WARNING)."""
        next_due = self._next_due
        for strategy in self.store.strategies.values():
            due = next_due.get(strategy.name)
            if due is not None and due > now + strategy.period_ms:
                next_due[strategy.name] = strategy.next_due_ms(now)
                logger.bind(strategy=strategy.name).warning(
                    "next run was set for {} ms, {} s after now ({} ms) but the period is {} s:"
                    " the clock moved back; due again at {} ms",
                    due,
                    (due - now) // 1000,
                    now,
                    strategy.period_ms // 1000,
                    next_due[strategy.name],
                )

    def force_due(self) -> None:
        """Make every strategy due at the next cycle (SIGHUP)."""
        self._next_due.clear()

    # --- the cycle ---------------------------------------------------------------------------

    def reload(self, now_ms: int) -> ReloadReport:
        """Re-read changed strategy files; apply ``on_delete`` to strategies whose file went."""
        try:
            instruments = self.reader.instruments(now_ms)
        except ExchangeError as exc:
            logger.warning("instrument limits unavailable for checking strategies: {}", exc)
            instruments = None
        report = self.store.refresh(instruments)
        self.last_reload = report
        if not self._reported_errors and not (
            report.loaded or report.changed or report.removed or report.errors or report.kept
        ):
            return report  # nothing changed and nothing to clear (the usual cycle)
        errors = {str(e) for e in report.errors}
        for line in report.lines():
            if line not in errors and not any(line in e for e in errors):
                logger.info("strategies: {}", line)
        for error in sorted(errors - self._reported_errors):  # each new problem once
            logger.error("strategy file: {}", error)
            self.journal.record_event("strategy_error", error)
        self._reported_errors = errors
        for gone in report.removed:
            self._next_due.pop(gone.name, None)
            self.activity.forget(gone.name)
            if self._changes is not None:
                self._changes.forget(gone.name)
            if gone.on_delete is OnDelete.CANCEL and gone.name not in self.store.strategies:
                self._cancel_all_of(gone)
        return report

    def _cancel_all_of(self, strategy: Strategy) -> None:
        try:
            orders = [o for o in self.port.open_orders() if belongs_to(o.clOrdId, strategy.name)]
        except ExchangeError as exc:
            logger.error(
                "could not list open orders of removed strategy {}: {}", strategy.name, exc
            )
            return
        if orders:
            effect = self.execution.cancel(strategy.name, "<file removed>", orders, None)
            logger.info("strategy {} removed: {}", strategy.name, effect.detail)

    def run_cycle(self) -> CycleReport:
        """One cycle. Never raises for an exchange, strategy or journal-read problem."""
        started = self._monotonic()
        now = self.now_ms()
        reload = self.reload(now)
        self._reschedule(now)
        next_due = self._next_due
        due = [
            s
            for s in self.store.strategies.values()
            if s.enabled and next_due.get(s.name, 0) <= now
        ]
        if not due:
            return CycleReport(now_ms=now, reload=reload, seconds=self._monotonic() - started)
        cycle_id = self.journal.begin_cycle(
            dry=self.execution.dry, clock_offset_ms=self.clock_offset_ms()
        )
        try:
            report = self._cycle(cycle_id, now, due, reload, started)
        except StopRequested as exc:  # SIGTERM during a backoff: the cycle ends here
            self.journal.end_cycle(cycle_id, error=f"cut short: {exc}")
            raise
        except Exception as exc:  # the cycle row still gets its end, with the error
            self.journal.end_cycle(cycle_id, error=f"unexpected: {type(exc).__name__}: {exc}")
            raise
        self.journal.end_cycle(cycle_id, error=report.error)
        self._observe(report, report.seconds)
        return report

    def _cycle(
        self,
        cycle_id: int,
        now: int,
        due: Sequence[Strategy],
        reload: ReloadReport,
        started: float,
    ) -> CycleReport:
        names, symbols, needs = self._needs_of(due)
        for strategy in due:
            self._next_due[strategy.name] = strategy.next_due_ms(now)
        try:
            snapshot = self.reader.read(now, symbols, needs)
            done, errors = self._evaluate(due, snapshot)
            if any(r.intents for _, e in done for r in e.results):
                _planner_parts(snapshot)  # what orders are checked against, before anything

        except ExchangeError as exc:
            logger.error("cycle {}: reading the account failed: {}", cycle_id, exc)
            retry = now + READ_RETRY_MS  # try again soon, not a whole period later
            for strategy in due:
                self._next_due[strategy.name] = min(self._next_due[strategy.name], retry)
            return CycleReport(
                now,
                cycle_id,
                names,
                reload=reload,
                error=f"read failed: {exc}",
                seconds=self._monotonic() - started,
            )
        evaluations, rule_errors, intents = self._record(cycle_id, done, errors)
        effects = self._side_effects(cycle_id, intents, snapshot) if intents else ()
        orders = [i for i in intents if isinstance(i, OrderIntent)]
        plan = build_plan(
            orders,
            snapshot,
            policies={s.name: self._policy(s) for s in due} if intents else None,
            limits=self.guards.limits,
            kill_switch=kill_switch_reason(self.guards),
        )
        execution = self.execution.orders(plan, cycle_id)
        if execution.outcomes and any(o.code in LIMITS_MOVED_CODES for o in execution.outcomes):
            self.reader.invalidate_instruments()
        return CycleReport(
            now,
            cycle_id,
            names,
            tuple(evaluations),
            plan,
            execution,
            effects,
            reload,
            strategy_errors=errors,
            rule_errors=tuple(rule_errors),
            seconds=self._monotonic() - started,
        )

    def _policy(self, strategy: Strategy) -> StrategyPolicy:
        """The strategy's pipeline policy, built once per loaded version."""
        cached = self._policies.get(strategy.name)
        if cached is None or cached[0] is not strategy:
            cached = (strategy, _policy(strategy))
            self._policies[strategy.name] = cached
        return cached[1]

    def _needs_of(self, due: Sequence[Strategy]) -> tuple[tuple[str, ...], frozenset[str], Needs]:
        """The due strategies' names, symbols and :func:`needs_of`, kept while the same (loaded)
        strategies are due."""
        last, cached = self._needs
        if len(last) != len(due) or not all(map(operator.is_, last, due)):
            names = tuple(s.name for s in due)
            symbols = frozenset(sym for s in due for sym in s.symbols)
            cached = (names, symbols, needs_of(due))
            self._needs = (tuple(due), cached)
        return cached

    def _evaluate(
        self, due: Sequence[Strategy], snapshot: Snapshot
    ) -> tuple[list[tuple[Strategy, Evaluation]], dict[str, str]]:
        """Evaluate the due strategies. Nothing is journaled yet: a deferred read failing later
        in the cycle must leave no fire behind (its retry would be blocked as ``same_slot``)."""
        done: list[tuple[Strategy, Evaluation]] = []
        errors: dict[str, str] = {}
        for strategy in due:
            try:
                activity = self.activity.get(strategy.name, strategy.activity_window_ms)
                done.append((strategy, evaluate(strategy, snapshot, activity, snapshot.now_ms)))
            except ExchangeError:
                raise  # a part of the snapshot could not be read: the cycle's read failed
            except BotkitError as exc:
                errors[strategy.name] = str(exc)
                logger.bind(strategy=strategy.name).error("evaluation failed: {}", exc)
        return done, errors

    def _record(
        self, cycle_id: int, done: list[tuple[Strategy, Evaluation]], errors: dict[str, str]
    ) -> tuple[list[Evaluation], list[tuple[str, str, str]], list[Intent]]:
        """Journal and log the evaluations of a cycle whose reads all succeeded; their intents."""
        evaluations: list[Evaluation] = []
        rule_errors: list[tuple[str, str, str]] = []
        intents: list[Intent] = []
        dry = self.execution.dry
        changes = self._changes
        for strategy, evaluation in done:
            recorded = evaluation.results if changes is None else changes.select(evaluation)
            try:
                if recorded:
                    self.journal.record_evaluations(
                        cycle_id,
                        strategy=strategy.name,
                        version=strategy.version,
                        rules=_evaluated(recorded),
                        dry=dry,
                    )
            except BotkitError as exc:
                errors[strategy.name] = str(exc)
                logger.bind(strategy=strategy.name).error("evaluation failed: {}", exc)
                continue
            for result in evaluation.results:
                if result.status is RuleStatus.ERROR:
                    rule_errors.append((strategy.name, result.rule, result.reason))
                    logger.bind(strategy=strategy.name, rule=result.rule).warning(
                        "rule error: {}", result.reason
                    )
                elif result.status is RuleStatus.FIRED:
                    logger.bind(strategy=strategy.name, rule=result.rule).info("fired")
                if result.intents:
                    intents.extend(result.intents)
            evaluations.append(evaluation)
        return evaluations, rule_errors, intents

    def _side_effects(
        self, cycle_id: int, intents: Sequence[object], snapshot: Snapshot
    ) -> tuple[SideEffect, ...]:
        """Position mode and leverage first, then cancels, before new orders are placed."""
        effects: list[SideEffect] = []
        for intent in intents:
            if isinstance(intent, PositionModeIntent | LeverageIntent):
                effects.append(self.execution.configure(intent, cycle_id))
        for intent in intents:
            if isinstance(intent, CancelIntent):
                orders = _attributed(snapshot.open_orders, intent)
                if orders:
                    effects.append(
                        self.execution.cancel(intent.strategy, intent.rule, orders, cycle_id)
                    )
        return tuple(effects)

    def _observe(self, report: CycleReport, seconds: float) -> None:
        metrics = self.metrics
        if metrics is None:
            return
        metrics.cycle_seconds.observe(seconds)
        offset = self.clock_offset_ms()
        if offset is not None:
            metrics.clock_offset_ms.set(offset)
        if report.execution is not None:
            for outcome in report.execution.outcomes:
                metrics.orders.labels(outcome=outcome.outcome.value).inc()
                if outcome.code not in (None, 200):
                    metrics.exchange_errors.labels(code=str(outcome.code)).inc()
            if report.execution.refused:
                metrics.orders.labels(outcome="rejected_local").inc(report.execution.refused)
        if report.ok:
            metrics.last_success.set(report.now_ms / 1000)


def _planner_parts(snapshot: Snapshot) -> None:
    """Read the parts orders and cancels are checked against (positions, open orders, tickers,
    position mode, price band), so that a failed read stops the cycle before anything leaves."""
    snapshot.positions, snapshot.open_orders, snapshot.tickers  # noqa: B018
    snapshot.position_mode, snapshot.limit_prices  # noqa: B018


def _attributed(orders: Sequence[OpenOrder], intent: CancelIntent) -> list[OpenOrder]:
    return [
        o
        for o in orders
        if o.symbol == intent.symbol and belongs_to(o.clOrdId, intent.strategy, intent.only_rule)
    ]
