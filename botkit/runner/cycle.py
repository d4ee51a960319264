"""One cycle of the loop: reload, read, evaluate, plan, execute, journal.

:class:`Runner` owns no I/O of its own: the exchange is its reads
(:class:`~botkit.exchange.port.ExchangeReads`), the strategies a
:class:`~botkit.rules.store.StrategyStore`, the journal a
:class:`~botkit.ports.journal.RunnerJournal`, time a callable, what it reports a
:class:`~botkit.ports.observer.CycleObserver`, and whether anything is sent an
:class:`~botkit.runner.execution.Execution` adapter.
Live trading, paper trading on the embedded simulator, dry runs and backtests all run this code.

A failing strategy or a failing read is logged and journaled and the cycle goes on (or, for a
read every strategy needs, ends early); nothing in here stops the loop.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Literal

import numpy as np
import numpy.typing as npt
from loguru import logger

from botkit.errors import BotkitError, ExchangeError, JournalError, ReadFailed, StopRequested
from botkit.exchange.models import OpenOrder
from botkit.exchange.port import ExchangeReads
from botkit.frozen import quick_init
from botkit.intents import (
    Activity,
    CancelIntent,
    Intent,
    LeverageIntent,
    OrderIntent,
    PositionModeIntent,
)
from botkit.pipeline import GuardSettings, Plan, Reason, StrategyPolicy, build_plan
from botkit.pipeline.desired import RuleDiff
from botkit.ports.journal import Evaluated, Outcome, RunnerJournal
from botkit.ports.observer import CycleFigures, CycleObserver
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
from botkit.runner import keeping
from botkit.runner.activity import ActivityCache
from botkit.runner.execution import Execution, SideEffect, describe
from botkit.runner.killswitch import Controls, controls
from botkit.runner.orders import ExecutionReport
from botkit.runner.orphans import OrphanReport
from botkit.runner.ownership import Ownership, apply_on_delete
from botkit.runner.quiet import Envelope, QuietCycles
from botkit.runner.reader import Needs, SnapshotReader, needs_of
from botkit.runner.shared import SharedIdWatch
from botkit.snapshot import Part, Snapshot

__all__ = ["DEFAULT_BAND_MARGIN_BPS", "CycleReport", "EvaluationRecords", "Runner"]

READ_RETRY_MS = 30_000
"""After a failed account read, due strategies are tried again this soon (within their slot)."""

DEFAULT_BAND_MARGIN_BPS = Decimal(10)
"""Default safety margin inside the price band: 10 bps of the bound (the setting's default)."""

PLANNER_PARTS = (
    Part.POSITIONS,
    Part.OPEN_ORDERS,
    Part.TICKERS,
    Part.POSITION_MODE,
    Part.LIMIT_PRICES,
)
"""What orders and cancels are checked against: prefetched once a rule fired, so that a failed
read ends the cycle before anything is sent."""

LIMITS_MOVED_CODES = frozenset({10002, 10014})
"""Exchange codes that suggest the instrument limits or the band moved: re-read them."""

_UNCHANGED = ReloadReport()
"""What a fixed store's reload reports after the first (nothing changed)."""


@quick_init
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
    orphans: OrphanReport | None = None
    """What start-up did with the open orders no loaded strategy owns (the first cycle)."""
    desired: tuple[RuleDiff, ...] = ()
    """What each ``keep:`` rule's reconcile decided (kept, placed, cancelled, replaced, why)."""
    quiet: bool = False
    """The cycle was skipped: provably it would have read, decided and journaled nothing new
    (:mod:`botkit.runner.quiet`; backtests only)."""

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

    ``metrics``: told each cycle's figures (:class:`~botkit.ports.observer.CycleObserver`: the
    service's Prometheus metrics count cycles and orders); ``None`` counts nothing (a backtest,
    a one-off plan).

    ``band_margin_bps``: how far inside the price band a price must lie, in basis points of the
    band's bound (the ``price_band_margin_bps`` setting).

    ``orphans``: the service's bookkeeping of strategies (``run``, ``plan``; off for backtests
    and paper runs, whose journals start empty): each loaded strategy is journaled with its
    ``on_delete``; at the first reload the open orders of strategies the journal knows but
    that are no longer loaded get their ``on_delete`` (see :mod:`botkit.runner.orphans`), and
    the open orders no loaded strategy owns are journaled (``orders_not_owned``) then and
    whenever a cycle's read of the open orders finds them changed.

    ``quiet``: skip the cycles that provably change nothing (:mod:`botkit.runner.quiet`: the
    backtest's; needs ``evaluations="changes"``, no ``orphans``, no halt or kill-switch file).
    """

    def __init__(
        self,
        *,
        port: ExchangeReads,
        store: StrategyStore,
        journal: RunnerJournal,
        execution: Execution,
        now_ms: Callable[[], int],
        guards: GuardSettings | None = None,
        reader: SnapshotReader | None = None,
        clock_offset_ms: Callable[[], int | None] = lambda: None,
        metrics: CycleObserver | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        evaluations: EvaluationRecords = "all",
        band_margin_bps: Decimal = DEFAULT_BAND_MARGIN_BPS,
        orphans: bool = False,
        quiet: QuietCycles | None = None,
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
        self._latest_ms = 0
        """The latest time a next run was set at (a next run is never set past that time plus
        its period): a clock at or after it needs no :meth:`_reschedule`."""
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
        if quiet is not None and (
            evaluations != "changes" or orphans or self.guards.halt_file
            or self.guards.kill_switch_file
        ):  # fmt: skip
            raise ValueError(
                "quiet cycles are skipped only when evaluations are journaled as 'changes', "
                "without orphan bookkeeping and without halt or kill-switch files"
            )
        self.quiet = quiet
        if not Decimal(0) <= band_margin_bps < Decimal(10_000):
            raise ValueError(f"band_margin_bps must be in 0..10000, got {band_margin_bps}")
        self.band_margin = band_margin_bps / Decimal(10_000)
        self._controls = Controls()
        self._first_look = keeping.FirstLook()
        self.ownership = (
            Ownership(port, store, journal, execution, halted=lambda: controls(self.guards).halt)
            if orphans
            else None
        )
        # another bot under the same client order ids: watched by the process holding the
        # journal, when it trades (see botkit.runner.shared)
        self.shared_ids = (
            SharedIdWatch(journal) if journal.exclusive and not execution.dry else None
        )

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

    def quiet_envelope(self) -> Envelope | None:
        """While the returned :class:`~botkit.runner.quiet.Envelope` lasts, every cycle
        :meth:`run_cycle` would run is skipped as quiet (None: no such promise now). Only with
        quiet cycles on a fixed store (a backtest's); reads, changes nothing."""
        quiet = self.quiet
        if quiet is None or not self.store.fixed:
            return None
        return quiet.envelope([s for s in self.store.strategies.values() if s.enabled])

    def pass_quiet(self, closes: npt.NDArray[np.int64]) -> int:
        """Do what :meth:`run_cycle` called at each of ``closes`` (increasing times, each a
        time the caller would call it when a strategy is due) does when every cycle is quiet
        (inside :meth:`quiet_envelope`): move each strategy's next run time on as its skipped
        runs would and count them. Returns the number of cycles (times with a due strategy)."""
        quiet = self.quiet
        count = len(closes)
        if quiet is None or not count:
            return 0
        next_due = self._next_due
        any_due: npt.NDArray[np.bool_] | None = None
        each = count  # the closes from this one on are due for a strategy (see below)
        first_close, last_close = int(closes[0]), int(closes[-1])
        gap = int((closes[1:] - closes[:-1]).min()) if count > 1 else None  # the least spacing
        for strategy in self.store.strategies.values():
            if not strategy.enabled:
                continue
            due_ms = next_due.get(strategy.name, 0)
            if last_close < due_ms:
                continue
            period = strategy.period_ms
            if gap is None or period <= gap:
                # closes a period apart at least (a strategy run at each candle): each reached
                # close is in a period of its own, so each is due — no array needed
                first = 0 if first_close >= due_ms else int(np.searchsorted(closes, due_ms))
                each = min(each, first)
                next_due[strategy.name] = strategy.next_due_ms(last_close)
                continue
            # due at the first close reached, then at the first close of each later period
            reached = closes >= due_ms
            slot = closes // period
            due = reached.copy()
            due[1:] &= (slot[1:] != slot[:-1]) | ~reached[:-1]
            if any_due is None:
                any_due = due
            else:
                any_due |= due
            last = int(closes[int(np.flatnonzero(due)[-1])])
            next_due[strategy.name] = strategy.next_due_ms(last)
        self._latest_ms = max(self._latest_ms, last_close)
        if any_due is None:
            cycles = count - each
        else:
            any_due[each:] = True
            cycles = int(np.count_nonzero(any_due))
        quiet.skip(cycles)
        return cycles

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
        if self.ownership is not None:
            self.ownership.refreshed(report)
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
            halt = controls(self.guards).halt
            if halt is not None:
                effect = self._not_sent(
                    strategy.name,
                    "<file removed>",
                    "cancel",
                    f"cancel {len(orders)} order(s)",
                    "halt",
                    halt,
                    None,
                )
                logger.warning("strategy {} removed: {}", strategy.name, effect.detail)
                return
        apply_on_delete(self.execution, strategy.name, orders)

    def _due(self, now: int) -> list[Strategy]:
        """The enabled strategies whose next run is at or before ``now``."""
        next_due = self._next_due
        return [
            s
            for s in self.store.strategies.values()
            if s.enabled and next_due.get(s.name, 0) <= now
        ]

    def run_cycle(self) -> CycleReport:
        """One cycle. Never raises for an exchange or strategy problem; a journal problem
        (:class:`~botkit.errors.JournalError`: unwritable, unreadable, corrupt, deleted) is
        raised — trading on without a journal could send an order twice."""
        skipped, asked = self._skip_quiet()
        if skipped is not None:
            return CycleReport(now_ms=skipped, reload=_UNCHANGED, quiet=True)
        return self._run_cycle(asked)

    def run_cycle_unless_quiet(self) -> CycleReport | None:
        """:meth:`run_cycle`, but a cycle of a fixed store skipped as quiet gives None instead
        of its report (a backtest's replay, which asks at every candle: the same effects,
        without a report made for each quiet minute)."""
        skipped, asked = self._skip_quiet()
        if skipped is not None:
            return None
        return self._run_cycle(asked)

    def skip_if_quiet(self) -> bool | None:
        """What :meth:`run_cycle_unless_quiet` does now when it skips a quiet cycle (True; the
        next run times moved on, the skip counted). Otherwise nothing changes: False when a
        due strategy is not quiet (:meth:`run_loud_cycle` then runs the cycle), None when
        nothing was asked (no strategy due, or a clock that moved back: call
        :meth:`run_cycle_unless_quiet`). The backtest's replay steps through the candles of a
        quiet envelope with it (:mod:`botkit.backtest.driver`)."""
        quiet = self.quiet
        if quiet is None or not self.store.fixed:
            return None
        now = self.now_ms()
        if now < self._latest_ms:  # a clock that moved back: the whole path reschedules
            return None
        due = self._due(now)
        if not due:
            return None
        if not quiet.holds(due, now):
            return False
        self._latest_ms = now
        next_due = self._next_due
        for strategy in due:
            next_due[strategy.name] = strategy.next_due_ms(now)
        return True

    def run_loud_cycle(self) -> CycleReport:
        """:meth:`run_cycle_unless_quiet` right after :meth:`skip_if_quiet` found a due
        strategy not quiet, nothing changed since: the cycle, without asking again."""
        return self._run_cycle(True)

    def _skip_quiet(self) -> tuple[int | None, bool]:
        """A fixed store's quiet cycle, which is only the due check (its reload changes
        nothing): (the time of the cycle skipped, or None; whether the due strategies were
        asked and found not quiet)."""
        quiet = self.quiet
        if quiet is None or not self.store.fixed:
            return None, False
        now = self.now_ms()
        if now < self._latest_ms:  # else every next run was set at or before now: in time
            self._reschedule(now)
        self._latest_ms = max(self._latest_ms, now)
        due = self._due(now)
        if not due:
            return None, False
        if quiet.holds(due, now):
            next_due = self._next_due
            for strategy in due:
                next_due[strategy.name] = strategy.next_due_ms(now)
            return now, False
        return None, True

    def _run_cycle(self, asked: bool) -> CycleReport:
        """:meth:`run_cycle` past the quiet check of a fixed store (``asked``: it found the
        due strategies not quiet)."""
        quiet = self.quiet
        started = self._monotonic()
        now = self.now_ms()
        reload = self.reload(now)
        self._reschedule(now)
        self._latest_ms = max(self._latest_ms, now)
        next_due = self._next_due
        due = self._due(now)
        orphans = self.ownership.take_report() if self.ownership is not None else None
        if not due:
            return CycleReport(
                now_ms=now, reload=reload, seconds=self._monotonic() - started, orphans=orphans
            )
        rev: Hashable = None
        if quiet is not None:
            if not asked and quiet.holds(due, now):  # nothing to read, decide or journal
                for strategy in due:
                    next_due[strategy.name] = strategy.next_due_ms(now)
                return CycleReport(now_ms=now, reload=reload, quiet=True)
            rev = quiet.mark()
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
        if quiet is not None:
            quiet.observe(due, report.evaluations, now, rev, bool(report.error), self._activity_of)
        self._observe(report, report.seconds)
        return report if orphans is None else replace(report, orphans=orphans)

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
            desired = keeping.diffs(done, snapshot, self._activity_of, self._first_look)
            if any(r.intents for _, e in done for r in e.results):
                snapshot.prefetch(*PLANNER_PARTS)  # before anything is sent

        except ReadFailed as exc:
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
        ctl = self._check_controls(cycle_id)
        effects: tuple[SideEffect, ...] = ()
        hold = None if ctl.halt is None else Reason("halt", ctl.halt)
        if intents:
            effects, snapshot, unknown = self._side_effects(cycle_id, intents, snapshot, ctl)
            hold = hold or unknown
        orders = [i for i in intents if isinstance(i, OrderIntent)]
        if desired:  # cancels before places: a replacement never stacks on what it replaces
            kept, kept_effects, gone = keeping.apply(
                desired, execution=self.execution, journal=self.journal, cycle_id=cycle_id,
                halt=ctl.halt,
            )  # fmt: skip
            orders += kept
            effects += tuple(kept_effects)
            if gone:
                snapshot = snapshot.without_orders(gone)
        plan = build_plan(
            orders,
            snapshot,
            policies={s.name: self._policy(s) for s in due} if intents else None,
            limits=self.guards.limits,
            kill_switch=ctl.kill_switch,
            hold=hold,
            band_margin=self.band_margin,
        )
        _log_planning_failures(plan)
        execution = self.execution.orders(plan, cycle_id)
        log_failures(cycle_id, execution)
        self._watch_shared_ids(snapshot, cycle_id, execution)
        if execution.outcomes and any(o.code in LIMITS_MOVED_CODES for o in execution.outcomes):
            self.reader.invalidate_instruments()
        if self.ownership is not None:
            self.ownership.seen(snapshot)
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
            desired=tuple(desired),
        )

    def _activity_of(self, strategy: Strategy) -> Activity:
        return self.activity.get(strategy.name, strategy.activity_window_ms)

    def _watch_shared_ids(
        self, snapshot: Snapshot, cycle_id: int, execution: ExecutionReport
    ) -> None:
        """Check the open orders for ids another bot shares: those of the first cycle (read
        for it if the cycle did not), then those any later cycle read anyway; and the cycle's
        outcomes for orders the exchange already had at their first request."""
        watch = self.shared_ids
        if watch is None:
            return
        if execution.outcomes:
            watch.check_outcomes(execution.outcomes, self.store.strategies, cycle_id)
        orders = snapshot.open_orders if snapshot.fetched(Part.OPEN_ORDERS) else None
        if orders is None and not watch.checked:
            try:
                orders = snapshot.open_orders
            except ReadFailed as exc:
                logger.warning("open orders unavailable for the shared-id check: {}", exc)
                return
        if orders is not None:
            watch.check(orders, self.store.strategies, cycle_id)

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
            except ReadFailed:
                raise  # a part of the snapshot could not be read: the cycle's read failed
            except JournalError:
                raise  # the journal, not the strategy: the service stops
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
        changes = self._changes
        rows: list[tuple[str, str, Sequence[Evaluated]]] = []
        for strategy, evaluation in done:
            recorded = evaluation.results if changes is None else changes.select(evaluation)
            if recorded:
                rows.append((strategy.name, strategy.version, _evaluated(recorded)))
        # one commit for the cycle's evaluations (a JournalError stops the service)
        self.journal.record_cycle_evaluations(cycle_id, rows, dry=self.execution.dry)
        for strategy, evaluation in done:
            for result in evaluation.results:
                if result.status is RuleStatus.ERROR:
                    rule_errors.append((strategy.name, result.rule, result.reason))
                    logger.bind(strategy=strategy.name, rule=result.rule).warning(
                        "rule error: {}", result.reason
                    )
                elif result.status is RuleStatus.FIRED:  # the same record as a bound logger's
                    logger.info("fired", strategy=strategy.name, rule=result.rule)  # (no copy)
                if result.intents:
                    intents.extend(result.intents)
            evaluations.append(evaluation)
        return evaluations, rule_errors, intents

    def _check_controls(self, cycle_id: int) -> Controls:
        """The halt and kill switch now; a change since the last cycle is logged and journaled
        once (``controls`` event)."""
        ctl = controls(self.guards)
        if ctl != self._controls:
            for line in ctl.lines():
                (logger.warning if "ENGAGED" in line else logger.info)("{}", line)
            self.journal.record_event("controls", "; ".join(ctl.lines()), cycle_id=cycle_id)
            self._controls = ctl
        return ctl

    def _not_sent(
        self,
        strategy: str,
        rule: str,
        action: str,
        what: str,
        control: str,
        reason: str,
        cycle_id: int | None,
    ) -> SideEffect:
        """A cancel or setting change the halt or kill switch kept back, journaled."""
        effect = SideEffect(strategy, rule, action, False, f"{what} not sent: {reason}")
        self.journal.record_event(
            control,
            f"{strategy}/{rule}: {effect.detail}",
            cycle_id=cycle_id,
            strategy=strategy,
            rule=rule,
        )
        return effect

    def _side_effects(
        self, cycle_id: int, intents: Sequence[Intent], snapshot: Snapshot, ctl: Controls
    ) -> tuple[tuple[SideEffect, ...], Snapshot, Reason | None]:
        """Position-mode switches first, then leverage, then cancels, before new orders are
        planned; the snapshot the orders are then planned against; a reason to hold every order.

        The halt sends none of them; the kill switch sends only the cancels. A position-mode
        switch changes what every order must carry (posSide), so the orders of the cycle are
        planned against the mode the account has once the switches went out: the mode asked
        for when every switch was accepted (the last one wins), else the mode read again from
        the exchange. When that read fails too, every order of the cycle is held back with the
        reason ``position_mode_unknown`` (journaled) and the rules decide again next cycle.
        """
        effects: list[SideEffect] = []
        stop = ("halt", ctl.halt) if ctl.halt else ("kill_switch", ctl.kill_switch)
        switches = [i for i in intents if isinstance(i, PositionModeIntent)]
        levers = [i for i in intents if isinstance(i, LeverageIntent)]
        sent: list[SideEffect] = []
        changes: list[PositionModeIntent | LeverageIntent] = [*switches, *levers]
        for setting in changes:
            if stop[1] is not None:
                effects.append(
                    self._not_sent(
                        setting.strategy,
                        setting.rule,
                        "configure",
                        describe(setting),
                        stop[0],
                        stop[1],
                        cycle_id,
                    )
                )
                continue
            effect = self.execution.configure(setting, cycle_id)
            effects.append(effect)
            if isinstance(setting, PositionModeIntent):
                sent.append(effect)
        hold: Reason | None = None
        if sent:
            if all(e.ok for e in sent):
                mode = switches[-1].mode
                snapshot = snapshot.with_position_mode(mode)
            else:
                snapshot = snapshot.reread(Part.POSITION_MODE)
                try:
                    mode = snapshot.position_mode
                except ReadFailed as exc:
                    hold = Reason(
                        "position_mode_unknown",
                        f"a position-mode switch failed and the mode could not be read again"
                        f" ({exc}) — the orders wait for the next cycle",
                    )
            if hold is None:
                logger.info("orders of cycle {} are planned in {} mode", cycle_id, mode.value)
        for intent in intents:
            if isinstance(intent, CancelIntent):
                orders = _attributed(snapshot.open_orders, intent)
                if not orders:
                    continue
                if ctl.halt is not None:
                    effects.append(
                        self._not_sent(
                            intent.strategy,
                            intent.rule,
                            "cancel",
                            f"cancel {len(orders)} order(s)",
                            "halt",
                            ctl.halt,
                            cycle_id,
                        )
                    )
                    continue
                effects.append(
                    self.execution.cancel(intent.strategy, intent.rule, orders, cycle_id)
                )
        return tuple(effects), snapshot, hold

    def _observe(self, report: CycleReport, seconds: float) -> None:
        metrics = self.metrics
        if metrics is None:
            return
        execution = report.execution
        metrics.cycle_done(
            CycleFigures(
                seconds=seconds,
                now_ms=report.now_ms,
                ok=report.ok,
                clock_offset_ms=self.clock_offset_ms(),
                outcomes=execution.outcomes if execution is not None else (),
                refused=execution.refused if execution is not None else 0,
            )
        )


_SHOWN_IDS = 5


def _ids(ids: Sequence[str]) -> str:
    more = f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else ""
    return ", ".join(ids[:_SHOWN_IDS]) + more


def log_failures(cycle_id: int | None, execution: ExecutionReport) -> None:
    """Log at WARNING what did not go as sent, one line per reason (not per order): orders the
    exchange rejected (by code and message), orders that failed, each answer that settled
    nothing (malformed, dropped, timed out: its orders are looked up), and orders still
    unknown at the end of the cycle."""
    groups: dict[tuple[str, str], list[str]] = {}
    for o in execution.outcomes:
        if o.outcome is Outcome.REJECTED:
            key = ("rejected by the exchange", f"{o.code} {o.msg}".strip())
        elif o.outcome is Outcome.FAILED:
            key = ("failed (not placed)", o.error or f"{o.code} {o.msg}".strip())
        else:
            continue
        groups.setdefault(key, []).append(o.cl_ord_id)
    for (what, why), grouped in groups.items():
        logger.warning(
            "cycle {}: {} order(s) {}: {} ({})", cycle_id, len(grouped), what, why, _ids(grouped)
        )
    for asked, why in execution.unknown_answers:
        logger.warning(
            "cycle {}: the answer about {} order(s) settled nothing ({}); looking them up ({})",
            cycle_id,
            len(asked),
            why,
            _ids(asked),
        )
    if execution.unsettled:
        logger.warning(
            "cycle {}: {} order(s) still unknown after the lookups: reconcile looks them up "
            "again ({})",
            cycle_id,
            len(execution.unsettled),
            _ids(execution.unsettled),
        )


def _log_planning_failures(plan: Plan) -> None:
    """Each strategy whose planning failed this cycle, once, with its name (its orders are
    journaled refused with the reason; the other strategies' orders go on)."""
    said: set[str] = set()
    for refusal in plan.refused:
        strategy = refusal.intent.strategy
        for reason in refusal.reasons:
            if reason.code == "planning_failed" and strategy not in said:
                said.add(strategy)
                logger.bind(strategy=strategy).error("planning failed: {}", reason.message)


def _attributed(orders: Sequence[OpenOrder], intent: CancelIntent) -> list[OpenOrder]:
    return [
        o
        for o in orders
        if o.symbol == intent.symbol and belongs_to(o.clOrdId, intent.strategy, intent.only_rule)
    ]
