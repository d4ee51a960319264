"""Compiled expressions compute what walking the admitted tree computes, and nothing else.

The reference is simpleeval walking the same tree with our operators and functions (how
expressions ran before they were compiled to Python functions): random expressions of the
grammar must give the same value, of the same type and text, or the same error. The compiled
code is built from a whitelist only: a tree holding anything else never reaches ``compile``.
"""

from __future__ import annotations

import ast
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from simpleeval import SimpleEval

from botkit.intents import Activity, RuleActivity
from botkit.rules import Evaluation, RuleResult, RuleStatus, client_order_id, evaluate
from botkit.rules.codegen import CodegenError, to_function
from botkit.rules.context import NUM, Ctx
from botkit.rules.expr import Expr, ExprError, Scope, compile_expr
from botkit.rules.firing import gate
from botkit.rules.functions import FUNCTIONS, OPERATORS
from botkit.rules.runtime import RUNTIME_ERRORS, EvalError, env_for, eval_error, value
from tests.rules.helpers import NOW, SYMBOL, open_order, position, snapshot, strategy, ticker

D = Decimal

# --- the reference: simpleeval over the admitted tree ------------------------------------------


class Reference(SimpleEval):  # type: ignore[misc]
    """simpleeval restricted to our operators and functions, returning constants as they are."""

    def __init__(self) -> None:
        super().__init__(
            operators=dict(OPERATORS),
            functions={k: f.impl for k, f in FUNCTIONS.items()},
            names={},
        )
        self.nodes[ast.Constant] = lambda node: node.value

    def _eval(self, node: ast.AST) -> Any:
        return self.nodes[type(node)](node)

    def value(self, expr: Expr, env: Any) -> Any:
        if expr.const is not None:
            return expr.const
        self.names = env
        try:
            return self._eval(expr.node)
        except RUNTIME_ERRORS as exc:
            raise eval_error(expr, exc) from None


SNAP = snapshot(mark="60000.5", avail="1234.56", positions=[position("-3", side="SELL")])
SCOPE = Scope({}, "r", "BOTH")
NUMBERS = ["0", "1", "2", "3", "7", "0.1", "2.50", "1e-3", "1_000", "0.333", "64", "1e30"]
NAMES = [
    "price.mark",
    "price.bid",
    "position.qty",
    "position.size",
    "account.availMgn",
    "instrument.tSz",
    "price.buy_limit",  # not in the snapshot: a run-time error when read
]
ARITH = ["+", "-", "*", "/", "//", "%", "**"]
COMPARE = ["<", "<=", ">", ">=", "==", "!="]


@st.composite
def numeric(draw: st.DrawFn, depth: int = 3) -> str:
    shape = draw(st.integers(0, 6 if depth > 0 else 1))
    if shape == 0:
        return draw(st.sampled_from(NUMBERS))
    if shape == 1:
        return draw(st.sampled_from(NAMES))
    if shape == 2:
        op = draw(st.sampled_from(ARITH))
        return f"({draw(numeric(depth - 1))} {op} {draw(numeric(depth - 1))})"
    if shape == 3:
        return f"{draw(st.sampled_from(['-', '+']))}{draw(numeric(depth - 1))}"
    if shape == 4:
        name = draw(st.sampled_from(sorted(set(FUNCTIONS) - {"ms"})))
        spec = FUNCTIONS[name]
        count = draw(st.integers(spec.min_args, spec.max_args or spec.min_args + 2))
        return f"{name}({', '.join(draw(numeric(depth - 1)) for _ in range(count))})"
    if shape == 5:
        return f"({draw(numeric(depth - 1))} if {draw(boolean(depth - 1))} else {draw(numeric(depth - 1))})"  # noqa: E501
    return f"ms('{draw(st.sampled_from(['1s', '1h', '90m']))}')"


@st.composite
def boolean(draw: st.DrawFn, depth: int = 3) -> str:
    shape = draw(st.integers(0, 5 if depth > 0 else 1))
    if shape == 0:
        return draw(st.sampled_from(["True", "False", "true", "false"]))
    if shape == 1 or depth <= 0:
        terms = [draw(numeric(max(depth - 1, 0))) for _ in range(draw(st.integers(2, 3)))]
        text = terms[0]
        for term in terms[1:]:
            text += f" {draw(st.sampled_from(COMPARE))} {term}"
        return f"({text})"
    if shape == 2:
        word = draw(st.sampled_from(["and", "or"]))
        parts = [draw(boolean(depth - 1)) for _ in range(draw(st.integers(2, 3)))]
        return "(" + f" {word} ".join(parts) + ")"
    if shape == 3:
        return f"(not {draw(boolean(depth - 1))})"
    if shape == 4:
        return f"({draw(boolean(depth - 1))} == {draw(boolean(depth - 1))})"
    return f"({draw(boolean(depth - 1))} if {draw(boolean(depth - 1))} else {draw(boolean(depth - 1))})"  # noqa: E501


def outcome(run: Any, expr: Expr) -> tuple[str, str, str]:
    env = env_for(Ctx(SNAP, "test", SYMBOL, {}, NOW), expr.resolvers)
    try:
        got = run(expr, env)
    except EvalError as exc:
        return ("error", "", str(exc))
    return ("value", type(got).__name__, str(got))


def check_same(text: str, kind: str) -> None:
    try:
        expr = compile_expr(text, kind, SCOPE)
    except ExprError:
        assume(False)  # refused at load (a constant division by zero...): no run-time to compare
        raise
    assert outcome(value, expr) == outcome(Reference().value, expr), text


@settings(max_examples=400, deadline=None)
@given(numeric())
def test_numbers_are_what_the_tree_walk_computes(text: str) -> None:
    check_same(text, NUM)


@settings(max_examples=400, deadline=None)
@given(boolean())
def test_conditions_are_what_the_tree_walk_computes(text: str) -> None:
    check_same(text, "boolean")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("position.qty == 0 and 1 / 0 > 1", ("value", "bool", "False")),  # and short-circuits
        ("position.qty != 0 or 1 / 0 > 1", ("value", "bool", "True")),
        ("3 < position.qty < 1 / 0", ("value", "bool", "False")),  # a chain stops at false
        ("1 < 2 < price.mark", ("value", "bool", "True")),
        ("(1 / 0 if position.qty > 0 else 1) == 1", ("value", "bool", "True")),
        ("price.mark ** 65 > 0", ("error", "", "exponent 65 is too large (at most 64)")),
        ("7 // position.qty == -3", ("value", "bool", "True")),  # Python's floor, not Decimal's
        ("7 % position.qty == -2", ("value", "bool", "True")),
        ("price.mark / (position.qty + 3) > 0", ("error", "", "division by zero")),
    ],
)
def test_compiled_semantics(text: str, expected: tuple[str, str, str]) -> None:
    expr = compile_expr(text, "boolean", SCOPE)
    got = outcome(value, expr)
    assert got[:2] == expected[:2]
    assert got[2].startswith(expected[2])
    assert got == outcome(Reference().value, expr)


# --- only the whitelist reaches compile() ------------------------------------------------------


def _name(text: str) -> ast.expr:
    return ast.Name(id=text, ctx=ast.Load())


@pytest.mark.parametrize(
    "node",
    [
        ast.Attribute(value=_name("price.mark"), attr="__class__", ctx=ast.Load()),
        _name("__import__"),
        _name("price.mark"),  # not one of the expression's keys
        ast.Subscript(value=_name("k"), slice=ast.Constant(value=0), ctx=ast.Load()),
        ast.Call(func=_name("eval"), args=[ast.Constant(value="1")], keywords=[]),
        ast.Call(func=_name("min"), args=[], keywords=[ast.keyword(arg="x", value=_name("k"))]),
        ast.Call(func=_name("ms"), args=[ast.Constant(value="1h")], keywords=[]),
        ast.Constant(value="text"),
        ast.Constant(value=1),  # literals are Decimals by now
        ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=ast.Constant(value=True),
        ),
        ast.BinOp(left=_name("k"), op=ast.BitOr(), right=_name("k")),
        ast.Compare(left=_name("k"), ops=[ast.In()], comparators=[_name("k")]),
        ast.NamedExpr(target=ast.Name(id="x", ctx=ast.Store()), value=_name("k")),
        ast.JoinedStr(values=[]),
    ],
    ids=lambda n: type(n).__name__,
)
def test_codegen_refuses_what_is_not_whitelisted(node: ast.expr) -> None:
    with pytest.raises(CodegenError):
        to_function(node, ["k"])


def test_compiled_code_sees_no_builtins_and_only_its_bindings() -> None:
    text = "min(price.mark, 2) * 3 // 2 > 1 and not position.is_open"
    fn: Any = compile_expr(text, "boolean", SCOPE).fn
    namespace = fn.__globals__
    assert namespace["__builtins__"] == {}
    bound = {k: v for k, v in namespace.items() if k != "__builtins__"}
    ours = [*(f.impl for f in FUNCTIONS.values()), *OPERATORS.values()]
    assert all(isinstance(v, Decimal) or any(v is o for o in ours) for v in bound.values())
    assert set(fn.__code__.co_names) <= set(bound)  # the only names the code looks up


@pytest.mark.parametrize("text", ["ms('90m')", "ms('1h') + 1", "ms('2d') > ms('47h')"])
def test_every_function_the_reference_is_given_means_what_the_loader_folds(text: str) -> None:
    """The reference interpreter calls each function's own ``impl`` (``ms`` included, no dummy)
    and agrees with the value ``ms()`` folds to when the file loads."""
    want = Reference().eval(text)  # simpleeval calls FUNCTIONS["ms"].impl on the text
    expr = compile_expr(text, "boolean" if ">" in text else "number", SCOPE)
    assert outcome(value, expr) == ("value", type(want).__name__, str(want))


def test_a_hostile_expression_cannot_be_loaded() -> None:
    for text in ["().__class__", "price.__class__", "__import__('os')", "price._ctx > 0"]:
        with pytest.raises(ExprError):
            compile_expr(text, "boolean", SCOPE)


# --- results are immutable values, the same the constructors make ---------------------------------


def test_results_are_the_same_values_the_constructors_make() -> None:
    s = strategy(
        "  - name: a\n    when: price.mark > 1\n    cancel: {}\n"
        "  - name: b\n    when: price.mark < 1\n    cancel: {}\n"
    )
    evaluation = evaluate(s, snapshot(), {}, NOW)
    again = Evaluation(
        evaluation.strategy,
        evaluation.version,
        evaluation.slot,
        evaluation.now_ms,
        tuple(
            RuleResult(r.rule, r.status, r.reason, r.intents, r.values) for r in evaluation.results
        ),
    )
    assert type(evaluation) is Evaluation
    assert evaluation == again
    assert hash(evaluation) == hash(again)
    assert repr(evaluation) == repr(again)
    for result, made in zip(evaluation.results, again.results, strict=True):
        assert type(result) is RuleResult
        assert result == made
        assert hash(result) == hash(made)
        assert repr(result) == repr(made)
        with pytest.raises(AttributeError):
            result.reason = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("mark", "shown"),
    [("6E+4", "60000"), ("1E-7", "0.0000001"), ("60000.50", "60000.50"), ("1.5E+2", "150")],
)
def test_inputs_are_plain_decimal_text(mark: str, shown: str) -> None:
    s = strategy("  - name: r\n    when: price.mark > 0\n    cancel: {}\n")
    tickers = {SYMBOL: ticker(mark, bPx=D(mark))}
    result = evaluate(s, snapshot(tickers=tickers), {}, NOW).result("r")
    assert result.inputs == {"price.mark": shown}


def test_inputs_show_infinity_and_booleans() -> None:
    s = strategy(
        "  - name: r\n    when: rule.last_fire_ago > 0 and not position.is_open\n    cancel: {}\n"
    )
    result = evaluate(s, snapshot(), {}, NOW).result("r")
    assert result.inputs == {"rule.last_fire_ago": "Infinity", "position.is_open": "false"}


# --- gates: asked only when something can hold the rule back -----------------------------------


@settings(max_examples=150, deadline=None)
@given(
    enabled=st.booleans(),
    strategy_enabled=st.booleans(),
    keep_open=st.booleans(),
    cooldown=st.sampled_from(["", "5m"]),
    max_fires=st.sampled_from(["", "{count: 1, per: 1h}"]),
    resting=st.integers(0, 2),
    fired_ago=st.sampled_from([None, 0, 2, 30]),
)
def test_a_rule_is_held_back_exactly_when_its_gate_says(
    enabled: bool,
    strategy_enabled: bool,
    keep_open: bool,
    cooldown: str,
    max_fires: str,
    resting: int,
    fired_ago: int | None,
) -> None:
    rule = "  - name: r\n    when: price.mark > 0\n    cancel: {}\n"
    rule += f"    enabled: {str(enabled).lower()}\n    keep_open: {str(keep_open).lower()}\n"
    rule += f"    cooldown: {cooldown}\n" if cooldown else ""
    rule += f"    max_fires: {max_fires}\n" if max_fires else ""
    header = "strategy: test\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    header += f"enabled: {str(strategy_enabled).lower()}\nrules:\n"
    s = strategy(rule, header=header)
    slot = NOW // 60_000
    orders = [open_order(client_order_id("test", "r", slot - 3, k)) for k in range(resting)]
    activity: Activity = {}
    if fired_ago is not None:
        activity["r"] = RuleActivity(fire_times_ms=(NOW - fired_ago * 60_000,))
    result = evaluate(s, snapshot(open_orders=orders), activity, NOW).result("r")
    blocked = gate(
        s.rules[0],
        activity.get("r"),
        now_ms=NOW,
        period_ms=60_000,
        open_orders=resting if keep_open else 0,
        strategy_enabled=strategy_enabled,
    )
    if blocked is None:
        assert result.status is RuleStatus.FIRED
    else:
        assert (result.status, result.reason) == blocked
