"""Pure evaluation: a strategy, a snapshot, the journal's memory and the time in; intents out.

For each rule, in file order: the gates of :mod:`~botkit.rules.firing`, then the condition,
then the actions. Nothing raises: an expression that fails at run time (division by zero, a
missing price) makes that rule's result an ``error`` naming the rule and the expression, and
the other rules go on. Each result lists the inputs the rule saw (name → decimal string),
read off the evaluation when asked for.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import islice
from typing import TYPE_CHECKING, Any

from botkit.errors import ExchangeError
from botkit.intents import Activity, Intent, KeepIntent
from botkit.rules.actions import ActionError, build_intents
from botkit.rules.context import ContextError, Ctx
from botkit.rules.firing import RuleStatus, gate
from botkit.rules.model import Strategy
from botkit.rules.runtime import RUNTIME_ERRORS, Env, EvalError, env_for, eval_error
from botkit.snapshot import Snapshot

__all__ = ["Evaluation", "RuleResult", "RuleStatus", "evaluate"]


class _Reads:
    """The base of :class:`RuleResult`: room for what a result :func:`evaluate` made reads
    its ``values`` from when first asked (not a field: equality, hashing, repr, pickling and
    copies all go through ``values``)."""

    __slots__ = ("_reads",)


@dataclass(frozen=True, slots=True)
class RuleResult(_Reads):
    """One rule's outcome: fired (with intents) or why not, and the values it read.

    The ``values`` of a result :func:`evaluate` made are read off the evaluation's environment
    the first time something asks for them, then kept: most results are never looked at (a
    runner journaling only changes reads a few). The values a rule saw are fixed once read, so
    they come out the same whenever, and in whatever order, results are read — what the rule
    had read when it was done, not what later rules read (tests/rules/test_result_values.py).
    In every other respect the result is the frozen dataclass it says it is: equal to, hashing
    and printing as ``RuleResult(rule, status, reason, intents, values)``.
    """

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

    if not TYPE_CHECKING:  # hidden from mypy, which would otherwise let any attribute pass

        def __getattr__(self, name: str) -> Any:
            """Called only for an attribute that is not set: ``values`` of a result whose
            values are still to be read (see the class doc)."""
            if name != "values":
                raise AttributeError(f"'RuleResult' object has no attribute '{name}'")
            values = _read_values(*self._reads)
            object.__setattr__(self, "values", values)  # kept: read once
            return values


def _read_values(
    env: Mapping[str, Any], names: tuple[tuple[str, str], ...], seen: int
) -> tuple[tuple[str, Any], ...]:
    """(display, value) of each (key, display) of ``names`` among the first ``seen`` context
    values ``env`` read: what the rule had read when it was done (later rules may have read
    more; an :class:`~botkit.rules.runtime.Env` only ever adds keys, in the order read)."""
    read: Container[str] = env if len(env) == seen else set(islice(env, seen))
    return tuple([(display, env[key]) for key, display in names if key in read])


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


class _ResultTwin(_Reads):
    """A mutable twin of :class:`RuleResult`: same base, same slots, no ``__init__``.

    :func:`evaluate` makes its results as twins, stores the slots, then gives each
    ``RuleResult`` as its class — Python allows ``__class__`` assignment between classes of
    the same layout (Data model, "__slots__"). A frozen dataclass's ``__init__`` stores each
    field through ``object.__setattr__``, and a result whose values are read later cannot be
    made through it at all; this is 2.2 times cheaper than storing through the slot
    descriptors (the next cheapest way), about 0.7 us of a backtest candle's two rules and its
    evaluation. tests/rules checks the results equal, hash, print, copy and pickle as the
    constructor's."""

    __slots__ = RuleResult.__slots__


class _EvaluationTwin:
    """The same for :class:`Evaluation` (one per evaluation)."""

    __slots__ = Evaluation.__slots__


def _result(
    rule: str,
    status: RuleStatus,
    reason: str,
    intents: tuple[Intent, ...],
    values: tuple[tuple[str, Any], ...],
) -> RuleResult:
    """``RuleResult(rule, status, reason, intents, values)`` (see :class:`_ResultTwin`)."""
    twin: Any = _ResultTwin()
    twin.rule = rule
    twin.status = status
    twin.reason = reason
    twin.intents = intents
    twin.values = values
    twin.__class__ = RuleResult
    result: RuleResult = twin
    return result


def _deferred(
    rule: str, status: RuleStatus, reason: str, env: Env, names: tuple[tuple[str, str], ...]
) -> RuleResult:
    """A result of no intents whose values are read from ``env`` when asked for: those of
    ``names`` among what ``env`` holds now."""
    twin: Any = _ResultTwin()
    twin.rule = rule
    twin.status = status
    twin.reason = reason
    twin.intents = ()
    twin._reads = (env, names, len(env))
    twin.__class__ = RuleResult
    result: RuleResult = twin
    return result


def _evaluation(
    strategy: str, version: str, slot: int, now_ms: int, results: tuple[RuleResult, ...]
) -> Evaluation:
    """``Evaluation(strategy, version, slot, now_ms, results)`` (see :class:`_EvaluationTwin`)."""
    twin: Any = _EvaluationTwin()
    twin.strategy = strategy
    twin.version = version
    twin.slot = slot
    twin.now_ms = now_ms
    twin.results = results
    twin.__class__ = Evaluation
    evaluation: Evaluation = twin
    return evaluation


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
                if rule.keep is not None:
                    status, reason = _DECLARED, _declared_reason(intents)
        except (EvalError, ActionError, ContextError) as exc:
            status, reason, intents = _ERROR, f"rule '{name}': {exc}", ()
        except ExchangeError:
            raise  # a deferred part of the snapshot could not be read: not the rule's problem
        except Exception as exc:  # never let one rule stop the others (reported, not hidden)
            status, intents = _ERROR, ()
            reason = f"rule '{name}': internal error {type(exc).__name__}: {exc}"
        if intents:  # fired: its intents' inputs are the values it read, now
            values = _read_values(env, rule.input_names, len(env))
            if inputs is not None:
                inputs.update((display, _text(v)) for display, v in values)
            results.append(_result(name, status, reason, intents, values))
        elif rule.input_names:
            results.append(_deferred(name, status, reason, env, rule.input_names))
        else:
            results.append(_result(name, status, reason, (), ()))
    return _evaluation(strategy.name, strategy.version, slot, now_ms, tuple(results))


_FIRED = RuleStatus.FIRED
_DECLARED = RuleStatus.DECLARED


def _declared_reason(intents: tuple[Intent, ...]) -> str:
    count = sum(len(i.orders) for i in intents if isinstance(i, KeepIntent))
    return f"declares {count} order(s) to keep resting"


_FALSE = RuleStatus.CONDITION_FALSE
_FALSE_REASON = "condition is false"
_NOTHING = RuleStatus.NOTHING_TO_DO
_NOTHING_REASON = "no order to place (nothing open?)"
_ERROR = RuleStatus.ERROR
