"""Running compiled expressions over a lazily resolved, per-evaluation environment.

The environment (:class:`Env`) maps each flattened context access (``position.qty``) to its
value, computed on first use by the resolver the compiler made and then kept for the rest of
the evaluation, so every rule of a strategy shares one read of each value. An expression is a
Python function of the environment built at load (:mod:`~botkit.rules.codegen`); :func:`value`
runs it and turns a run-time failure into an :class:`EvalError` naming the expression.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from botkit.rules.context import ROOTS, SIDES, ContextError, Ctx
from botkit.rules.series import Series, Spec
from botkit.rules.views import PositionView

if TYPE_CHECKING:
    from botkit.rules.expr import Expr

__all__ = [
    "RUNTIME_ERRORS",
    "Env",
    "EvalError",
    "Resolver",
    "cross_resolver",
    "env_for",
    "eval_error",
    "make_resolver",
    "series_resolver",
    "value",
]

Resolver = Callable[[Ctx], Any]


class EvalError(Exception):
    """A run-time problem (division by zero, a missing price) in one expression."""

    def __init__(self, expr: str, message: str) -> None:
        super().__init__(f"{message} in '{expr}'")
        self.expr = expr
        self.message = message


class Env(dict[str, Any]):
    """An expression's names for one evaluation: resolves flattened names lazily, once.

    It holds context values only, each added when first read and never changed or removed
    (a ladder's index ``i`` lives in a per-rung mapping in front of it): its keys, in order, are
    the values read so far, so the first ``n`` of them are what had been read when it held
    ``n`` (rule results read their ``values`` off it later that way).

    Made by :func:`env_for` (a plain dict's construction and two slot stores: cheaper than a
    Python ``__init__``, and one is made per evaluation)."""

    __slots__ = ("ctx", "resolvers")
    ctx: Ctx
    resolvers: Mapping[str, Resolver]

    def __missing__(self, key: str) -> Any:
        try:
            value = self.resolvers[key](self.ctx)
        except (KeyError, TypeError, AttributeError) as exc:  # a bug in a view, not the data
            raise ContextError(f"cannot read {key.split('@')[0]}: {exc}") from None
        self[key] = value
        return value


def env_for(ctx: Ctx, resolvers: Mapping[str, Resolver]) -> Env:
    """A fresh environment reading ``ctx`` through ``resolvers`` (environment key → resolver)."""
    env = Env()
    env.ctx = ctx
    env.resolvers = resolvers
    return env


def value(expr: Expr, env: Mapping[str, Any]) -> Any:
    """The value of ``expr`` in ``env``. Raises :class:`EvalError` for a run-time problem
    (arithmetic, a missing context value); never evaluates a folded constant again."""
    const = expr.const
    if const is not None:
        return const
    try:
        return expr.fn(env)
    except RUNTIME_ERRORS as exc:
        raise eval_error(expr, exc) from None


RUNTIME_ERRORS = (ArithmeticError, ContextError, ValueError)
"""What an expression may raise at run time for a problem of the data (see :func:`eval_error`);
anything else is a bug, reported as an internal error."""


def eval_error(expr: Expr, exc: Exception) -> EvalError:
    """The :class:`EvalError` saying what ``exc`` (one of :data:`RUNTIME_ERRORS`) means."""
    return EvalError(expr.text, _runtime_message(exc))


def _runtime_message(exc: Exception) -> str:
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    if isinstance(exc, InvalidOperation):
        return "invalid arithmetic (0/0, or the square root of a negative number)"
    if isinstance(exc, ArithmeticError) and str(exc):
        return str(exc)
    if isinstance(exc, ArithmeticError):
        return f"arithmetic error ({type(exc).__name__})"
    return str(exc)


def make_resolver(root: str, scope: str | None, plan: tuple[tuple[str, Any], ...]) -> Resolver:
    """The function reading one flattened context access: a root (:data:`ROOTS`), then fields
    (each read by its declared :class:`~botkit.rules.views.Field` ``read``, called directly),
    data keys (``account.ccy.USDT``) and method calls with their literal arguments.

    Built once at load: ``price.mark`` costs the root's read and the field's, and
    ``position.qty`` (read by nearly every condition) is :meth:`Ctx.position_qty` itself."""
    if root == "position" and plan == _POSITION_QTY:
        return operator.methodcaller("position_qty", SIDES[scope or "BOTH"])
    steps: list[Callable[[Any], Any]] = []
    for how, what in plan:
        if how == "field":
            steps.append(what.read)
        elif how == "key":
            steps.append(operator.methodcaller("key", what))
        else:
            method, args = what
            steps.append(operator.methodcaller(method, *args))
    read: Callable[[Ctx, str | None], Any]
    if root == "position":  # the side is known at load
        side = SIDES[scope or "BOTH"]

        def position(ctx: Ctx, _scope: str | None) -> PositionView:
            return ctx.position(side)

        read = position
    else:
        declared = ROOTS[root].read
        assert declared is not None  # params are constants, never resolved
        read = declared

    if not steps:

        def resolve_root(ctx: Ctx) -> Any:
            return read(ctx, scope)

        return resolve_root
    if len(steps) == 1:
        (step,) = steps

        def resolve_one(ctx: Ctx) -> Any:
            return step(read(ctx, scope))

        return resolve_one
    chain = tuple(steps)

    def resolve(ctx: Ctx) -> Any:
        obj = read(ctx, scope)
        for step in chain:
            obj = step(obj)
        return obj

    return resolve


def _series_of(ctx: Ctx, spec: Spec, bound: dict[str, Spec]) -> Series:
    symbol = ctx.symbol
    mine = bound.get(symbol)
    if mine is None:
        mine = bound[symbol] = spec.bind(symbol)
    try:
        return ctx.snapshot.candles.series(mine)  # type: ignore[no-any-return]
    except LookupError as exc:
        raise ContextError(str(exc)) from None


def series_resolver(spec: Spec, ago: int) -> Resolver:
    """The resolver of a series in a value's place: its value ``ago`` closed candles before the
    last (raises :class:`~botkit.rules.series.WarmingUp` while there is none)."""
    bound: dict[str, Spec] = {}

    def resolve(ctx: Ctx) -> Decimal:
        return _series_of(ctx, spec, bound).value(ago)

    return resolve


def cross_resolver(spec: Spec, other: Spec | Decimal, above: bool) -> Resolver:
    """The resolver of ``crosses_above(spec, other)`` (``above``) or ``crosses_below``."""
    bound: dict[str, Spec] = {}
    bound_other: dict[str, Spec] = {}

    def resolve(ctx: Ctx) -> bool:
        mine = _series_of(ctx, spec, bound)
        now, before = mine.value(0), mine.value(1)
        if isinstance(other, Decimal):
            then = level = other
        else:
            theirs = _series_of(ctx, other, bound_other)
            level, then = theirs.value(0), theirs.value(1)
        if above:
            return before <= then and now > level
        return before >= then and now < level

    return resolve


_POSITION_QTY = (("field", PositionView.FIELDS["qty"]),)
"""The plan of ``position.qty``."""
