"""Strategy expressions under attack: no escape from the sandbox (dunder attributes, builtins,
imports, comprehensions, lambdas), and huge exponents, deep nesting and long text all refused
at load or bounded at run time. Every expression goes through the real path: a strategy file
loaded (``botkit check`` / the service), then evaluated against a snapshot, each step bounded
in time. A refused expression is a located problem; an evaluation never raises.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.errors import StrategyFileError
from botkit.rules import RuleStatus, evaluate, loads
from tests.fuzz.bounded import within
from tests.fuzz.profiles import FUZZ
from tests.rules.helpers import HEAD_RULES, NOW, snapshot

FILE = "fuzz.yaml"


def _strategy_text(condition: str, amount: str = "1") -> str:
    """One rule whose condition and order size are the expressions under test."""
    return HEAD_RULES + (
        "  - name: r\n"
        f"    when: {json.dumps(condition)}\n"
        "    place:\n"
        f"      order: {{side: BUY, type: LIMIT, px: price.mark * 0.9, sz: {json.dumps(amount)}}}\n"
    )


def _load_and_run(condition: str, amount: str = "1") -> RuleStatus | None:
    """None when the file is refused (with located problems), else the rule's status."""
    text = _strategy_text(condition, amount)
    with within(3.0, f"loading {condition[:60]!r}"):
        try:
            strategy = loads(text, FILE)
        except StrategyFileError as exc:
            problems = exc.problems
        else:
            problems = []
    if problems:
        for problem in problems:
            assert problem.where.file == FILE, problem.format()
            assert problem.where.line is not None, problem.format()
        return None
    with within(3.0, f"evaluating {condition[:60]!r}"):
        evaluation = evaluate(strategy, snapshot(), {}, NOW)
    (result,) = evaluation.results
    for intent in evaluation.intents:  # whatever an expression computes, an order stays sane
        sz = getattr(intent, "sz", None)
        if sz is not None:
            assert sz.is_finite()
            assert sz > 0
    return result.status


ESCAPES = [
    "__import__('os').system('true')",
    "price.__class__",
    "price.mark.__class__.__mro__",
    "price._snapshot",
    "().__class__.__bases__[0].__subclasses__()",
    "open('/etc/passwd')",
    "eval('1')",
    "exec('x = 1')",
    "getattr(price, 'mark') > 0",
    "globals()",
    "(lambda: 1)() > 0",
    "[x for x in (1, 2)] == 1",
    "{1: 2}",
    "f'{price}' == 'x'",
    "price.mark if __debug__ else 0",
    "price['mark'] > 0",
    "type(price) == 1",
    "breakpoint()",
    "price.mark.real > 0",
    "position.qty.as_integer_ratio()",
]


@pytest.mark.parametrize("condition", ESCAPES)
def test_no_expression_escapes_the_sandbox(condition: str) -> None:
    assert _load_and_run(condition) is None  # refused at load, with a located problem


BOUNDED = [
    "10 ** 10 ** 10 > 0",
    "9 ** 9 ** 9 > 0",
    "price.mark ** 1e9 > 0",
    "price.mark ** 64 ** 64 > 0",
    "(price.mark ** 64) ** 64 > 0",
    "1e999999 * 1e999999 > 0",
    "1e999999999 > price.mark",
    "1e-999999999 < price.mark",
    "floor(price.mark, 1e-999999) > 0",
    "ceil(1e999999, 1e-999999) > 0",
    "sqrt(-price.mark) > 0",
    "price.mark // 0 > 0",
    "price.mark % 0 > 0",
    "(" * 150 + "price.mark" + ")" * 150 + " > 0",
    "-" * 900 + "1 > 0",
    "not " * 240 + "true",
    "1" + " + 1" * 300 + " > 0",
    "price.mark > " + "9" * 990,
    "'" + "a" * 900 + "' == 'a'",
    "x" * 2000,
    "min(" * 60 + "1" + ", 2)" * 60 + " > 0",
    "ms('99999999999999d') > 0",
    "price.mark > 0" + " and price.mark > 0" * 60,
]


@pytest.mark.parametrize("condition", BOUNDED, ids=[c[:40] for c in BOUNDED])
def test_hostile_arithmetic_and_shapes_are_refused_or_bounded(condition: str) -> None:
    status = _load_and_run(condition)
    assert status in (None, RuleStatus.ERROR, RuleStatus.CONDITION_FALSE, RuleStatus.FIRED)


@pytest.mark.parametrize(
    "amount",
    ["1e999999", "-1", "0", "price.mark ** 64", "1e-30", "account.availMgn * 1e30", "0.5"],
)
def test_an_order_size_from_a_hostile_expression_never_makes_a_wrong_order(amount: str) -> None:
    _load_and_run("true", amount)


# --- random expressions from the grammar ---------------------------------------------------

NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=6).map(lambda d: format(d, "f")),
    st.sampled_from(["1e999999", "1e-999999", "0", "0.0", "1_000", "9" * 200]),
)
NAMES = st.sampled_from(
    [
        "price.mark",
        "price.last",
        "price.high_24h",
        "position.qty",
        "position.upl",
        "account.availMgn",
        "strategy.open_orders",
        "rule.last_fire_ago",
        "history.fills.count('1h')",
        "params.nope",
        "nope",
        "price.nope",
    ]
)


def _numeric(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]), children)
    calls = st.tuples(
        st.sampled_from(["min", "max", "floor", "ceil", "round", "clamp", "sqrt", "abs", "ms"]),
        st.lists(children, min_size=0, max_size=3),
    )
    return st.one_of(
        binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        children.map(lambda c: f"-{c}"),
        calls.map(lambda t: f"{t[0]}({', '.join(t[1])})"),
    )


NUMERIC = st.recursive(NUMBERS | NAMES, _numeric, max_leaves=12)


def _boolean(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(["and", "or"]), children).map(" ".join),
        children.map(lambda c: f"not ({c})"),
        st.tuples(NUMERIC, children, NUMERIC).map(lambda t: f"({t[0]} if {t[1]} else {t[2]}) > 0"),
    )


COMPARISON = st.tuples(NUMERIC, st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), NUMERIC).map(
    " ".join
)
CONDITION = st.recursive(COMPARISON | st.sampled_from(["true", "false"]), _boolean, max_leaves=6)


@FUZZ
@given(condition=CONDITION, amount=NUMERIC)
def test_random_expressions_load_or_are_located_and_evaluate_within_bounds(
    condition: str, amount: str
) -> None:
    _load_and_run(condition, amount)


@FUZZ
@given(condition=st.text(max_size=200))
def test_random_text_as_a_condition_is_refused_or_runs(condition: str) -> None:
    _load_and_run(condition)
