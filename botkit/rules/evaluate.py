"""Pure evaluation: a strategy, a snapshot, the journal's memory and the time in; intents out.

For each rule, in file order: the gates of :mod:`~botkit.rules.firing`, then the condition,
then the actions. Nothing raises: an expression that fails at run time (division by zero, a
missing price) makes that rule's result an ``error`` naming the rule and the expression, and
the other rules go on. Each result lists the inputs the rule saw (name → decimal string).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, make_dataclass
from decimal import Decimal
from typing import Any

from botkit.errors import ExchangeError
from botkit.intents import Activity, Intent
from botkit.rules.actions import ActionError, build_intents
from botkit.rules.context import ContextError, Ctx
from botkit.rules.firing import RuleStatus, gate
from botkit.rules.model import Strategy
from botkit.rules.runtime import RUNTIME_ERRORS, EvalError, env_for, eval_error
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
        out: dict[str, str] = {}
        for name, value in self.values:
            if type(value) is Decimal:  # the common case, inlined: see _text
                text = str(value)
                out[name] = text if "E" not in text else format(value, "f")
            else:
                out[name] = _text(value)
        return out


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
    """A value as the journal shows it: a Decimal in plain notation (never ``1E+3``), a
    boolean as ``true``/``false``.

    ``str`` of a Decimal is already plain unless it shows an exponent (``E``), and four times
    cheaper than ``format(value, "f")``, which gives the same text then; Infinity and NaN have
    no ``E`` and read as ``str`` writes them."""
    if isinstance(value, Decimal):
        text = str(value)
        return text if "E" not in text else format(value, "f")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _twin(cls: type[Any]) -> type[Any]:
    """A mutable twin of the frozen slots dataclass ``cls``: a plain slots dataclass with the
    same fields, hence the same ``__slots__``, whose ``__init__`` stores fields directly.

    A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__``, which
    dominates the cost of the few small results every evaluation makes. :func:`_result` and
    :func:`_evaluation` build the twin and then give it ``cls`` as its class: Python allows
    ``__class__`` assignment between classes with the same slots (Data model, "__slots__").
    The object is then a ``cls`` in every respect — frozen, equal and hashing as ``cls(...)``
    would (tests/rules checks) — made three times faster.
    """
    twin: type[Any] = make_dataclass(
        f"_{cls.__name__}Twin",
        [(f.name, f.type) for f in fields(cls)],
        slots=True,
        eq=False,
        repr=False,
        match_args=False,
    )
    if twin.__slots__ != cls.__slots__:  # pragma: no cover - a change of dataclasses
        raise TypeError(f"{cls.__name__}: the twin's slots differ")
    return twin


_ResultTwin: Any = _twin(RuleResult)
_EvaluationTwin: Any = _twin(Evaluation)


def _result(
    rule: str,
    status: RuleStatus,
    reason: str,
    intents: tuple[Intent, ...],
    values: tuple[tuple[str, Any], ...],
) -> RuleResult:
    """``RuleResult(rule, status, reason, intents, values)``, made faster (see :func:`_twin`)."""
    return RuleResult(rule, status, reason, intents, values)


def _evaluation(
    strategy: str, version: str, slot: int, now_ms: int, results: tuple[RuleResult, ...]
) -> Evaluation:
    """``Evaluation(strategy, version, slot, now_ms, results)``, made faster (see :func:`_twin`)."""
    return Evaluation(strategy, version, slot, now_ms, results)


def evaluate(strategy: Strategy, snapshot: Snapshot, activity: Activity, now_ms: int) -> Evaluation:
    """Evaluate every rule of ``strategy`` at ``now_ms`` (exchange time). Never raises for a
    problem of the strategy or the data: such a rule's result is an ``error``. A part of a
    deferred snapshot that cannot be read raises its :class:`~botkit.errors.ExchangeError`
    (the runner ends the cycle as a failed read)."""
    period_ms = strategy.period_ms
    slot = now_ms // period_ms
    enabled = strategy.enabled
    ctx = Ctx(snapshot, strategy.name, strategy.symbol, activity, now_ms, strategy.mgn_mode)
    env = env_for(ctx, strategy.resolvers)
    results: list[RuleResult] = []
    for rule in strategy.rules:
        name = rule.name
        done = activity.get(name) if activity else None
        if done is not None or not enabled or rule.gated:
            # Without activity only the enabled flags and resting orders can hold a rule
            # back (cooldown and max_fires count past fires): gate() is asked only then.
            open_orders = ctx.open_by_rule().get(rule.tag, 0) if rule.keep_open else 0
            if done is not None or not enabled or not rule.enabled or open_orders:
                blocked = gate(
                    rule,
                    done,
                    now_ms=now_ms,
                    period_ms=period_ms,
                    open_orders=open_orders,
                    strategy_enabled=enabled,
                )
                if blocked is not None:
                    results.append(_result(name, blocked[0], blocked[1], (), ()))
                    continue
        inputs: dict[str, str] | None = None
        intents: tuple[Intent, ...] = ()
        when = rule.when
        try:
            if when is None:
                holds = True
            elif when.const is not None:
                holds = bool(when.const)
            else:
                try:
                    holds = bool(when.fn(env))
                except RUNTIME_ERRORS as exc:
                    raise eval_error(when, exc) from None
            if not holds:
                status, reason = _FALSE, _FALSE_REASON
            else:
                inputs = {}
                intents = tuple(build_intents(strategy, rule, env, ctx, slot, inputs))
                status, reason = (_FIRED, "") if intents else (_NOTHING, _NOTHING_REASON)
        except (EvalError, ActionError, ContextError) as exc:
            status, reason, intents = _ERROR, f"rule '{name}': {exc}", ()
        except ExchangeError:
            raise  # a deferred part of the snapshot could not be read: not the rule's problem
        except Exception as exc:  # never let one rule stop the others (reported, not hidden)
            status, intents = _ERROR, ()
            reason = f"rule '{name}': internal error {type(exc).__name__}: {exc}"
        values: tuple[tuple[str, Any], ...] = ()
        if rule.input_names:
            seen = []
            for key, display in rule.input_names:
                if key in env:
                    seen.append((display, env[key]))
            values = tuple(seen)
        if intents and inputs is not None:
            inputs.update((display, _text(v)) for display, v in values)
        results.append(_result(name, status, reason, intents, values))
    return _evaluation(strategy.name, strategy.version, slot, now_ms, tuple(results))


_FIRED = RuleStatus.FIRED
_FALSE = RuleStatus.CONDITION_FALSE
_FALSE_REASON = "condition is false"
_NOTHING = RuleStatus.NOTHING_TO_DO
_NOTHING_REASON = "no order to place (nothing open?)"
_ERROR = RuleStatus.ERROR
