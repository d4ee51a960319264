"""Keeping declared orders: each cycle, every ``keep:`` rule of each due strategy is reconciled.

The rules say what should rest (:class:`~botkit.intents.KeepIntent`, or nothing while the
condition is false); :func:`diffs` asks the pure :func:`~botkit.pipeline.desired.reconcile` what
to keep, place, cancel and replace against the open orders the client order ids attribute to
each rule; :func:`apply` sends the cancels (before anything is placed, so a replacement never
stacks on the order it replaces: a replacement whose cancel did not go through waits for the
next cycle), journals every decision with its reason, and hands back the orders to place, which
then go through the same plan, guards, batches and executor as every other order (an ambiguous
outcome is looked up there, as always).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from botkit.exchange.models import OpenOrder
from botkit.intents import Activity, KeepIntent, OrderIntent
from botkit.pipeline.desired import Action, Decision, FillFact, RuleDiff, reconcile
from botkit.ports.journal import EventLog
from botkit.rules import Evaluation, RuleStatus, Strategy
from botkit.rules.ids import ParsedOrderId, parse_client_order_id
from botkit.runner.execution import Execution, SideEffect
from botkit.snapshot import Part, Snapshot

__all__ = ["EVENT", "FirstLook", "apply", "diffs", "has_kept_rules"]

EVENT = "desired"
"""The journal's event kind of a reconcile decision."""

_REMOVED = "(removed rule)"


def has_kept_rules(strategy: Strategy) -> bool:
    return any(rule.keep is not None for rule in strategy.rules)


class FirstLook:
    """Says once per loaded version of a strategy that it has not been looked at yet."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, strategy: Strategy) -> bool:
        if self._seen.get(strategy.name) == strategy.version:
            return False
        self._seen[strategy.name] = strategy.version
        return True


def _fills_of(snapshot: Snapshot) -> Callable[[str], FillFact | None]:
    """Finds the fill of an order in the snapshot's fills (read when first asked)."""
    found: dict[str, FillFact] | None = None

    def filled(cl_ord_id: str) -> FillFact | None:
        nonlocal found
        if found is None:
            found = {}
            for fill in snapshot.fills:
                if not fill.clOrdId:
                    continue
                time_ms = fill.cTime or fill.uTime or 0
                known = found.get(fill.clOrdId)
                if known is None or time_ms > known.time_ms:
                    found[fill.clOrdId] = FillFact(time_ms, fill.px)
        return found.get(cl_ord_id)

    return filled


class _Owned:
    """The snapshot's open orders with a botkit client order id, by strategy tag, each id
    parsed once (in the snapshot's order; read when first asked): each strategy goes through
    its own orders instead of every open order."""

    __slots__ = ("_by_tag", "_snapshot")

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._by_tag: dict[str, list[tuple[ParsedOrderId, OpenOrder]]] | None = None

    def of(self, tag: str) -> Sequence[tuple[ParsedOrderId, OpenOrder]]:
        by_tag = self._by_tag
        if by_tag is None:
            by_tag = self._by_tag = {}
            for order in self._snapshot.open_orders:
                parsed = parse_client_order_id(order.clOrdId)
                if parsed is not None:
                    by_tag.setdefault(parsed.strategy_tag, []).append((parsed, order))
        return by_tag.get(tag, ())


def diffs(
    done: Sequence[tuple[Strategy, Evaluation]],
    snapshot: Snapshot,
    activity_of: Callable[[Strategy], Activity],
    first_look: Callable[[Strategy], bool] = lambda _s: False,
) -> list[RuleDiff]:
    """What each ``keep:`` rule of the evaluated strategies needs done now (reads the open
    orders, and the fills when an order of a rung is gone; a failed read raises
    :class:`~botkit.errors.ReadFailed`).

    A strategy without ``keep:`` rules is looked at when its open orders were read anyway, or
    when ``first_look`` says so (the first cycle of each loaded version): kept orders of rules
    edited out of the file are cancelled then."""
    out: list[RuleDiff] = []
    filled: Callable[[str], FillFact | None] | None = None
    owned = _Owned(snapshot)
    for strategy, evaluation in done:
        if (
            not has_kept_rules(strategy)
            and not first_look(strategy)
            and not _has_kept_orders(strategy, snapshot, owned)
        ):
            continue
        if filled is None:
            filled = _fills_of(snapshot)
        activity = activity_of(strategy)
        by_rule: dict[str, list[OpenOrder]] = {}
        kept_orders: list[tuple[str, OpenOrder]] = []
        for parsed, order in owned.of(strategy.tag):
            if order.symbol == strategy.symbol:
                by_rule.setdefault(parsed.rule_tag, []).append(order)
                if parsed.kept:
                    kept_orders.append((parsed.rule_tag, order))
        kept_tags = {rule.tag for rule in strategy.rules if rule.keep is not None}
        for rule in strategy.rules:
            if rule.keep is None:
                continue
            result = evaluation.result(rule.name)
            if result.status is RuleStatus.ERROR or result.status is RuleStatus.WARMING_UP:
                why = "failed" if result.status is RuleStatus.ERROR else "is warming up"
                out.append(
                    RuleDiff(
                        strategy.name,
                        rule.name,
                        held=f"its evaluation {why}: its orders are left as they rest",
                    )
                )
                continue
            intent = next((i for i in result.intents if isinstance(i, KeepIntent)), None)
            resting = by_rule.get(rule.tag, [])
            rule_activity = activity.get(rule.name)
            out.append(
                reconcile(
                    strategy=strategy.name,
                    rule=rule.name,
                    symbol=strategy.symbol,
                    declared=intent.orders if intent is not None else (),
                    policy=intent.policy if intent is not None else rule.keep,
                    resting=resting,
                    sent=rule_activity.orders if rule_activity is not None else (),
                    now_ms=evaluation.now_ms,
                    slot=evaluation.slot,
                    instrument=snapshot.instruments.get(strategy.symbol),
                    filled=filled,
                    inputs=intent.inputs if intent is not None else None,
                )
            )
        orphans = [order for tag, order in kept_orders if tag not in kept_tags]
        if orphans:
            out.append(
                RuleDiff(
                    strategy.name,
                    _REMOVED,
                    tuple(
                        Decision(
                            Action.CANCEL,
                            None,
                            "its keep: rule is no longer in the strategy",
                            order,
                        )
                        for order in orphans
                    ),
                )
            )
    return out


def _has_kept_orders(strategy: Strategy, snapshot: Snapshot, owned: _Owned) -> bool:
    """Whether a strategy without keep: rules still has kept orders resting (its rules were
    edited away): only asked when the open orders were read anyway."""
    if not snapshot.fetched(Part.OPEN_ORDERS):
        return False
    return any(parsed.kept for parsed, _order in owned.of(strategy.tag))


def apply(
    found: Sequence[RuleDiff],
    *,
    execution: Execution,
    journal: EventLog,
    cycle_id: int,
    halt: str | None,
) -> tuple[list[OrderIntent], list[SideEffect], set[str]]:
    """Send the cancels, journal every decision; the orders to place, the cancels' effects and
    the ids of the orders cancelled (no longer resting for the plan's guards)."""
    places: list[OrderIntent] = []
    effects: list[SideEffect] = []
    cancelled: set[str] = set()
    prefix = "would " if execution.dry else ""
    for diff in found:
        cancels: Sequence[OpenOrder] = diff.cancels
        cancel_ok = True
        if cancels:
            if halt is not None:
                effect = SideEffect(
                    diff.strategy,
                    diff.rule,
                    "cancel",
                    False,
                    f"cancel {len(cancels)} order(s) not sent: {halt}",
                )
                journal.record_event(
                    "halt",
                    f"{diff.strategy}/{diff.rule}: {effect.detail}",
                    cycle_id=cycle_id,
                    strategy=diff.strategy,
                    rule=diff.rule,
                )
                cancel_ok = False
            else:
                effect = execution.cancel(diff.strategy, diff.rule, cancels, cycle_id)
                cancel_ok = effect.ok
                if effect.ok:
                    cancelled.update(o.clOrdId for o in cancels)
            effects.append(effect)
        changes = diff.changes
        if changes:
            journal.record_event(
                EVENT,
                f"{prefix}{diff.summary()}",
                cycle_id=cycle_id,
                strategy=diff.strategy,
                rule=diff.rule,
            )
        for decision in changes:
            _journal(journal, diff, decision, cycle_id, prefix, cancel_ok)
            if decision.intent is None:
                continue
            if decision.action is Action.REPLACE and not cancel_ok:
                continue
            places.append(decision.intent)
    return places, effects, cancelled


_VERBS = {Action.PLACE: "place", Action.CANCEL: "cancel", Action.WAIT: "wait"}


def _journal(
    journal: EventLog,
    diff: RuleDiff,
    decision: Decision,
    cycle_id: int,
    prefix: str,
    cancel_ok: bool,
) -> None:
    who = f"{diff.strategy}/{diff.rule}"
    rung = f"rung {decision.rung} " if decision.rung is not None else ""
    old = decision.resting.clOrdId if decision.resting is not None else ""
    new = decision.intent.cl_ord_id if decision.intent is not None else ""
    reason = decision.reason
    if decision.action is Action.REPLACE:
        held = "" if cancel_ok else " — held: the cancel did not go through, next cycle decides"
        journal.record_event(
            EVENT,
            f"{who}: {prefix}replace {rung}{old} by {new}: {reason}{held}",
            cl_ord_id=old,
            cycle_id=cycle_id,
            strategy=diff.strategy,
            rule=diff.rule,
        )
        if cancel_ok:
            journal.record_event(
                EVENT,
                f"{who}: {prefix}place {rung}{new}, replacing {old}: {reason}",
                cl_ord_id=new,
                cycle_id=cycle_id,
                strategy=diff.strategy,
                rule=diff.rule,
            )
        return
    verb = _VERBS.get(decision.action) or decision.action.value
    journal.record_event(
        EVENT,
        f"{who}: {prefix}{verb} {rung}{old or new}".rstrip() + f": {reason}",
        cl_ord_id=old or new,
        cycle_id=cycle_id,
        strategy=diff.strategy,
        rule=diff.rule,
    )
