"""How a cycle's decisions reach the exchange: live, or as a dry run that sends nothing.

Two adapters with one interface, so neither the loop nor the pipeline has an ``if dry_run`` of
its own: the runner calls :class:`Execution`; :class:`LiveExecution` sends (through the pipeline's
:class:`~botkit.pipeline.Executor`) and records, :class:`DryRunExecution` only records. Both
journal everything, through the journal's port.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from loguru import logger

from botkit.errors import ExchangeError, MalformedResponse, OutcomeUnknown, ServerUnavailable
from botkit.exchange.models import OpenOrder
from botkit.exchange.port import Trading
from botkit.frozen import quick_init
from botkit.intents import LeverageIntent, PositionModeIntent
from botkit.pipeline import Plan
from botkit.ports.journal import JournalPort
from botkit.runner.orders import ExecutionReport, Executor, record_dry_run
from botkit.runner.orders.reconcile import ReconcileReport

__all__ = ["DryRunExecution", "Execution", "LiveExecution", "SideEffect", "describe"]

CANCEL_BATCH = 10


@quick_init
@dataclass(frozen=True, slots=True)
class SideEffect:
    """A cancel, leverage or position-mode change: what was asked and what came of it."""

    strategy: str
    rule: str
    action: str
    ok: bool
    detail: str
    orders: int = 0
    """How many orders a cancel named."""


class Execution(Protocol):
    dry: bool

    def reconcile(self) -> None:
        """Settle what an earlier run left unsettled (start-up, crash recovery)."""
        ...

    def orders(self, plan: Plan, cycle_id: int | None) -> ExecutionReport:
        """Journal the plan and (live) send it (``cycle_id`` ``None``: an operator's command)."""
        ...

    def cancel(
        self, strategy: str, rule: str, orders: Sequence[OpenOrder], cycle_id: int | None
    ) -> SideEffect:
        """Cancel ``orders`` (this strategy's open orders)."""
        ...

    def configure(
        self, intent: LeverageIntent | PositionModeIntent, cycle_id: int | None
    ) -> SideEffect:
        """Set leverage or the position mode."""
        ...


def describe(intent: LeverageIntent | PositionModeIntent) -> str:
    """What a leverage or position-mode change does, in words."""
    if isinstance(intent, LeverageIntent):
        return (
            f"set leverage {intent.lever}x on {intent.symbol} "
            f"({intent.mgn_mode.value}, {intent.pos_side.value})"
        )
    return f"set position mode {intent.mode.value}"


def _cancel_text(orders: Sequence[OpenOrder]) -> str:
    ids = ", ".join(o.clOrdId or o.ordId for o in orders[:5])
    more = f" and {len(orders) - 5} more" if len(orders) > 5 else ""
    return f"cancel {len(orders)} open order(s): {ids}{more}"


def _warn_repaired(report: ReconcileReport) -> None:
    """An order the journal had settled failed but the exchange holds: say it loudly."""
    for outcome in report.repaired:
        logger.warning(
            "order {} is at the exchange (ordId {}) although the journal had settled it failed:"
            " repaired to accepted — check why it was placed late (clock, receive window)",
            outcome.cl_ord_id,
            outcome.ord_id,
        )


class LiveExecution:
    """Sends through the pipeline's :class:`~botkit.pipeline.Executor` and the port."""

    dry = False

    def __init__(self, executor: Executor, port: Trading, journal: JournalPort) -> None:
        self.executor = executor
        self.port = port
        self.journal = journal

    def reconcile(self) -> None:
        _warn_repaired(self.executor.reconcile())

    def orders(self, plan: Plan, cycle_id: int | None) -> ExecutionReport:
        report = self.executor.run(plan, cycle_id=cycle_id)
        _warn_repaired(report.reconciled)
        return report

    def _record(self, effect: SideEffect, cycle_id: int | None) -> SideEffect:
        self.journal.record_event(
            effect.action,
            f"{effect.strategy}/{effect.rule}: {effect.detail}",
            cycle_id=cycle_id,
            strategy=effect.strategy,
            rule=effect.rule,
        )
        return effect

    def cancel(
        self, strategy: str, rule: str, orders: Sequence[OpenOrder], cycle_id: int | None
    ) -> SideEffect:
        failures: list[str] = []
        by_symbol: dict[str, list[str]] = {}
        for order in orders:
            by_symbol.setdefault(order.symbol, []).append(order.ordId)
        for symbol, ids in sorted(by_symbol.items()):
            for start in range(0, len(ids), CANCEL_BATCH):
                chunk = ids[start : start + CANCEL_BATCH]
                try:
                    results = self.port.cancel_orders(symbol, ord_ids=chunk)
                except (OutcomeUnknown, ServerUnavailable, MalformedResponse) as exc:
                    failures += self._cancel_unknown(symbol, chunk, exc)
                    continue
                except ExchangeError as exc:
                    failures.append(str(exc))
                    continue
                failures += [
                    f"{r.ordId or r.clOrdId}: {r.code} {r.msg}" for r in results if not r.accepted
                ]
        detail = _cancel_text(orders) + (f"; failed: {'; '.join(failures)}" if failures else "")
        effect = SideEffect(strategy, rule, "cancel", not failures, detail, len(orders))
        return self._record(effect, cycle_id)

    def _cancel_unknown(self, symbol: str, ord_ids: Sequence[str], exc: ExchangeError) -> list[str]:
        """A cancel whose answer does not prove it was refused (5xx, lost or garbled answer) may
        have cancelled: look the orders up and report only those still open as not cancelled."""
        try:
            still = {o.ordId for o in self.port.open_orders(symbol)} & set(ord_ids)
        except ExchangeError as err:
            return [f"cancel outcome unknown ({exc}); lookup failed: {err}"]
        if not still:
            return []
        ids = ", ".join(sorted(still))
        return [f"cancel outcome unknown ({exc}); looked up: still open: {ids}"]

    def configure(
        self, intent: LeverageIntent | PositionModeIntent, cycle_id: int | None
    ) -> SideEffect:
        try:
            if isinstance(intent, LeverageIntent):
                self.port.set_leverage(
                    intent.symbol, intent.lever, mgn_mode=intent.mgn_mode, pos_side=intent.pos_side
                )
            else:
                self.port.set_position_mode(intent.mode)
        except ExchangeError as exc:
            effect = SideEffect(
                intent.strategy,
                intent.rule,
                "configure",
                False,
                f"{describe(intent)} failed: {exc}",
            )
        else:
            effect = SideEffect(intent.strategy, intent.rule, "configure", True, describe(intent))
        return self._record(effect, cycle_id)


class DryRunExecution:
    """Reads happened; nothing is sent. The plan is journaled as a dry run and returned."""

    dry = True

    def __init__(self, journal: JournalPort) -> None:
        self.journal = journal

    def reconcile(self) -> None:
        """A dry run sends nothing, so it leaves nothing to settle and settles nothing."""

    def orders(self, plan: Plan, cycle_id: int | None) -> ExecutionReport:
        return record_dry_run(self.journal, plan, cycle_id)

    def _record(self, effect: SideEffect, cycle_id: int | None) -> SideEffect:
        self.journal.record_event(
            "dry_run",
            f"{effect.strategy}/{effect.rule}: would {effect.detail}",
            cycle_id=cycle_id,
            strategy=effect.strategy,
            rule=effect.rule,
        )
        return effect

    def cancel(
        self, strategy: str, rule: str, orders: Sequence[OpenOrder], cycle_id: int | None
    ) -> SideEffect:
        return self._record(
            SideEffect(strategy, rule, "cancel", True, _cancel_text(orders), len(orders)), cycle_id
        )

    def configure(
        self, intent: LeverageIntent | PositionModeIntent, cycle_id: int | None
    ) -> SideEffect:
        effect = SideEffect(intent.strategy, intent.rule, "configure", True, describe(intent))
        return self._record(effect, cycle_id)
