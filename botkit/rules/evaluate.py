"""Pure evaluation: a strategy, a snapshot, the journal's memory and the time in; intents out.

For each rule, in file order: the gates of :mod:`~botkit.rules.firing`, then the condition,
then the actions. Nothing raises: an expression that fails at run time (division by zero, a
missing price) makes that rule's result an ``error`` naming the rule and the expression, and
the other rules go on. Each result lists the inputs the rule saw (name → decimal string).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from botkit.intents import Activity, Intent
from botkit.rules.actions import ActionError, build_intents
from botkit.rules.context import ContextError, Ctx
from botkit.rules.firing import RuleStatus, gate
from botkit.rules.model import Strategy
from botkit.rules.runtime import EvalError, env_for, evaluator
from botkit.snapshot import Snapshot

__all__ = ["Evaluation", "RuleResult", "RuleStatus", "evaluate"]


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule's outcome: fired (with intents) or why not, and the values it read."""

    rule: str
    status: RuleStatus
    reason: str = ""
    intents: tuple[Intent, ...] = ()
    values: tuple[tuple[str, Any], ...] = field(default=(), repr=False)
    """(name as written, value) of every context value the rule read; see ``inputs``."""

    @property
    def fired(self) -> bool:
        return self.status is RuleStatus.FIRED

    @property
    def inputs(self) -> dict[str, str]:
        """The inputs the rule saw, name → decimal string (``true``/``false`` for booleans)."""
        return {name: _text(value) for name, value in self.values}


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The outcome of one evaluation of one strategy."""

    strategy: str
    version: str
    slot: int
    now_ms: int
    results: tuple[RuleResult, ...]

    @property
    def intents(self) -> tuple[Intent, ...]:
        """Every intent of every fired rule, in rule order then leg order."""
        return tuple(i for r in self.results for i in r.intents)

    @property
    def fired(self) -> tuple[str, ...]:
        return tuple(r.rule for r in self.results if r.fired)

    @property
    def errors(self) -> tuple[RuleResult, ...]:
        return tuple(r for r in self.results if r.status is RuleStatus.ERROR)

    def result(self, rule: str) -> RuleResult:
        for r in self.results:
            if r.rule == rule:
                return r
        raise KeyError(rule)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f") if value.is_finite() else str(value)
    return str(value)


def evaluate(strategy: Strategy, snapshot: Snapshot, activity: Activity, now_ms: int) -> Evaluation:
    """Evaluate every rule of ``strategy`` at ``now_ms`` (exchange time). Never raises for a
    problem of the strategy or the data: such a rule's result is an ``error``."""
    slot = now_ms // strategy.period_ms
    ctx = Ctx(snapshot, strategy.name, strategy.symbol, activity, now_ms, strategy.mgn_mode)
    env = env_for(ctx, strategy.resolvers)
    ev = evaluator()
    results: list[RuleResult] = []
    for rule in strategy.rules:
        if rule.gated or not strategy.enabled or (activity and rule.name in activity):
            blocked = gate(
                rule,
                activity.get(rule.name),
                now_ms=now_ms,
                period_ms=strategy.period_ms,
                open_orders=ctx.open_by_rule().get(rule.tag, 0) if rule.keep_open else 0,
                strategy_enabled=strategy.enabled,
            )
            if blocked is not None:
                results.append(RuleResult(rule.name, blocked[0], blocked[1]))
                continue
        inputs: dict[str, str] = {}
        status, reason = _FIRED, ""
        intents: tuple[Intent, ...] = ()
        try:
            if rule.when is not None and not ev.value(rule.when, env):
                status, reason = _FALSE, "condition is false"
            else:
                intents = tuple(build_intents(strategy, rule, ev, env, ctx, slot, inputs))
                if not intents:
                    status, reason = RuleStatus.NOTHING_TO_DO, "no order to place (nothing open?)"
        except (EvalError, ActionError, ContextError) as exc:
            status, reason, intents = RuleStatus.ERROR, f"rule '{rule.name}': {exc}", ()
        except Exception as exc:  # never let one rule stop the others (reported, not hidden)
            status, intents = RuleStatus.ERROR, ()
            reason = f"rule '{rule.name}': internal error {type(exc).__name__}: {exc}"
        values = tuple((display, env[key]) for key, display in rule.input_names if key in env)
        if intents:
            inputs.update((name, _text(value)) for name, value in values)
        results.append(RuleResult(rule.name, status, reason, intents, values))
    return Evaluation(strategy.name, strategy.version, slot, now_ms, tuple(results))


_FIRED = RuleStatus.FIRED
_FALSE = RuleStatus.CONDITION_FALSE
