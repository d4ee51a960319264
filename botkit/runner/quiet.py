"""Quiet cycles: skipping a cycle that provably changes nothing (the backtest's replay).

After each cycle the runner ran, :meth:`QuietCycles.observe` asks
:func:`~botkit.rules.deps.quiet_until` of every rule of every strategy the cycle evaluated:
until when its status cannot change. A strategy is **quiet** when every one of its rules is
(each gated by a fixed ``enabled: false``, a resting order under ``keep_open``, a cooldown or
``max_fires`` that opens at a known time, or a condition that the bounded values it read keep
false) and none of its kept orders rests (a ``keep:`` rule whose condition is false would
cancel them). Its verdict holds until the book changes (the account's orders, positions and
settings: ``book_rev``, the simulator's change counters, read before the cycle), a candle of
an interval it reads closes, or the first of its gates opens.

:meth:`QuietCycles.holds` says, for the strategies due at a cycle, that every one of them is
quiet and nothing its verdict waits for happened since: the cycle would read, evaluate and
decide exactly what the last one did — the same statuses (so a runner journaling only changes
writes no evaluation row), no fire, no intent, no reconcile decision, no order. The runner then
only moves the strategies' next run times on (:meth:`~botkit.runner.cycle.Runner.run_cycle`):
no read, no evaluation, no plan, and no cycle row in the journal. The orders, fills, equity and
every evaluation, event and order row are those of the run without the skip
(``tests/runner/test_quiet_property.py`` compares them for random strategies and prices).

Only for a runner that journals evaluation changes (with ``all`` every cycle writes a row per
rule), whose controls cannot change between cycles (no halt or kill-switch file), and whose
book only this runner and the matching of its own orders move: the backtest's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from botkit.exchange.models import OpenOrder
from botkit.intents import Activity
from botkit.rules import Evaluation, RuleStatus, Strategy, parse_client_order_id
from botkit.rules.deps import Quiet, Recheck, quiet_until

__all__ = ["Envelope", "QuietCycles", "strategy_quiet"]


def strategy_quiet(
    strategy: Strategy,
    evaluation: Evaluation,
    activity: Activity | None = None,
    *,
    recheck: bool = False,
) -> Quiet | None:
    """Until when every rule of ``strategy`` keeps its status of ``evaluation`` (see
    :func:`~botkit.rules.deps.quiet_until`; ``activity``: the strategy's rule activity, for
    the cooldown and max_fires gates), or None when one of them may change."""
    verdict = Quiet()
    now_ms = evaluation.now_ms
    for rule, result in zip(strategy.rules, evaluation.results, strict=True):
        values: dict[str, Any] = {}
        if rule.input_names:
            by_display = dict(result.values)
            for key, display in rule.input_names:
                if display in by_display:
                    values[key] = by_display[display]
        done = activity.get(rule.name) if activity else None
        quiet = quiet_until(rule, result.status, values, done, now_ms, recheck=recheck)
        if quiet is None:
            return None
        verdict = verdict | quiet
    return verdict


@dataclass(frozen=True, slots=True)
class _Verdict:
    strategy: Strategy
    rev: Hashable
    at_ms: int
    book: bool
    intervals_ms: tuple[int, ...]
    until_ms: int | None
    rechecks: tuple[Recheck, ...]


@dataclass(frozen=True, slots=True)
class Envelope:
    """While it lasts, every cycle of the strategies it was asked for is skipped (see
    :meth:`QuietCycles.envelope`): a cycle at a time before ``until_ms`` (None: no time limit)
    while the book keeps its revision ``rev`` and, at that cycle's prices, every one of
    ``rechecks`` still finds its condition false (:meth:`QuietCycles.holds` evaluates them; the
    backtest passes stretches at once only without rechecks). The book is the caller's to keep
    (the simulator's quiet band)."""

    until_ms: int | None
    rev: Hashable
    rechecks: tuple[tuple[str, tuple[Recheck, ...]], ...]
    """Per symbol, the price rechecks of the verdicts (evaluated at each cycle's prices)."""


class QuietCycles:
    """The quiet verdicts of the strategies (see the module doc).

    ``book_rev()``: a value that changes whenever an order, a position or an account setting
    does (the simulator's ``(matcher.rev, settings_rev)``); ``open_orders()``: the open orders
    now (to see that no kept order of a quiet strategy rests); ``prices(symbol)``, when given:
    the :data:`~botkit.rules.deps.RECHECKED` values a cycle now would read for ``symbol`` (as
    the expression context reads them), so a condition false for a price is checked against
    the new price alone."""

    __slots__ = ("_book_rev", "_loud", "_open_orders", "_prices", "_verdicts", "skipped")

    def __init__(
        self,
        book_rev: Callable[[], Hashable],
        open_orders: Callable[[], Sequence[OpenOrder]],
        prices: Callable[[str], Mapping[str, Any]] | None = None,
    ) -> None:
        self._book_rev = book_rev
        self._open_orders = open_orders
        self._prices = prices
        self._verdicts: dict[str, _Verdict] = {}
        self._loud: str | None = None
        """The strategy found not quiet last: asked first next time."""
        self.skipped = 0
        """Cycles skipped so far."""

    def mark(self) -> Hashable:
        """The book's revision before a cycle runs (hand it to :meth:`observe`)."""
        return self._book_rev()

    def holds(self, due: Sequence[Strategy], now_ms: int) -> bool:
        """Whether a cycle of ``due`` at ``now_ms`` would provably change nothing."""
        verdicts = self._verdicts
        rev: Hashable = None
        for strategy in due:
            verdict = verdicts.get(strategy.name)
            if verdict is None or verdict.strategy is not strategy:
                return False
            if verdict.book:
                if rev is None:
                    rev = self._book_rev()
                if rev != verdict.rev:
                    return False
            if verdict.until_ms is not None and now_ms >= verdict.until_ms:
                return False
            at = verdict.at_ms
            for width in verdict.intervals_ms:
                if now_ms // width != at // width:
                    return False
            if verdict.rechecks and not self._still_false(strategy.symbol, verdict.rechecks):
                return False
        self.skipped += 1
        return True

    def envelope(self, strategies: Sequence[Strategy]) -> Envelope | None:
        """A read-only bound within which :meth:`holds` is true for any of ``strategies``
        (every strategy that may be due), or None when one of them has no verdict, or one that
        waits for the book sees it changed. Asks nothing of the verdicts' state beyond what
        :meth:`holds` reads, and changes nothing (``skipped`` is counted by :meth:`skip`)."""
        verdicts = self._verdicts
        rev: Hashable = None
        until: int | None = None
        rechecks: dict[str, tuple[Recheck, ...]] = {}
        for strategy in strategies:
            verdict = verdicts.get(strategy.name)
            if verdict is None or verdict.strategy is not strategy:
                return None
            if verdict.book:
                if rev is None:
                    rev = self._book_rev()
                if rev != verdict.rev:
                    return None
            bound = verdict.until_ms
            at = verdict.at_ms
            for width in verdict.intervals_ms:  # holds until the next close of this interval
                close = (at // width + 1) * width
                if bound is None or close < bound:
                    bound = close
            if bound is not None and (until is None or bound < until):
                until = bound
            if verdict.rechecks:
                symbol = strategy.symbol
                rechecks[symbol] = rechecks.get(symbol, ()) + verdict.rechecks
        if rev is None:
            rev = self._book_rev()
        return Envelope(until, rev, tuple(rechecks.items()))

    def skip(self, cycles: int) -> None:
        """Count ``cycles`` skipped within an envelope (as :meth:`holds` counts each)."""
        self.skipped += cycles

    def _still_false(self, symbol: str, rechecks: Sequence[Recheck]) -> bool:
        if self._prices is None:
            return False
        try:
            fresh = self._prices(symbol)
        except Exception:  # a price the cycle could not read either: let it run and say so
            return False
        return all(r.still_false(fresh) for r in rechecks)

    def observe(
        self,
        due: Sequence[Strategy],
        evaluations: Sequence[Evaluation],
        now_ms: int,
        rev: Hashable,
        failed: bool,
        activity_of: Callable[[Strategy], Activity] | None = None,
    ) -> None:
        """Take the verdicts of a cycle that ran at ``now_ms`` (``rev``: :meth:`mark` before
        it; ``failed``: its read failed; ``activity_of``: a strategy's rule activity now);
        strategies it did not evaluate lose theirs. A cycle is skipped only when every due
        strategy is quiet, so the first one that is not ends the asking (the rest get no
        verdict: the next cycle runs and asks again); the one that was not quiet last time is
        asked first, so a strategy that never is (a kept ladder) costs one question a cycle."""
        verdicts = self._verdicts
        for strategy in due:
            verdicts.pop(strategy.name, None)
        if failed:
            return
        by_name = {s.name: s for s in due}
        open_orders: Sequence[OpenOrder] | None = None
        loud = self._loud
        for evaluation in sorted(evaluations, key=lambda e: e.strategy != loud):
            found = by_name.get(evaluation.strategy)
            if found is None or found.version != evaluation.version:
                continue
            strategy = found
            activity = None
            if activity_of is not None and any(
                r.status in _TIMED for r in evaluation.results
            ):  # fmt: skip
                activity = activity_of(strategy)
            quiet = strategy_quiet(strategy, evaluation, activity, recheck=self._prices is not None)
            if quiet is not None:
                if open_orders is None:
                    open_orders = self._open_orders()
                if _kept_orders_rest(strategy, open_orders):
                    quiet = None
            if quiet is None:
                self._loud = strategy.name
                return
            verdicts[strategy.name] = _Verdict(
                strategy,
                rev,
                now_ms,
                quiet.book,
                tuple(sorted(quiet.intervals_ms)),
                quiet.until_ms,
                quiet.rechecks,
            )


_TIMED = (RuleStatus.COOLDOWN, RuleStatus.MAX_FIRES)
"""Statuses that hold until a time the rule's activity says."""


def _kept_orders_rest(strategy: Strategy, orders: Sequence[OpenOrder]) -> bool:
    """Whether an order of one of the strategy's ``keep:`` rules (or any kept order of it)
    rests: the reconcile would act on it."""
    kept_tags = {rule.tag for rule in strategy.rules if rule.keep is not None}
    for order in orders:
        parsed = parse_client_order_id(order.clOrdId) if order.clOrdId else None
        if parsed is None or parsed.strategy_tag != strategy.tag:
            continue
        if parsed.kept or parsed.rule_tag in kept_tags:
            return True
    return False
