"""Which strategy owns each open order, kept in the journal, and start-up's ``on_delete``.

:class:`Ownership` is the service's bookkeeping beside the :class:`~botkit.runner.cycle.Runner`
(``run`` and ``plan`` use it; backtests and paper runs, whose journals start empty, do not):

* every strategy (version) loaded is journaled with its ``on_delete``, every file that goes is
  marked removed (the ``strategies`` table);
* at start-up — the first reload that can tell — the open orders of strategies the journal
  knows but that are no longer loaded (their file was deleted while botkit was stopped) get
  their ``on_delete`` through :func:`apply_on_delete`, the very path a file deleted while the
  service runs takes; orders no known strategy owns are left alone;
* the open orders no loaded strategy owns are journaled (an ``orders_not_owned`` event, which
  ``botkit status`` shows) at start-up and whenever a cycle's read of the open orders finds
  them changed.

Start-up waits (tries again at the next reload) while a configured strategies path does not
load — a misspelt folder must not make every strategy look deleted — or while the open orders
cannot be read. A strategy whose file exists but does not load keeps its orders (which
strategy the file holds cannot be told).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loguru import logger

from botkit.errors import ExchangeError
from botkit.exchange.models import OpenOrder
from botkit.exchange.port import OrderLookup
from botkit.ports.journal import StrategyBook, StrategyRecord
from botkit.rules import OnDelete
from botkit.rules.ids import strategy_tag
from botkit.rules.store import ReloadReport, StrategyStore
from botkit.runner.execution import Execution, SideEffect
from botkit.runner.orphans import (
    NOT_OWNED_EVENT,
    NotOwned,
    OrphanReport,
    classify,
    not_owned,
    not_owned_detail,
    order_text,
    why_kept,
    why_unattributed,
)
from botkit.snapshot import Part, Snapshot

__all__ = ["Ownership", "apply_on_delete"]

REMOVED_RULE = "<file removed>"


def apply_on_delete(
    execution: Execution, name: str, orders: Sequence[OpenOrder]
) -> SideEffect | None:
    """``on_delete: cancel`` of removed strategy ``name``: cancel its open ``orders``, journaled
    like every cancel (a dry run journals what it would cancel), whether the file went while the
    service ran or while it was stopped."""
    if not orders:
        return None
    effect = execution.cancel(name, REMOVED_RULE, orders, None)
    logger.info("strategy {} removed: {}", name, effect.detail)
    return effect


class Ownership:
    """The journal's record of strategies, and the orders none of the loaded ones owns."""

    def __init__(
        self,
        port: OrderLookup,
        store: StrategyStore,
        journal: StrategyBook,
        execution: Execution,
        *,
        halted: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.port = port
        self.halted = halted
        """Why nothing may be sent now (the halt), or ``None``: the start-up pass waits."""
        self.store = store
        self.journal = journal
        self.execution = execution
        self.pending = True
        """The start-up pass is still to run."""
        self._report: OrphanReport | None = None
        self._known: list[StrategyRecord] = []
        self._known_read = False
        self._listed: frozenset[tuple[str, str, str]] | None = None
        self._waiting_logged = False

    def refreshed(self, report: ReloadReport) -> None:
        """After each reload: journal what loaded and what went; run the start-up pass."""
        self._remember(report)
        if self.pending:
            self._report = self._start_up(report)

    def take_report(self) -> OrphanReport | None:
        """What the start-up pass did, once (for the cycle report ``botkit plan`` prints)."""
        report, self._report = self._report, None
        return report

    def seen(self, snapshot: Snapshot) -> None:
        """A cycle read the open orders: journal the ones no loaded strategy owns if changed."""
        if not self.pending and snapshot.fetched(Part.OPEN_ORDERS):
            dry = self.execution.dry  # its on_delete cancels were journaled, not sent
            self._journal(
                not_owned(snapshot.open_orders, self.store.strategies, self._known, dry=dry)
            )

    # --- inside ------------------------------------------------------------------------------

    def _remember(self, report: ReloadReport) -> None:
        fresh = [*report.loaded, *report.changed]
        if fresh:
            self.journal.record_strategies(
                [
                    StrategyRecord(
                        s.name, strategy_tag(s.name), s.version, s.source, s.on_delete.value, 0
                    )
                    for s in fresh
                ]
            )
        running = self.store.strategies
        gone = [s.name for s in report.removed if s.name not in running]
        if gone:
            self.journal.mark_strategies_removed(gone)
        if fresh or gone or not self._known_read:
            self._known = self.journal.strategies(strategy_tag)
            self._known_read = True

    def _start_up(self, report: ReloadReport) -> OrphanReport | None:
        configured = {str(p) for p in self.store.paths}
        failing = {p.where.file for e in report.errors for p in e.problems}
        missing = sorted(f for f in failing if f is not None and f in configured)
        if missing:
            if not self._waiting_logged:
                logger.warning(
                    "open orders of removed strategies not handled while {} does not load: "
                    "a missing strategies folder must not cancel every strategy's orders",
                    ", ".join(missing),
                )
                self._waiting_logged = True
            return None
        halt = self.halted()
        if halt is not None:  # the halt sends nothing, cancels included: the pass waits
            if not self._waiting_logged:
                logger.warning(
                    "open orders of removed strategies not handled while halted: {}", halt
                )
                self._waiting_logged = True
            return None
        try:
            orders = self.port.open_orders()
        except ExchangeError as exc:
            logger.error("could not list the open orders at start-up (tried again): {}", exc)
            return None
        self.pending = False
        found = classify(orders, self.store.strategies, self._known)
        effects: list[SideEffect] = []
        left = [NotOwned(o, why_unattributed(o)) for o in found.unattributed] + found.shared
        for name, (record, its) in sorted(found.removed.items()):
            broken = bool(record.source) and record.source in failing
            if record.on_delete == OnDelete.CANCEL.value and not broken:
                logger.info(
                    "strategy {} is no longer loaded (on_delete: cancel): cancelling its {} "
                    "open order(s)",
                    name,
                    len(its),
                )
                effect = apply_on_delete(self.execution, name, its)
                if effect is not None:
                    effects.append(effect)
            else:
                why = why_kept(record, broken)
                left += [NotOwned(o, why) for o in its]
        self._journal(left, force=True)
        return OrphanReport(tuple(effects), tuple(left))

    def _journal(self, items: Sequence[NotOwned], *, force: bool = False) -> None:
        key = frozenset((i.order.ordId, i.order.clOrdId, i.why) for i in items)
        if not force and key == self._listed:
            return
        before = self._listed or frozenset()
        self._listed = key
        for item in items:
            if (item.order.ordId, item.order.clOrdId, item.why) not in before:
                text = order_text(item.order)
                logger.warning("open order no loaded strategy owns: {}: {}", text, item.why)
        self.journal.record_event(
            NOT_OWNED_EVENT,
            f"{len(items)} open order(s) no loaded strategy owns",
            detail=not_owned_detail(items),
        )
