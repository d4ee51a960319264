"""Running compiled expressions: simpleeval over a lazily resolved, per-evaluation environment.

The environment (:class:`Env`) maps each flattened context access (``position.qty``) to its
value, computed on first use by the resolver the compiler made and then kept for the rest of
the evaluation, so every rule of a strategy shares one read of each value.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Mapping
from decimal import InvalidOperation
from typing import TYPE_CHECKING, Any

from simpleeval import SimpleEval

from botkit.rules.context import ContextError, Ctx
from botkit.rules.functions import FUNCTIONS, OPERATORS

if TYPE_CHECKING:
    from botkit.rules.expr import Expr

__all__ = ["Env", "EvalError", "Evaluator", "Resolver", "env_for", "evaluator", "make_resolver"]

Resolver = Callable[[Ctx], Any]


class EvalError(Exception):
    """A run-time problem (division by zero, a missing price) in one expression."""

    def __init__(self, expr: str, message: str) -> None:
        super().__init__(f"{message} in '{expr}'")
        self.expr = expr
        self.message = message


class Env(dict[str, Any]):
    """simpleeval's names for one evaluation: resolves flattened names lazily, once."""

    __slots__ = ("ctx", "resolvers")

    def __init__(self, ctx: Ctx, resolvers: Mapping[str, Resolver]) -> None:
        super().__init__()
        self.ctx = ctx
        self.resolvers = resolvers

    def __missing__(self, key: str) -> Any:
        try:
            value = self.resolvers[key](self.ctx)
        except (KeyError, TypeError, AttributeError) as exc:  # never let simpleeval swallow it
            raise ContextError(f"cannot read {key.split('@')[0]}: {exc}") from None
        self[key] = value
        return value


def env_for(ctx: Ctx, resolvers: Mapping[str, Resolver]) -> Env:
    return Env(ctx, resolvers)


class Evaluator(SimpleEval):  # type: ignore[misc]
    """simpleeval restricted to our operators and functions.

    It only ever walks trees the compiler admitted: whitelisted node types, no attribute
    access left (every context access is one flattened name), names that resolve to Decimals
    and booleans only, calls of our functions only. So simpleeval's per-node scan of results
    for modules and forbidden functions can never find anything and is skipped (``_eval``);
    constants were made Decimals at load and are returned as they are.
    """

    def __init__(self) -> None:
        super().__init__(
            operators=dict(OPERATORS),
            functions={k: f.impl for k, f in FUNCTIONS.items()},
            names={},
        )
        self.nodes[ast.Constant] = _constant

    def _eval(self, node: ast.AST) -> Any:
        return self.nodes[type(node)](node)

    def value(self, expr: Expr, env: Env) -> Any:
        if expr.const is not None:
            return expr.const
        self.names = env
        try:
            return self._eval(expr.node)
        except (ArithmeticError, ContextError, ValueError) as exc:
            raise EvalError(expr.text, _runtime_message(exc)) from None


_local = threading.local()


def evaluator() -> Evaluator:
    """One evaluator per thread (building one costs more than evaluating a condition)."""
    ev: Evaluator | None = getattr(_local, "ev", None)
    if ev is None:
        ev = _local.ev = Evaluator()
    return ev


def _constant(node: ast.Constant) -> Any:
    return node.value


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
    """The function reading one flattened context access: a root view, then attributes, data
    keys (``account.ccy.USDT``) and method calls with their literal arguments."""

    def resolve(ctx: Ctx) -> Any:
        obj = ctx.root(root, scope)
        for how, what in plan:
            if how == "attr":
                obj = getattr(obj, what)
            elif how == "key":
                obj = obj.key(what)
            else:
                method, args = what
                obj = getattr(obj, method)(*args)
        return obj

    return resolve
