"""Expressions: Decimal from the source text, functions, operators, run-time errors."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.rules import RuleStatus, evaluate
from tests.rules.helpers import HEAD_RULES, NOW, snapshot, strategy

D = Decimal


def value(expr: str, **snap: object) -> str:
    """What ``expr`` evaluates to, read back from the size of a one-order rule."""
    s = strategy(f"  - name: r\n    place:\n      order: {{side: BUY, sz: '{expr}'}}\n")
    result = evaluate(s, snapshot(**snap), {}, NOW).result("r")  # type: ignore[arg-type]
    assert result.status is RuleStatus.FIRED, result.reason
    return format(result.intents[0].sz, "f")  # type: ignore[union-attr]


def truth(expr: str, **snap: object) -> bool:
    s = strategy(f"  - name: r\n    when: '{expr}'\n    cancel: {{}}\n")
    result = evaluate(s, snapshot(**snap), {}, NOW).result("r")  # type: ignore[arg-type]
    assert result.status in (RuleStatus.FIRED, RuleStatus.CONDITION_FALSE), result.reason
    return result.fired


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("0.1 + 0.2", "0.3"),  # exact: the literals never pass through float
        ("1.10 * 3", "3.30"),
        ("1e-3 * 1000", "1.000"),
        ("1_000.5", "1000.5"),
        ("7 // 2", "3"),
        ("-7 // 2 + 10", "6"),  # Python's floor division, not Decimal's truncation
        ("-7 % 3 + 1", "3"),
        ("2 ** 10", "1024"),
        ("10 / 4", "2.5"),
        ("min(3, 1, 2)", "1"),
        ("max(3, 1, 2)", "3"),
        ("abs(-2.5)", "2.5"),
        ("floor(1234.56, 0.5)", "1234.5"),
        ("ceil(1234.56, 0.5)", "1235.0"),
        ("floor(1234.56)", "1234"),
        ("round(2.5)", "3"),
        ("round(1234.56, 0.1)", "1234.6"),
        ("clamp(5, 1, 3)", "3"),
        ("sqrt(16)", "4"),
        ('ms("1h30m") / 1000', "5400"),
        ("3 if 1 < 2 else 4", "3"),
        ("price.mark * 0.995", "59700.000"),
        ("floor(account.availMgn * 0.1 / (price.mark * instrument.ctVal), instrument.lotSz)", "16"),
    ],
)
def test_numeric_expression_evaluates_in_decimal(expr: str, expected: str) -> None:
    assert value(expr) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("1 < 2 < 3", True),
        ("1 < 3 < 2", False),
        ("not 1 > 2", True),
        ("1 == 1.0", True),
        ("price.mark != 60000 or position.qty == 0", True),
        ("position.is_open and position.qty > 0", False),
        ("position.is_open == False", True),
        ("position.is_open == false or true", True),
    ],
)
def test_condition_evaluates_to_a_boolean(expr: str, expected: bool) -> None:
    assert truth(expr) is expected


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("1 / (position.qty)", "division by zero in '1 / (position.qty)'"),
        ("sqrt(position.qty - 1)", "invalid arithmetic"),
        ("floor(1, position.qty)", "step must be > 0, got 0"),
        ("2 ** (position.qty + 100)", "exponent 100 is too large (at most 64)"),
        ("price.bid", "price.bid is not available for BTC_USDT_PERP now"),
    ],
)
def test_runtime_error_is_reported_with_rule_and_expression(expr: str, message: str) -> None:
    s = strategy(f"  - name: r\n    place:\n      order: {{side: BUY, sz: '{expr}'}}\n")
    snap = snapshot()
    snap.tickers["BTC_USDT_PERP"] = snap.tickers["BTC_USDT_PERP"].model_copy(update={"bPx": None})
    result = evaluate(s, snap, {}, NOW).result("r")
    assert result.status is RuleStatus.ERROR
    assert result.reason.startswith("rule 'r': ")
    assert message in result.reason
    assert result.intents == ()


def test_constant_expressions_are_folded_at_load() -> None:
    s = strategy(
        "  - name: r\n    place:\n      order: {side: BUY, sz: '2 * 3 + ms(\"1s\") / 1000'}\n"
    )
    action = s.rules[0].actions[0]
    assert action.sz.const == D(7)  # type: ignore[union-attr]


def test_params_are_constants() -> None:
    s = strategy(
        "  - name: r\n    place:\n      order: {side: BUY, sz: params.size * 2}\n",
        header=HEAD_RULES.replace("rules:\n", "params: {size: 1.5}\nrules:\n"),
    )
    assert s.rules[0].actions[0].sz.const == D("3.0")  # type: ignore[union-attr]
    assert s.params == {"size": D("1.5")}


def test_an_expression_is_evaluated_once_per_context_value() -> None:
    s = strategy(
        "  - name: a\n    when: price.mark > 1\n    cancel: {}\n"
        "  - name: b\n    when: price.mark > 2 and price.mark < 10**9\n    cancel: {}\n"
    )
    ev = evaluate(s, snapshot(), {}, NOW)
    assert ev.result("a").inputs == {"price.mark": "60000"}
    assert ev.result("b").inputs == {"price.mark": "60000"}
