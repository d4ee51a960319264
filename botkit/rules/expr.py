"""Strategy expressions: compiled once when the file loads into Python functions, in Decimal.

Compiling parses the text with :mod:`ast` (never ``eval``), then walks the tree once to

- allow only whitelisted node types (arithmetic, comparisons, and/or/not, ``a if c else b``,
  calls of the functions of :mod:`~botkit.rules.functions`), bound the depth and length;
- turn every numeric literal into a :class:`~decimal.Decimal` built from its *source text*;
- check every name against the context schema (:mod:`~botkit.rules.context`) with a
  did-you-mean, and type-check: a condition must be true/false, an amount a number;
- flatten each context access (``position.qty``, ``history.fills.count('1h')``) into one
  name whose value a resolver computes lazily, once per evaluation (these names
  are also the inputs the journal records);
- replace ``params.*`` and ``ms('1h')`` by constants and fold constant expressions;
- turn the admitted tree into a Python function of the environment
  (:mod:`~botkit.rules.codegen`, which re-checks every node against its own whitelist).

Errors carry the character offset inside the expression so the loader can point at the exact
column of the file.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from botkit.rules.codegen import CodegenError, Compiled, to_function
from botkit.rules.context import BOOL, NUM, ROOTS, AnyKey, Method, View
from botkit.rules.durations import DurationError, parse_duration
from botkit.rules.functions import FUNCTIONS, OPERATORS
from botkit.rules.hints import (
    KIND_WORD,
    SUBSCRIPT_HINT,
    TEXT,
    did_you_mean,
    examples,
    fix_hint,
    functions_hint,
    offset_of,
    op_word,
    syntax_hint,
)
from botkit.rules.runtime import (
    EvalError,
    Resolver,
    cross_resolver,
    make_resolver,
    series_resolver,
    value,
)
from botkit.rules.series import (
    BASE_FIELDS,
    INDICATORS,
    INTERVALS,
    MAX_PERIOD,
    SERIES_FUNCTIONS,
    Spec,
)

__all__ = ["Expr", "ExprError", "Scope", "compile_expr"]

MAX_LENGTH = 1000
MAX_DEPTH = 30
INDEX_NAME = "i"


class ExprError(Exception):
    """A compile-time problem at character ``offset`` of the expression."""

    def __init__(self, message: str, offset: int = 0, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.hint = hint


@dataclass(frozen=True, slots=True)
class Scope:
    """What an expression of one field may see."""

    params: Mapping[str, Decimal]
    rule: str
    position_side: str | None
    """``BOTH``/``LONG``/``SHORT``: which leg ``position`` means; None: ``position`` refused."""
    position_hint: str = ""
    allow_index: bool = False


@dataclass(frozen=True, slots=True)
class Expr:
    """A compiled expression. ``const`` is set when it reads no context (folded at load)."""

    text: str
    kind: str
    node: ast.expr
    const: Decimal | bool | None
    names: tuple[str, ...]
    """Environment keys it reads (each a flattened context access)."""
    display: Mapping[str, str] = field(default_factory=dict)
    """Environment key → how the operator wrote it (``position.qty``), for the journal."""
    resolvers: Mapping[str, Resolver] = field(default_factory=dict, repr=False)
    uses_index: bool = False
    windows: Mapping[str, int] = field(default_factory=dict)
    """The longest window (ms) its helpers ask of each root: ``{"history": 3_600_000}``."""
    series: frozenset[Spec] = frozenset()
    """The candle series it reads (symbol None: the strategy's)."""
    symbols: Mapping[str, int] = field(default_factory=dict)
    """Other symbols it names, each with the offset of its first mention (checked against the
    instruments when they are known)."""
    fn: Compiled = field(kw_only=True, repr=False, compare=False)
    """The expression as a function of the environment (see :func:`~botkit.rules.runtime.value`)."""


# --- compiling -----------------------------------------------------------------------------


class _Compiler:
    def __init__(self, text: str, scope: Scope) -> None:
        self.text = text
        self.scope = scope
        self.names: dict[str, str] = {}
        self.resolvers: dict[str, Resolver] = {}
        self.uses_index = False
        self.windows: dict[str, int] = {}
        self.series: set[Spec] = set()
        self.symbols: dict[str, int] = {}

    def fail(self, node: ast.AST, message: str, hint: str = "", attr: str | None = None) -> None:
        raise ExprError(message, offset_of(self.text, node, attr), hint)

    def check(self, node: ast.expr, depth: int = 0) -> tuple[str, ast.expr]:
        if depth > MAX_DEPTH:
            self.fail(node, "the expression is nested too deeply", "split it into simpler parts")
        d = depth + 1
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name | ast.Attribute):
            return self._access(node)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                return self._access(node)
            if isinstance(node.func, ast.Name) and node.func.id in SERIES_FUNCTIONS:
                return self._series_value(node)
            return self._call(node, d)
        if isinstance(node, ast.BinOp):
            if type(node.op) not in OPERATORS:
                self.fail(
                    node, f"operator {op_word(node.op)} is not allowed", "use + - * / // % **"
                )
            node.left = self._expect(node.left, NUM, d, "arithmetic needs numbers")
            node.right = self._expect(node.right, NUM, d, "arithmetic needs numbers")
            return NUM, node
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                node.operand = self._expect(node.operand, BOOL, d, "'not' needs true/false")
                return BOOL, node
            if type(node.op) not in OPERATORS:
                self.fail(node, f"operator {op_word(node.op)} is not allowed", "use - or not")
            node.operand = self._expect(node.operand, NUM, d, "a sign needs a number")
            return NUM, node
        if isinstance(node, ast.BoolOp):
            word = "and" if isinstance(node.op, ast.And) else "or"
            node.values = [
                self._expect(v, BOOL, d, f"'{word}' joins conditions") for v in node.values
            ]
            return BOOL, node
        if isinstance(node, ast.Compare):
            return self._compare(node, d)
        if isinstance(node, ast.IfExp):
            node.test = self._expect(node.test, BOOL, d, "the test of 'a if test else b'")
            kind, node.body = self.check(node.body, d)
            node.orelse = self._expect(node.orelse, kind, d, "both branches must match")
            return kind, node
        what = type(node).__name__
        hints = {
            "Subscript": SUBSCRIPT_HINT,
            "List": "lists are not values here",
            "Lambda": "lambdas are not allowed",
            "JoinedStr": "f-strings are not allowed",
        }
        self.fail(node, f"'{what}' is not allowed in an expression", hints.get(what, ""))
        raise AssertionError  # unreachable

    def _expect(self, node: ast.expr, kind: str, depth: int, why: str) -> ast.expr:
        got, new = self.check(node, depth)
        if got != kind:
            self.fail(
                node, f"expected {KIND_WORD[kind]}, got {KIND_WORD[got]} ({why})", fix_hint(kind)
            )
        return new

    def _constant(self, node: ast.Constant) -> tuple[str, ast.expr]:
        value = node.value
        if isinstance(value, bool):
            return BOOL, node
        if isinstance(value, int | float):
            start = offset_of(self.text, node)
            end_b = getattr(node, "end_col_offset", None)
            source = (
                self.text.encode("utf-8")[node.col_offset : end_b].decode("utf-8")
                if end_b is not None
                else str(value)
            )
            try:
                number = Decimal(source.replace("_", ""))
            except InvalidOperation:
                number = Decimal(int(value)) if isinstance(value, int) else Decimal(str(value))
            if not number.is_finite():
                raise ExprError("the number is not finite", start)
            return NUM, self._const(node, number)
        if isinstance(value, str):
            if len(value) > 40:
                self.fail(node, "text is too long", "text is only for windows and field names")
            return TEXT, node
        self.fail(node, f"{type(value).__name__} literals are not allowed", "write a plain number")
        raise AssertionError

    def _compare(self, node: ast.Compare, depth: int) -> tuple[str, ast.expr]:
        kind, node.left = self.check(node.left, depth)
        new: list[ast.expr] = []
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            if type(op) not in OPERATORS:
                self.fail(node, f"comparison {op_word(op)} is not allowed", "use < <= > >= == !=")
            ordered = not isinstance(op, ast.Eq | ast.NotEq)
            if kind == TEXT or (ordered and kind != NUM):
                self.fail(
                    node, f"cannot compare {KIND_WORD[kind]} with {op_word(op)}", fix_hint(NUM)
                )
            new.append(self._expect(comparator, kind, depth, "both sides of a comparison"))
        node.comparators = new
        return BOOL, node

    def _call(self, node: ast.Call, depth: int) -> tuple[str, ast.expr]:
        func = node.func
        if not isinstance(func, ast.Name):
            self.fail(node, "only named functions can be called", functions_hint())
            raise AssertionError
        spec = FUNCTIONS.get(func.id)
        if spec is None:
            hint = did_you_mean(func.id, [*FUNCTIONS, *SERIES_FUNCTIONS])
            self.fail(func, f"unknown function '{func.id}'", hint)
            raise AssertionError
        if node.keywords:
            self.fail(
                node.keywords[0].value, "keyword arguments are not allowed", "pass values in order"
            )
        count = len(node.args)
        if count < spec.min_args or (spec.max_args is not None and count > spec.max_args):
            want = (
                f"{spec.min_args}"
                if spec.max_args == spec.min_args
                else f"{spec.min_args} or more"
                if spec.max_args is None
                else f"{spec.min_args} to {spec.max_args}"
            )
            self.fail(node, f"{func.id}() takes {want} arguments, got {count}", spec.doc)
        if func.id == "ms":
            arg = node.args[0]
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                self.fail(arg, "ms() needs a literal duration", "write ms('1h')")
                raise AssertionError
            return NUM, self._const(node, Decimal(self._duration(arg)))
        node.args = [self._expect(a, NUM, depth, f"arguments of {func.id}()") for a in node.args]
        return NUM, node

    def _duration(self, arg: ast.Constant) -> int:
        try:
            return parse_duration(str(arg.value))
        except DurationError as exc:
            self.fail(arg, str(exc).split(" — ")[0], "write a number and a unit: 30s, 10m, 1h, 1d")
            raise AssertionError from None

    def _const(self, node: ast.AST, value: Decimal) -> ast.expr:
        new = ast.Constant(value=value)  # type: ignore[arg-type]  # codegen binds it as a name
        return ast.copy_location(new, node)

    # A context access: Name, Attribute chain, and calls of view methods with literal args.
    def _access(self, node: ast.expr) -> tuple[str, ast.expr]:
        name, steps = self._chain(node)
        plain = self._plain_name(node, name, steps)
        if plain is not None:
            return plain
        if name.id == "params":
            return self._param(node, steps)
        scope = self._scope_of(name)
        kind, path, plan = self._walk(ROOTS[name.id].kind, name.id, steps)
        if kind not in (NUM, BOOL):
            if isinstance(kind, AnyKey):
                self.fail(node, f"{path} is not a value", f"add {kind.doc}: {path}.NAME")
            self.fail(node, f"{path} is not a value", f"use a field, e.g. {examples(kind, path)}")
        display = ast.unparse(node)
        key = display if scope is None else f"{display}@{scope}"
        self.names[key] = display
        self.resolvers[key] = make_resolver(name.id, scope, plan)
        return kind, ast.copy_location(ast.Name(id=key, ctx=ast.Load()), node)

    def _chain(self, node: ast.expr) -> tuple[ast.Name, list[tuple[str, Any, ast.AST]]]:
        """The name an access starts with and its steps, in order: ``("attr", name, node)``
        and ``("call", call, node)``."""
        steps: list[tuple[str, Any, ast.AST]] = []
        cur: ast.expr = node
        while not isinstance(cur, ast.Name):
            if isinstance(cur, ast.Attribute):
                steps.append(("attr", cur.attr, cur))
                cur = cur.value
            elif isinstance(cur, ast.Call) and isinstance(cur.func, ast.Attribute):
                steps.append(("call", cur, cur))
                cur = cur.func
                steps.append(("attr", cur.attr, cur))
                cur = cur.value
            elif isinstance(cur, ast.Subscript):
                self.fail(cur, "'Subscript' is not allowed in an expression", SUBSCRIPT_HINT)
            else:
                self.fail(cur, "only names like position.qty can be followed by a dot")
        steps.reverse()
        if cur.id.startswith("_") or any(
            s[0] == "attr" and str(s[1]).startswith("_") for s in steps
        ):
            self.fail(node, "names starting with '_' are not allowed")
        return cur, steps

    def _plain_name(
        self, node: ast.expr, name: ast.Name, steps: list[tuple[str, Any, ast.AST]]
    ) -> tuple[str, ast.expr] | None:
        """A name that is no context access (``true``, the rung index ``i``), or the error of
        one that is not a root; None for a root."""
        word = name.id
        if word in ("true", "false") and not steps:  # YAML habits: true/false mean True/False
            return BOOL, ast.copy_location(ast.Constant(value=word == "true"), node)
        if word == INDEX_NAME and not steps:
            if not self.scope.allow_index:
                self.fail(name, "'i' (the rung index) exists only in ladder and grid fields")
            self.uses_index = True
            return NUM, node
        if word in FUNCTIONS and not steps:
            self.fail(name, f"'{word}' is a function", f"call it: {FUNCTIONS[word].doc}")
        if word in SERIES_FUNCTIONS and not steps:
            self.fail(name, f"'{word}' is a function", f"call it: {SERIES_FUNCTIONS[word]}")
        if word not in ROOTS:
            options = [*ROOTS, *FUNCTIONS, *SERIES_FUNCTIONS] + (
                [INDEX_NAME] if self.scope.allow_index else []
            )
            self.fail(name, f"unknown name '{word}'", did_you_mean(word, options))
        return None

    def _scope_of(self, name: ast.Name) -> str | None:
        """What the root is relative to: the rule's pos_side for ``position``, the rule's
        name for ``rule``; None for the others."""
        if name.id == "position":
            if self.scope.position_side is None:
                self.fail(
                    name, "'position' needs the rule's pos_side here", self.scope.position_hint
                )
            return self.scope.position_side
        return self.scope.rule if name.id == "rule" else None

    def _walk(
        self, kind: Any, path: str, steps: list[tuple[str, Any, ast.AST]]
    ) -> tuple[Any, str, tuple[tuple[str, Any], ...]]:
        """Follow ``steps`` from a root of ``kind`` through the declared fields (checking
        each name, with a did-you-mean): the kind reached, its path, and the resolver's plan
        (``("field", Field)``, ``("key", name)``, ``("call", (method, args))``)."""
        plan: list[tuple[str, Any]] = []
        i = 0
        while i < len(steps):
            how, attr, at = steps[i]
            if how == "call":
                self.fail(at, f"{path} is not a function", "remove the parentheses")
            i += 1
            if isinstance(kind, AnyKey):
                if path == "symbols":
                    self.symbols.setdefault(attr, offset_of(self.text, at, attr))
                plan.append(("key", attr))
                path += f".{attr}"
                kind = kind.of
                continue
            if not (isinstance(kind, type) and issubclass(kind, View)):
                self.fail(at, f"{path} is {KIND_WORD[kind]}; it has no field '{attr}'", attr=attr)
            fields = kind.FIELDS
            if attr not in fields:
                self.fail(
                    at, f"{path} has no field '{attr}'", did_you_mean(attr, list(fields)), attr=attr
                )
            field_ = fields[attr]
            path += f".{attr}"
            if isinstance(field_.kind, Method):
                if i >= len(steps) or steps[i][0] != "call":
                    self.fail(at, f"{path} is a function", f"call it: {field_.kind.doc}", attr=attr)
                args = self._method_args(steps[i][1], field_.kind, kind, path)
                plan.append(("call", (attr, args)))
                kind = field_.kind.returns
                i += 1
                continue
            plan.append(("field", field_))
            kind = field_.kind
        return kind, path, tuple(plan)

    def _method_args(
        self, call: ast.Call, method: Method, owner: Any, path: str
    ) -> tuple[Any, ...]:
        if call.keywords:
            self.fail(call, "keyword arguments are not allowed", method.doc)
        if len(call.args) != len(method.args):
            self.fail(call, f"{path}() takes {len(method.args)} argument(s)", method.doc)
        out: list[Any] = []
        for arg, kind in zip(call.args, method.args, strict=True):
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                self.fail(arg, f"arguments of {path}() must be quoted literals", method.doc)
                raise AssertionError
            if kind == "window":
                root = path.split(".", 1)[0]
                self.windows[root] = max(self.windows.get(root, 0), self._duration(arg))
            else:
                nums = list(getattr(owner.RECORD, "NUMS", {}))
                if arg.value not in nums:
                    self.fail(
                        arg, f"'{arg.value}' is not a field here", did_you_mean(arg.value, nums)
                    )
            out.append(arg.value)
        return tuple(out)

    # --- candle series and indicators (botkit.rules.series) ---------------------------------

    def _series_value(self, node: ast.Call) -> tuple[str, ast.expr]:
        """A series call in a value's place: its last closed value, ``prev(s, n)``,
        ``crosses_above(a, b)`` / ``crosses_below(a, b)``; one context name each."""
        word = node.func.id  # type: ignore[attr-defined]
        if node.keywords:
            self.fail(
                node.keywords[0].value, "keyword arguments are not allowed", SERIES_FUNCTIONS[word]
            )
        kind = NUM
        if word == "prev":
            self._arity(node, 2, 2)
            spec = self._spec(node.args[0])
            ago = self._int_arg(node.args[1], word, 1)
            resolver = series_resolver(spec, ago)
            self.series.add(Spec.back(spec, ago))
        elif word in ("crosses_above", "crosses_below"):
            self._arity(node, 2, 2)
            spec = self._spec(node.args[0])
            other: Spec | Decimal
            arg = node.args[1]
            if (
                isinstance(arg, ast.Call)
                and isinstance(arg.func, ast.Name)
                and (arg.func.id in SERIES_FUNCTIONS)
            ):
                other = self._spec(arg)
                if (other.interval, other.symbol) != (spec.interval, spec.symbol):
                    self.fail(
                        arg,
                        f"{word}() compares series of one interval and symbol",
                        f"both on '{spec.interval}'",
                    )
                self.series.add(Spec.back(other, 1))
            else:
                other = self._number_arg(arg, word)
            self.series.add(Spec.back(spec, 1))
            resolver = cross_resolver(spec, other, word == "crosses_above")
            kind = BOOL
        else:
            spec = self._spec(node)
            self.series.add(spec)
            resolver = series_resolver(spec, 0)
        display = ast.unparse(node)
        self.names[display] = display
        self.resolvers[display] = resolver
        return kind, ast.copy_location(ast.Name(id=display, ctx=ast.Load()), node)

    def _arity(self, node: ast.Call, low: int, high: int) -> None:
        word = node.func.id  # type: ignore[attr-defined]
        count = len(node.args)
        if not low <= count <= high:
            want = f"{low}" if low == high else f"{low} to {high}"
            self.fail(node, f"{word}() takes {want} arguments, got {count}", SERIES_FUNCTIONS[word])

    def _spec(self, node: ast.expr) -> Spec:
        """The series ``node`` names: a candle field or an indicator call."""
        func = node.func if isinstance(node, ast.Call) else None
        word = func.id if isinstance(func, ast.Name) else ""
        if not isinstance(node, ast.Call) or (word not in BASE_FIELDS and word not in INDICATORS):
            self.fail(node, "expected a series here", "e.g. close('15m') or ema(close('1h'), 20)")
            raise AssertionError
        if node.keywords:
            self.fail(
                node.keywords[0].value, "keyword arguments are not allowed", SERIES_FUNCTIONS[word]
            )
        shape = ("interval", "symbol?") if word in BASE_FIELDS else INDICATORS[word].args
        required = sum(1 for a in shape if not a.endswith("?"))
        self._arity(node, required, len(shape))
        interval, symbol = "", None
        args: list[Decimal] = []
        inputs: list[Spec] = []
        for arg, how in zip(node.args, shape, strict=False):
            if how == "interval":
                interval = self._interval_arg(arg)
            elif how == "symbol?":
                symbol = self._symbol_arg(arg, word)
            elif how == "series":
                inner = self._spec(arg)
                inputs.append(inner)
                interval, symbol = inner.interval, inner.symbol
            elif how == "period":
                args.append(Decimal(self._int_arg(arg, word, 1)))
            else:
                number = self._number_arg(arg, word)
                if number <= 0:
                    self.fail(arg, f"{word}(): the width must be above 0", SERIES_FUNCTIONS[word])
                args.append(number)
        if word.startswith("macd") and args[0] >= args[1]:
            self.fail(
                node,
                f"{word}(): the fast period must be shorter than the slow one",
                SERIES_FUNCTIONS[word],
            )
        return Spec(word, interval, symbol, tuple(args), tuple(inputs))

    def _interval_arg(self, arg: ast.expr) -> str:
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            self.fail(arg, "the interval must be a quoted word", "e.g. '15m'")
            raise AssertionError
        if arg.value not in INTERVALS:
            hint = did_you_mean(arg.value, list(INTERVALS))
            self.fail(
                arg, f"unknown interval '{arg.value}'", hint or "intervals: " + ", ".join(INTERVALS)
            )
        return str(arg.value)

    def _symbol_arg(self, arg: ast.expr, word: str) -> str:
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            self.fail(arg, f"{word}(): the symbol must be quoted", "e.g. 'ETH_USDT_PERP'")
            raise AssertionError
        self.symbols.setdefault(str(arg.value), offset_of(self.text, arg))
        return str(arg.value)

    def _number_arg(self, arg: ast.expr, word: str) -> Decimal:
        kind, node = self.check(arg)
        sign = 1
        while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            sign = -sign if isinstance(node.op, ast.USub) else sign  # -2 is a number too
            node = node.operand
        if kind != NUM or not (isinstance(node, ast.Constant) and isinstance(node.value, Decimal)):
            self.fail(
                arg,
                f"{word}(): this argument must be a number or params.NAME",
                SERIES_FUNCTIONS[word],
            )
            raise AssertionError
        return node.value if sign > 0 else -node.value

    def _int_arg(self, arg: ast.expr, word: str, low: int) -> int:
        number = self._number_arg(arg, word)
        if number != number.to_integral_value() or not low <= number <= MAX_PERIOD:
            self.fail(
                arg,
                f"{word}(): a count must be a whole number from {low} to {MAX_PERIOD}",
                SERIES_FUNCTIONS[word],
            )
        return int(number)

    def _param(self, node: ast.expr, steps: list[tuple[str, Any, ast.AST]]) -> tuple[str, ast.expr]:
        params = self.scope.params
        if len(steps) != 1 or steps[0][0] != "attr":
            self.fail(node, "write params.NAME", "params are numbers defined under 'params:'")
        attr, at = steps[0][1], steps[0][2]
        if attr not in params:
            hint = did_you_mean(attr, list(params)) if params else "define it under 'params:'"
            self.fail(at, f"unknown param '{attr}'", hint, attr=attr)
        return NUM, self._const(node, params[attr])


def compile_expr(source: str | int | Decimal | bool, kind: str, scope: Scope) -> Expr:
    """Compile one expression that must produce ``kind`` (NUM or BOOL). Raises ExprError."""
    text = ("True" if source else "False") if isinstance(source, bool) else str(source)
    if not text.strip():
        raise ExprError("the expression is empty", 0, fix_hint(kind))
    if len(text) > MAX_LENGTH:
        raise ExprError(f"the expression is longer than {MAX_LENGTH} characters", MAX_LENGTH)
    flat = text.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    try:
        tree = ast.parse(flat, mode="eval")
    except SyntaxError as exc:
        offset = max(0, (exc.offset or 1) - 1)
        message = (exc.msg or "invalid syntax").replace("invalid syntax", "syntax error")
        if not exc.offset or (exc.lineno or 1) > 1 or offset >= len(flat.rstrip()):
            offset = len(flat.rstrip())
            if message == "syntax error":
                message = "the expression ends too early"
        raise ExprError(message, min(offset, len(flat)), syntax_hint(flat, offset)) from None
    compiler = _Compiler(flat, scope)
    got, node = compiler.check(tree.body)
    if got != kind:
        raise ExprError(f"expected {KIND_WORD[kind]}, got {KIND_WORD[got]}", 0, fix_hint(kind))
    ast.fix_missing_locations(node)
    keys = [*compiler.names, *([INDEX_NAME] if compiler.uses_index else [])]
    try:
        fn = to_function(node, keys, flat)
    except CodegenError as exc:  # the checks above admit nothing it refuses: a bug, said plainly
        raise ExprError(f"{exc} is not allowed in an expression", 0) from None
    expr = Expr(
        text=flat,
        kind=kind,
        node=node,
        const=None,
        names=tuple(compiler.names),
        display=dict(compiler.names),
        resolvers=dict(compiler.resolvers),
        uses_index=compiler.uses_index,
        windows=dict(compiler.windows),
        series=frozenset(compiler.series),
        symbols=dict(compiler.symbols),
        fn=fn,
    )
    if compiler.names or compiler.uses_index:
        return expr
    try:
        const = value(expr, {})
    except EvalError as exc:
        raise ExprError(exc.message, 0, "fix the arithmetic") from None
    return replace(expr, const=const)
