"""Quiet cycles: skipping a cycle that provably changes nothing (the backtest's replay).

After each cycle the runner ran, :meth:`QuietCycles.observe` asks
:func:`~botkit.rules.deps.quiet_until` of every rule of every strategy the cycle evaluated:
until when its status cannot change. A strategy is **quiet** when every one of its rules is
(each gated by a fixed ``enabled: false``, a resting order under ``keep_open``, a cooldown or
``max_fires`` that opens at a known time, or a condition that the bounded values it read keep
false, or false for a price or an account figure read again at each cycle: ``Recheck``) and
none of its kept orders rests (a ``keep:`` rule whose condition is false would cancel them) —
but a ``keep:`` rule that declared its orders is quiet, its orders resting included, while its
:class:`KeepCheck` says the same reconcile over the figures of the cycle would keep every one.
Its verdict holds until the book changes (the account's orders, positions and settings:
``book_rev``, the simulator's change counters, read before the cycle — or after it, when every
book value its rules read is the same after the cycle as before: its own orders moved nothing
they read), a candle of an interval it reads closes, or the first of its gates opens.

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

import functools
import operator
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from botkit.exchange.models import OpenOrder
from botkit.frozen import quick_init
from botkit.intents import Activity, KeepIntent
from botkit.pipeline.desired import FillFact, keeps_all, reconcile
from botkit.rules import (
    Evaluation,
    ParsedOrderId,
    Rule,
    RuleStatus,
    Strategy,
    parse_client_order_id,
)
from botkit.rules.actions import build_intents
from botkit.rules.context import Ctx
from botkit.rules.deps import (
    Input,
    Quiet,
    Recheck,
    fires_window_ms,
    input_of,
    quiet_until,
    rechecked,
)
from botkit.rules.runtime import Env, env_for
from botkit.rules.series import INTERVALS
from botkit.snapshot import Snapshot

__all__ = ["Envelope", "KeepCheck", "QuietCycles", "strategy_quiet"]


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
    found = _strategy_verdict(strategy, evaluation, activity, recheck=recheck, keeps=False)
    return None if found is None else found[0]


def _strategy_verdict(
    strategy: Strategy,
    evaluation: Evaluation,
    activity: Activity | None,
    *,
    recheck: bool,
    keeps: bool,
) -> tuple[Quiet, tuple[KeepCheck, ...]] | None:
    """:func:`strategy_quiet`, and with ``keeps`` a :class:`KeepCheck` for each ``keep:`` rule
    that declared its orders (quiet while the check says the reconcile would keep them all)."""
    verdict: Quiet | None = None  # the first rule's own, then the union (as Quiet() | each)
    checks: list[KeepCheck] = []
    for rule, result in zip(strategy.rules, evaluation.results, strict=True):
        values: dict[str, Any] = {}
        if rule.input_names:
            by_display = dict(result.values)
            for key, display in rule.input_names:
                if display in by_display:
                    values[key] = by_display[display]
        if keeps and result.status is RuleStatus.DECLARED and rule.keep is not None:
            check = KeepCheck.of(strategy, rule, values)
            quiet: Quiet | None = check.quiet
            checks.append(check)
        else:
            done = activity.get(rule.name) if activity else None
            quiet = quiet_until(
                rule, result.status, values, done, evaluation.now_ms, recheck=recheck
            )
        if quiet is None:
            return None
        verdict = quiet if verdict is None else verdict | quiet
    return (Quiet() if verdict is None else verdict), tuple(checks)


def _no_fill(_cl_ord_id: str) -> FillFact | None:
    """The fill lookup of a check: a declared rung with nothing resting is placed or waits
    for its refill whatever its last order's fill says (a change either way), so no fill is
    ever looked up for a check that finds nothing to do."""
    return None


class KeepCheck:
    """A ``keep:`` rule that declared its orders, checked again at a later cycle: its condition
    over the bounded values it read (``known``: the verdict's book and candle terms keep them)
    and the fresh :data:`~botkit.rules.deps.RECHECKED` figures, the orders it then declares
    (the same :func:`~botkit.rules.actions.build_intents`), and the decisions of the same
    :func:`~botkit.pipeline.desired.reconcile` over the rule's resting orders, its orders sent
    and the time of the cycle. Quiet when the condition holds and every decision is *keep*:
    the cycle would declare again, keep every rung and journal nothing; a rung that drifted past
    its tolerance once its ``min_rest`` is over, a rung gone, a value that fails or is not
    known, is a cycle to run."""

    __slots__ = ("known", "quiet", "rule", "strategy")

    def __init__(self, strategy: Strategy, rule: Rule, known: dict[str, Any], quiet: Quiet) -> None:
        self.strategy = strategy
        self.rule = rule
        self.known = known
        self.quiet = quiet

    @classmethod
    def of(cls, strategy: Strategy, rule: Rule, values: dict[str, Any]) -> KeepCheck:
        """The check of ``rule`` over the bounded ones of ``values`` (key → value read)."""
        known: dict[str, Any] = {}
        intervals: set[str] = set()
        for key, value in values.items():
            kind, words = input_of(key)
            if kind.bounded:
                known[key] = value
                intervals |= words
        # the resting orders the reconcile compares with move only with the book
        quiet = Quiet(True, frozenset(INTERVALS[w] for w in intervals), orders=True)
        return cls(strategy, rule, known, quiet)

    def holds(
        self,
        env: Env,
        now_ms: int,
        activity: Callable[[], Activity],
        orders: Sequence[OpenOrder],
    ) -> bool:
        """Whether a cycle at ``now_ms`` would keep every order of the rule (``env``: the
        environment a cycle's evaluation would read now; ``activity()``: the strategy's now,
        asked only when the orders the rule sent decide; ``orders``: the open orders now).
        :func:`~botkit.pipeline.desired.keeps_all` answers first; the full reconcile decides
        only what it leaves open."""
        strategy, rule = self.strategy, self.rule
        names = _FreshEnv(self.known, env)
        try:
            when = rule.when
            if when is not None:
                holds = when.const if when.const is not None else when.fn(names)
                if not holds:
                    return False
            slot = now_ms // strategy.period_ms
            intents = build_intents(strategy, rule, names, env.ctx, slot, {})
        except Exception:  # an unknown value, a failing expression: the cycle decides
            return False
        intent = next((i for i in intents if isinstance(i, KeepIntent)), None)
        if intent is None:
            return False
        tag, rule_tag, symbol = strategy.tag, rule.tag, strategy.symbol
        resting = []
        for order in orders:
            parsed = parse_client_order_id(order.clOrdId)
            if (
                parsed is not None
                and parsed.strategy_tag == tag
                and parsed.rule_tag == rule_tag
                and order.symbol == symbol
            ):
                resting.append(order)
        instrument = env.ctx.snapshot.instruments.get(symbol)
        known = keeps_all(intent.orders, intent.policy, resting, now_ms, instrument)
        if known is not None:
            return known
        done = activity().get(rule.name)
        diff = reconcile(
            strategy=strategy.name,
            rule=rule.name,
            symbol=symbol,
            declared=intent.orders,
            policy=intent.policy,
            resting=resting,
            sent=done.orders if done is not None else (),
            now_ms=now_ms,
            slot=slot,
            instrument=instrument,
            filled=_no_fill,
            explain=False,
        )
        return not diff.changes


class _NotKnown(Exception):
    """A value a check does not know (neither bounded and read before, nor rechecked)."""


class _FreshEnv(Env):
    """An :class:`~botkit.rules.runtime.Env` holding a verdict's bounded values and reading
    each :data:`~botkit.rules.deps.RECHECKED` value from a cycle's environment now; any other
    read raises (an unknown value: the cycle decides)."""

    __slots__ = ("_fresh",)

    def __init__(self, known: dict[str, Any], fresh: Env) -> None:
        super().__init__(known)
        self.ctx = fresh.ctx
        self.resolvers = fresh.resolvers
        self._fresh = fresh

    def __missing__(self, key: str) -> Any:
        if not rechecked(key):
            raise _NotKnown(key)
        value = self._fresh[key]
        self[key] = value
        return value


@quick_init
@dataclass(frozen=True, slots=True)
class _Verdict:
    strategy: Strategy
    rev: Hashable
    rev_kind: int
    """Which revision ``rev`` is: the whole book's (0) or the positions' (1)."""
    at_ms: int
    book: bool
    intervals_ms: tuple[int, ...]
    until_ms: int | None
    rechecks: tuple[Recheck, ...]
    keeps: tuple[KeepCheck, ...] = ()


@dataclass(frozen=True, slots=True)
class Envelope:
    """While it lasts, every cycle of the strategies it was asked for is skipped (see
    :meth:`QuietCycles.envelope`): a cycle at a time before ``until_ms`` (None: no time limit)
    while the book stays as it is and, at that cycle's prices, every one of ``rechecks`` still
    finds its condition false and every keep check holds (:meth:`QuietCycles.holds` makes
    them; the backtest passes stretches at once only without either, and steps through them
    a candle at a time otherwise). The book is the caller's to keep (the simulator's quiet
    band)."""

    until_ms: int | None
    rechecks: tuple[tuple[str, tuple[Recheck, ...]], ...]
    """Per symbol, the price rechecks of the verdicts (evaluated at each cycle's prices)."""
    keeps: bool = False
    """Whether a verdict is a ``keep:`` rule's :class:`KeepCheck` (made at each cycle, as the
    rechecks)."""


class QuietCycles:
    """The quiet verdicts of the strategies (see the module doc).

    ``book_rev()``: a value that changes whenever an order, a position or an account setting
    does (the simulator's ``(matcher.rev, settings_rev)``); ``open_orders()``: the open orders
    now (to see that no kept order of a quiet strategy rests); ``reads(now_ms, symbols)``, when
    given: the snapshot a cycle at ``now_ms`` of strategies trading ``symbols`` would read (the
    runner's reader: each part read when first asked for), from which the
    :data:`~botkit.rules.deps.RECHECKED` figures are read through each strategy's own
    resolvers, as its evaluation would, so that a condition false for a price or an account
    figure is checked against the new figures alone, and a ``keep:`` rule that declared its
    orders is quiet while its :class:`KeepCheck` holds (without ``reads``, neither: only
    verdicts over bounded values)."""

    __slots__ = (
        "_activity_of",
        "_book_rev",
        "_due_symbols",
        "_loud",
        "_open_orders",
        "_position_rev",
        "_reads",
        "_reads_fires",
        "_verdicts",
        "skipped",
    )

    def __init__(
        self,
        book_rev: Callable[[], Hashable],
        open_orders: Callable[[], Sequence[OpenOrder]],
        *,
        reads: Callable[[int, Collection[str]], Snapshot] | None = None,
        position_rev: Callable[[], Hashable] | None = None,
    ) -> None:
        self._book_rev = book_rev
        self._position_rev = position_rev
        self._open_orders = open_orders
        self._reads = reads
        self._activity_of: Callable[[Strategy], Activity] | None = None
        """The runner's activity of a strategy (given with each cycle observed)."""
        self._verdicts: dict[str, _Verdict] = {}
        self._reads_fires: dict[tuple[str, str], bool] = {}
        """Whether a rule of the strategy (name, version) reads ``rule.fires('W')``."""
        self._due_symbols: tuple[tuple[Strategy, ...], frozenset[str]] = ((), frozenset())
        self._loud: str | None = None
        """The strategy found not quiet last: asked first next time."""
        self.skipped = 0
        """Cycles skipped so far."""

    def mark(self) -> Hashable:
        """The book's revision before a cycle runs (hand it to :meth:`observe`): the whole
        book's, and the positions' alone when ``position_rev`` was given."""
        return self._revs()

    def _revs(self) -> _Revs:
        position_rev = self._position_rev
        return _Revs(self._book_rev(), None if position_rev is None else position_rev())

    def holds(self, due: Sequence[Strategy], now_ms: int) -> bool:
        """Whether a cycle of ``due`` at ``now_ms`` would provably change nothing."""
        verdicts = self._verdicts
        revs: _Revs | None = None
        fresh: _Now | None = None
        for strategy in due:
            verdict = verdicts.get(strategy.name)
            if verdict is None or verdict.strategy is not strategy:
                return False
            if verdict.book:
                if revs is None:
                    revs = self._revs()
                if revs.of(verdict.rev_kind) != verdict.rev:
                    return False
            if verdict.until_ms is not None and now_ms >= verdict.until_ms:
                return False
            at = verdict.at_ms
            for width in verdict.intervals_ms:
                if now_ms // width != at // width:
                    return False
            if verdict.rechecks or verdict.keeps:
                if fresh is None:
                    fresh = _Now(due, now_ms)
                if not self._still_quiet(strategy, verdict, fresh):
                    return False
        self.skipped += 1
        return True

    def envelope(self, strategies: Sequence[Strategy]) -> Envelope | None:
        """A read-only bound within which :meth:`holds` is true for any of ``strategies``
        (every strategy that may be due), or None when one of them has no verdict, or one that
        waits for the book sees it changed. Asks nothing of the verdicts' state beyond what
        :meth:`holds` reads, and changes nothing (``skipped`` is counted by :meth:`skip`)."""
        verdicts = self._verdicts
        revs: _Revs | None = None
        until: int | None = None
        rechecks: dict[str, tuple[Recheck, ...]] = {}
        keeps = False
        for strategy in strategies:
            verdict = verdicts.get(strategy.name)
            if verdict is None or verdict.strategy is not strategy:
                return None
            keeps = keeps or bool(verdict.keeps)  # made at each cycle's figures, as a recheck
            if verdict.book:
                if revs is None:
                    revs = self._revs()
                if revs.of(verdict.rev_kind) != verdict.rev:
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
        return Envelope(until, tuple(rechecks.items()), keeps)

    def skip(self, cycles: int) -> None:
        """Count ``cycles`` skipped within an envelope (as :meth:`holds` counts each)."""
        self.skipped += cycles

    def _still_quiet(self, strategy: Strategy, verdict: _Verdict, now: _Now) -> bool:
        """The verdict's rechecks and keep checks over what a cycle would read now."""
        reads = self._reads
        if reads is None:  # no verdict of this kind is taken without it
            return False
        try:
            snapshot = now.snapshot
            if snapshot is None:  # one read of the account for every strategy asked
                snapshot = now.snapshot = reads(now.now_ms, self._symbols_of(now.due))
            ctx = Ctx(
                snapshot, strategy.name, strategy.symbol, _NO_ACTIVITY, now.now_ms,
                strategy.mgn_mode,
            )  # fmt: skip
            env = env_for(ctx, strategy.resolvers)
            if not all(r.still_false(env) for r in verdict.rechecks):
                return False
            if not verdict.keeps:
                return True
            activity_of = self._activity_of
            if activity_of is None:
                return False
            activity = functools.partial(activity_of, strategy)
            orders = env.ctx.snapshot.open_orders
            return all(k.holds(env, now.now_ms, activity, orders) for k in verdict.keeps)
        except Exception:  # a read the cycle could not make either: let it run and say so
            return False

    def _symbols_of(self, due: Sequence[Strategy]) -> frozenset[str]:
        """The symbols a cycle of ``due`` reads (their price bands), kept while the same
        (loaded) strategies are due."""
        last, symbols = self._due_symbols
        if len(last) != len(due) or not all(map(operator.is_, last, due)):
            symbols = frozenset(sym for s in due for sym in s.symbols)
            self._due_symbols = (tuple(due), symbols)
        return symbols

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
        asked first, so a strategy that never is costs one question a cycle."""
        verdicts = self._verdicts
        for strategy in due:
            verdicts.pop(strategy.name, None)
        if failed:
            return
        if activity_of is not None:
            self._activity_of = activity_of
        keeps = self._reads is not None and activity_of is not None
        by_name = {s.name: s for s in due}
        open_orders: list[tuple[ParsedOrderId, OpenOrder]] | None = None
        after: _Revs | None = None
        read: dict[tuple[str, ...], Snapshot] = {}  # the book after the cycle, read once
        loud = self._loud
        for evaluation in sorted(evaluations, key=lambda e: e.strategy != loud):
            found = by_name.get(evaluation.strategy)
            if found is None or found.version != evaluation.version:
                continue
            strategy = found
            activity = None
            if activity_of is not None and (
                any(r.status in _TIMED for r in evaluation.results) or self._fires_read(strategy)
            ):
                activity = activity_of(strategy)
            got = _strategy_verdict(
                strategy,
                evaluation,
                activity,
                recheck=self._reads is not None,
                keeps=keeps,
            )
            quiet = None if got is None else got[0]
            checks = () if got is None else got[1]
            if quiet is not None:
                if open_orders is None:  # parsed once for every strategy asked
                    open_orders = _parsed(self._open_orders())
                if _kept_orders_rest(strategy, open_orders, {k.rule.tag for k in checks}):
                    quiet = None
            if quiet is None:
                self._loud = strategy.name
                return
            # a status that no resting order decides waits only for a fill or a setting (the
            # positions' revision), not for the orders this very cycle placed or cancelled
            kind, held = _WHOLE, rev
            if isinstance(rev, _Revs):
                held = rev.whole
                if not quiet.orders and rev.positions is not None:
                    kind, held = _POSITIONS, rev.positions
                if quiet.book:
                    if after is None:
                        after = self._revs()
                    moved = after.of(kind)
                    if moved != held and self._same_after(strategy, evaluation, now_ms, read):
                        held = moved
            verdicts[strategy.name] = _Verdict(
                strategy,
                held,
                kind,
                now_ms,
                quiet.book,
                tuple(sorted(quiet.intervals_ms)),
                quiet.until_ms,
                quiet.rechecks,
                checks,
            )

    def _fires_read(self, strategy: Strategy) -> bool:
        """Whether a rule of ``strategy`` reads ``rule.fires('W')``, which its verdict bounds
        with the rule's activity (worked out once per version of the strategy)."""
        key = (strategy.name, strategy.version)
        reads = self._reads_fires.get(key)
        if reads is None:
            reads = self._reads_fires[key] = any(
                fires_window_ms(name) is not None
                for rule in strategy.rules
                for name, _ in rule.input_names
            )
        return reads

    def _same_after(
        self,
        strategy: Strategy,
        evaluation: Evaluation,
        now_ms: int,
        read: dict[tuple[str, ...], Snapshot],
    ) -> bool:
        """Whether every ``book`` value the rules of ``evaluation`` read (before the cycle
        acted) is the same, value and representation, after it: then the verdict, a function
        of those values, holds for the book as the cycle left it, and waits for the book's
        revision after the cycle instead of before (the cycle's own orders, placed or
        cancelled, or a fill they made, no longer wake the next cycle when the strategy's rules
        read none of what they moved). A ``keep_open`` status, which waits on the rule's
        orders resting without reading a value, never does; nor does a read that fails.
        ``read``: the snapshots read after the cycle so far, by symbols (one observe reads the
        book after the cycle once for the strategies on the same symbols)."""
        reads = self._reads
        if reads is None:
            return False
        book: dict[str, Any] = {}
        for rule, result in zip(strategy.rules, evaluation.results, strict=True):
            if result.status is RuleStatus.KEEP_OPEN:
                return False
            if not rule.input_names:
                continue
            by_display = dict(result.values)
            for key, display in rule.input_names:
                if display in by_display and input_of(key)[0] is Input.BOOK:
                    book[key] = by_display[display]
        if not book:
            return True
        try:
            symbols = strategy.symbols
            snapshot = read.get(symbols)
            if snapshot is None:
                snapshot = read[symbols] = reads(now_ms, symbols)
            ctx = Ctx(
                snapshot, strategy.name, strategy.symbol, _NO_ACTIVITY, now_ms, strategy.mgn_mode
            )  # a book value reads no rule activity (a ``rule.*`` value that does is a time one)
            env = env_for(ctx, strategy.resolvers)
            return all(_same(env[key], value) for key, value in book.items())
        except Exception:  # a read the cycle could not make either: wait for the book
            return False


def _same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same value with the same representation (``Decimal("1.0")``
    equals ``Decimal("1")`` but prints, and so journals, otherwise)."""
    return type(a) is type(b) and a == b and repr(a) == repr(b)


class _Now:
    """What one :meth:`QuietCycles.holds` reads, once: the snapshot a cycle of the due
    strategies would read now."""

    __slots__ = ("due", "now_ms", "snapshot")

    def __init__(self, due: Sequence[Strategy], now_ms: int) -> None:
        self.due = due
        self.now_ms = now_ms
        self.snapshot: Snapshot | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class _Revs:
    """What :meth:`QuietCycles.mark` gives: the whole book's revision and the positions' (None
    when not known)."""

    whole: Hashable
    positions: Hashable

    def of(self, kind: int) -> Hashable:
        """The revision a verdict of ``kind`` (:data:`_WHOLE` or :data:`_POSITIONS`) holds."""
        return self.whole if kind == _WHOLE else self.positions


_WHOLE, _POSITIONS = 0, 1
"""Which of :class:`_Revs` a verdict holds."""

_NO_ACTIVITY: Activity = {}
"""The activity the checks' context holds: no rechecked value reads a rule's activity (a
``rule.*`` value is a time input, never rechecked). Never written."""


_TIMED = (RuleStatus.COOLDOWN, RuleStatus.MAX_FIRES)
"""Statuses that hold until a time the rule's activity says."""


def _parsed(orders: Sequence[OpenOrder]) -> list[tuple[ParsedOrderId, OpenOrder]]:
    """The orders whose client id botkit made, with its parts (the others belong to no
    strategy)."""
    out = []
    for order in orders:
        parsed = parse_client_order_id(order.clOrdId) if order.clOrdId else None
        if parsed is not None:
            out.append((parsed, order))
    return out


def _kept_orders_rest(
    strategy: Strategy,
    orders: Sequence[tuple[ParsedOrderId, OpenOrder]],
    checked: Collection[str] = (),
) -> bool:
    """Whether an order of one of the strategy's ``keep:`` rules (or any kept order of it)
    rests that the reconcile would act on: one of a rule whose :class:`KeepCheck` (rule tags
    ``checked``) does not look at it (another symbol's) or of any other rule. ``orders``: the
    open orders with their ids' parts (:func:`_parsed`)."""
    tag = strategy.tag
    kept_tags: set[str] | None = None
    symbol = strategy.symbol
    for parsed, order in orders:
        if parsed.strategy_tag != tag:
            continue
        if kept_tags is None:
            kept_tags = {rule.tag for rule in strategy.rules if rule.keep is not None}
        if parsed.kept or parsed.rule_tag in kept_tags:
            if parsed.rule_tag in checked and order.symbol == symbol:
                continue
            return True
    return False
