"""Pure evaluation: a strategy, a snapshot, the journal's memory and the time in; intents out.

For each rule, in file order: the gates of :mod:`~botkit.rules.firing`, then the condition,
then the actions. Nothing raises: an expression that fails at run time (division by zero, a
missing price) makes that rule's result an ``error`` naming the rule and the expression, and
the other rules go on. Each result lists the inputs the rule saw (name → decimal string),
read off the evaluation when asked for.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from decimal import Decimal
from itertools import islice
from typing import Any

from botkit.errors import ReadFailed
from botkit.intents import Activity, Intent, KeepIntent
from botkit.rules.actions import ActionError, build_intents
from botkit.rules.context import ContextError, Ctx
from botkit.rules.firing import RuleStatus, gate
from botkit.rules.model import Strategy
from botkit.rules.runtime import RUNTIME_ERRORS, Env, EvalError, env_for, eval_error
from botkit.rules.series import WarmingUp
from botkit.snapshot import Snapshot

__all__ = ["Evaluation", "RuleResult", "RuleStatus", "evaluate"]


class _Value:
    """An immutable value, equal to another of its class (and hashing, copied and pickled) by
    its fields in constructor order, ``_fields()``."""

    __slots__ = ()

    def _fields(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Value) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type[_Value], tuple[Any, ...]]:
        return (type(self), self._fields())


class RuleResult(_Value):
    """One rule's outcome: fired (with intents) or why not, and the values it read.

    An immutable value: its fields are read-only properties, and two results are equal (and
    hash alike) when ``(rule, status, reason, intents, values)`` are; it prints as
    ``RuleResult(rule=..., status=..., reason=..., intents=...)``; a copy or a pickle holds the
    values themselves. A plain class rather than a frozen dataclass for speed alone: an
    evaluation makes one result per rule, and a frozen dataclass's ``__init__`` stores each field
    through ``object.__setattr__`` (3.4 times the cost of this ``__init__``).
    """

    __slots__ = ("_intents", "_reads", "_reason", "_rule", "_status", "_values")

    def __init__(
        self,
        rule: str,
        status: RuleStatus,
        reason: str = "",
        intents: tuple[Intent, ...] = (),
        values: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        self._rule = rule
        self._status = status
        self._reason = reason
        self._intents = intents
        self._values = values
        self._reads: _Reads | None = None
        """Where ``values`` are still to be read from (see :meth:`_deferred`), or None."""

    @classmethod
    def _deferred(
        cls,
        rule: str,
        status: RuleStatus,
        reason: str,
        env: Env,
        names: tuple[tuple[str, str], ...],
    ) -> RuleResult:
        """A result of no intents whose values are those of ``names`` that ``env`` holds now,
        read off ``env`` when first asked for (see ``values``)."""
        result = cls(rule, status, reason)
        result._reads = (env, names, len(env))
        return result

    @property
    def rule(self) -> str:
        return self._rule

    @property
    def status(self) -> RuleStatus:
        return self._status

    @property
    def reason(self) -> str:
        return self._reason

    @property
    def intents(self) -> tuple[Intent, ...]:
        return self._intents

    @property
    def values(self) -> tuple[tuple[str, Any], ...]:
        """(name as written, value) of every context value the rule read; see ``inputs``.

        For a result :func:`evaluate` made without intents, read off the evaluation's
        environment the first time something asks, then kept: most such results are never
        looked at (a runner journaling only changes reads a few). The values a rule saw are
        fixed once read, so they come out the same whenever, and in whatever order, results
        are read — what the rule had read when it was done, not what later rules read
        (tests/rules/test_result_values.py)."""
        reads = self._reads
        if reads is not None:
            self._values = _read_values(*reads)
            self._reads = None
        return self._values

    @property
    def fired(self) -> bool:
        return self._status is RuleStatus.FIRED

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

    def _fields(
        self,
    ) -> tuple[str, RuleStatus, str, tuple[Intent, ...], tuple[tuple[str, Any], ...]]:
        return (self._rule, self._status, self._reason, self._intents, self.values)

    def __repr__(self) -> str:
        return (
            f"RuleResult(rule={self._rule!r}, status={self._status!r}, "
            f"reason={self._reason!r}, intents={self._intents!r})"
        )


_Reads = tuple[Mapping[str, Any], tuple[tuple[str, str], ...], int]
"""(environment, the rule's (key, display) names, how many values it held when the rule was
done): what :func:`_read_values` reads a result's values from."""


def _read_values(
    env: Mapping[str, Any], names: tuple[tuple[str, str], ...], seen: int
) -> tuple[tuple[str, Any], ...]:
    """(display, value) of each (key, display) of ``names`` among the first ``seen`` context
    values ``env`` read: what the rule had read when it was done (later rules may have read
    more; an :class:`~botkit.rules.runtime.Env` only ever adds keys, in the order read)."""
    read: Container[str] = env if len(env) == seen else set(islice(env, seen))
    return tuple([(display, env[key]) for key, display in names if key in read])


class Evaluation(_Value):
    """The outcome of one evaluation of one strategy.

    An immutable value like :class:`RuleResult` (read-only properties over slots; equal to,
    hashing and printing as ``Evaluation(strategy, version, slot, now_ms, results)``), a plain
    class for the same reason: one is made per strategy evaluation."""

    __slots__ = ("_now_ms", "_results", "_slot", "_strategy", "_version")

    def __init__(
        self, strategy: str, version: str, slot: int, now_ms: int, results: tuple[RuleResult, ...]
    ) -> None:
        self._strategy = strategy
        self._version = version
        self._slot = slot
        self._now_ms = now_ms
        self._results = results

    @property
    def strategy(self) -> str:
        return self._strategy

    @property
    def version(self) -> str:
        return self._version

    @property
    def slot(self) -> int:
        """The evaluation slot: ``now_ms`` // the strategy's period."""
        return self._slot

    @property
    def now_ms(self) -> int:
        return self._now_ms

    @property
    def results(self) -> tuple[RuleResult, ...]:
        """One result per rule, in rule order."""
        return self._results

    def _fields(self) -> tuple[str, str, int, int, tuple[RuleResult, ...]]:
        return (self._strategy, self._version, self._slot, self._now_ms, self._results)

    def __repr__(self) -> str:
        return (
            f"Evaluation(strategy={self._strategy!r}, version={self._version!r}, "
            f"slot={self._slot!r}, now_ms={self._now_ms!r}, results={self._results!r})"
        )

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


def evaluate(strategy: Strategy, snapshot: Snapshot, activity: Activity, now_ms: int) -> Evaluation:
    """Evaluate every rule of ``strategy`` at ``now_ms`` (exchange time). Never raises for a
    problem of the strategy or the data: such a rule's result is an ``error``. A part of a
    deferred snapshot that cannot be read raises its :class:`~botkit.errors.ReadFailed`
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
                    results.append(RuleResult(name, blocked[0], blocked[1]))
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
        except WarmingUp as exc:
            status, reason, intents = RuleStatus.WARMING_UP, f"rule '{name}': {exc}", ()
        except ReadFailed:
            raise  # a deferred part of the snapshot could not be read: not the rule's problem
        except Exception as exc:  # never let one rule stop the others (reported, not hidden)
            status, intents = _ERROR, ()
            reason = f"rule '{name}': internal error {type(exc).__name__}: {exc}"
        if intents:  # fired: its intents' inputs are the values it read, now
            values = _read_values(env, rule.input_names, len(env))
            if inputs is not None:
                inputs.update((display, _text(v)) for display, v in values)
            results.append(RuleResult(name, status, reason, intents, values))
        elif rule.input_names:
            results.append(RuleResult._deferred(name, status, reason, env, rule.input_names))
        else:
            results.append(RuleResult(name, status, reason))
    return Evaluation(strategy.name, strategy.version, slot, now_ms, tuple(results))


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
