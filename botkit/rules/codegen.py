"""Admitted expression trees → Python functions, built once when the file loads.

:func:`to_function` turns the tree :mod:`~botkit.rules.expr` admitted into
``lambda env: ...`` compiled by CPython, so evaluating a condition costs one call of plain
bytecode instead of a tree walk. The function computes exactly what walking the tree with our
operators and functions computes (the reference semantics; ``tests/rules`` checks the two
against each other with simpleeval as the walker):

- ``+ - * /``, unary ``-``/``+``, ``not`` and the comparisons are Python's own operators when
  :data:`~botkit.rules.functions.OPERATORS` maps them to the :mod:`operator` function of the
  same name (same dunder calls, same Decimal context: the thread's current one); any other
  entry (``//``, ``%`` and the bounded ``**`` today) becomes a call of that implementation;
- ``and``/``or`` short-circuit and return the deciding operand, chained comparisons stop at
  the first false one, ``a if c else b`` evaluates one branch — as the tree walk did;
- a context value is ``env[key]`` (the per-evaluation :class:`~botkit.rules.runtime.Env`,
  which resolves it on first use); ``i`` is ``env['i']``; Decimal constants are bound names.

Why this is safe to hand to :func:`compile`: the tree is *rebuilt* here from a whitelist, node
by node, and anything else is refused (:class:`CodegenError`), whatever the compiler before
admitted. The rebuilt tree holds only arithmetic, comparison and boolean nodes, ``IfExp``,
``True``/``False``, subscripts of the function's own ``env`` argument by a string constant (a
key the compiler made), and calls of names this module binds. No name the file wrote survives
as a Python name (each context access is a string key, each function a binding), so there is no
attribute access, no dunder, no import, no lambda or comprehension, and the function's globals
hold ``__builtins__ = {}`` plus our bindings only (Decimal constants, the implementations of
:data:`~botkit.rules.functions.FUNCTIONS` and of the non-native operators): the code cannot
reach any other builtin, a module or an object's internals. ``tests/rules/test_compiled.py``
feeds it hostile trees.
"""

from __future__ import annotations

import ast
import operator
import types
from collections.abc import Callable, Collection, Mapping
from decimal import Decimal
from typing import Any

from botkit.rules.functions import FUNCTIONS, OPERATORS

__all__ = ["ENV_ARG", "CodegenError", "Compiled", "to_function"]

ENV_ARG = "env"
"""The compiled function's only parameter: the evaluation's environment (a mapping)."""

Compiled = Callable[[Mapping[str, Any]], Any]

_NATIVE: dict[type[Any], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
"""Python's operator for each node type: used as is only when OPERATORS holds this very one."""


class CodegenError(Exception):
    """The tree holds something outside the whitelist (the compiler should have refused it)."""


class _Builder:
    def __init__(self, keys: Collection[str]) -> None:
        self.keys = keys
        self.bindings: dict[str, Any] = {}

    def bind(self, value: Any, hint: str) -> ast.expr:
        name = f"_{hint}_{len(self.bindings)}"
        self.bindings[name] = value
        return ast.Name(id=name, ctx=ast.Load())

    def call(self, impl: Callable[..., Any], args: list[ast.expr]) -> ast.expr:
        return ast.Call(func=self.bind(impl, "op"), args=args, keywords=[])

    def build(self, node: ast.AST) -> ast.expr:
        if isinstance(node, ast.Constant):
            value: Any = node.value
            if type(value) is bool:
                return ast.Constant(value=value)
            if type(value) is Decimal:
                return self.bind(value, "k")
            raise CodegenError(f"a {type(value).__name__} constant")
        if isinstance(node, ast.Name):
            if node.id not in self.keys:
                raise CodegenError(f"the name {node.id!r}")
            key = ast.Constant(value=node.id)
            return ast.Subscript(
                value=ast.Name(id=ENV_ARG, ctx=ast.Load()), slice=key, ctx=ast.Load()
            )
        if isinstance(node, ast.BinOp):
            left, right = self.build(node.left), self.build(node.right)
            impl = self.operator(node.op)
            if impl is _NATIVE[type(node.op)]:
                return ast.BinOp(left=left, op=type(node.op)(), right=right)
            return self.call(impl, [left, right])
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand)
            impl = self.operator(node.op)
            if impl is _NATIVE[type(node.op)]:
                return ast.UnaryOp(op=type(node.op)(), operand=operand)
            return self.call(impl, [operand])
        if isinstance(node, ast.BoolOp) and type(node.op) in (ast.And, ast.Or):
            return ast.BoolOp(op=type(node.op)(), values=[self.build(v) for v in node.values])
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if self.operator(op) is not _NATIVE[type(op)]:
                    raise CodegenError(f"the comparison {type(op).__name__} (not Python's own)")
            return ast.Compare(
                left=self.build(node.left),
                ops=[type(op)() for op in node.ops],
                comparators=[self.build(c) for c in node.comparators],
            )
        if isinstance(node, ast.IfExp):
            return ast.IfExp(
                test=self.build(node.test),
                body=self.build(node.body),
                orelse=self.build(node.orelse),
            )
        if isinstance(node, ast.Call):
            func = node.func
            spec = FUNCTIONS.get(func.id) if isinstance(func, ast.Name) else None
            if spec is None or node.keywords or spec is FUNCTIONS["ms"]:  # ms() is folded
                raise CodegenError("a call")
            return self.call(spec.impl, [self.build(a) for a in node.args])
        raise CodegenError(f"a '{type(node).__name__}' node")

    def operator(self, op: ast.AST) -> Callable[..., Any]:
        impl = OPERATORS.get(type(op))
        if impl is None or type(op) not in _NATIVE:
            raise CodegenError(f"the operator {type(op).__name__}")
        return impl


def to_function(node: ast.expr, keys: Collection[str], text: str = "") -> Compiled:
    """``node`` (an admitted expression tree reading the environment keys ``keys``) as a
    function of the environment. Raises :class:`CodegenError` for anything not whitelisted."""
    builder = _Builder(frozenset(keys))
    body = builder.build(node)
    args = ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=ENV_ARG)], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
    tree = ast.Expression(body=ast.Lambda(args=args, body=body))
    ast.fix_missing_locations(tree)
    code = compile(tree, f"<expression {text[:60]!r}>", "eval", dont_inherit=True)
    (inner,) = (c for c in code.co_consts if isinstance(c, types.CodeType))
    namespace: dict[str, Any] = {"__builtins__": {}, **builder.bindings}
    return types.FunctionType(inner, namespace, "expression")
