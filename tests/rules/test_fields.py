"""Each context field is declared once (``ROOTS`` and the views' ``FIELDS``), and that one entry
is what every expression reads: every declared name compiles, evaluates to a value of its
declared type on a full snapshot, and reads the same as an attribute of its view."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from botkit.exchange.models import LimitPrice
from botkit.rules.context import BOOL, NUM, ROOTS, AnyKey, Ctx, Method, View
from botkit.rules.expr import Scope, compile_expr
from botkit.rules.runtime import env_for, value
from tests.rules.helpers import NOW, SYMBOL, position, ticker
from tests.rules.test_context import HISTORY

SNAP = type(HISTORY)(
    NOW,
    HISTORY.balance,
    HISTORY.instruments,
    {SYMBOL: ticker(qty=Decimal(7))},
    positions=[position("2", cTime=NOW - 60_000)],
    fills=HISTORY.fills,
    order_history=HISTORY.order_history,
    position_history=HISTORY.position_history,
    limit_prices={SYMBOL: LimitPrice(symbol=SYMBOL, buyLmt=Decimal(61000), sellLmt=Decimal(59000))},
)
SCOPE = Scope({}, "r", "BOTH")


def _leaves(path: str, kind: Any, depth: int = 0) -> list[tuple[str, str]]:
    """(expression, declared type) of every value reachable from ``path`` (views followed
    twice deep: ``history.fills.mine.last.px``)."""
    if kind in (NUM, BOOL):
        return [(path, kind)]
    if isinstance(kind, AnyKey):
        key = "BTC_USDT_PERP" if path == "symbols" else "USDT"  # a symbol, a currency
        return _leaves(f"{path}.{key}", kind.of, depth)
    if not (isinstance(kind, type) and issubclass(kind, View)) or depth > 3:
        return []
    out: list[tuple[str, str]] = []
    record: Any = getattr(kind, "RECORD", None)
    for name, field in kind.FIELDS.items():
        if isinstance(field.kind, Method):
            args = [
                "'1h'" if a == "window" else f"'{next(iter(record.NUMS))}'" for a in field.kind.args
            ]
            out.append((f"{path}.{name}({', '.join(args)})", field.kind.returns))
        else:
            out += _leaves(f"{path}.{name}", field.kind, depth + 1)
    return out


LEAVES = [
    leaf for name, root in ROOTS.items() if name != "params" for leaf in _leaves(name, root.kind)
]


def test_the_declared_fields_reach_every_root_and_more_than_two_hundred_values() -> None:
    assert {text.split(".")[0] for text, _ in LEAVES} == set(ROOTS) - {"params"}
    assert len(LEAVES) > 200


@pytest.mark.parametrize(("text", "kind"), LEAVES, ids=[t for t, _ in LEAVES])
def test_every_declared_field_evaluates_to_its_declared_type(text: str, kind: str) -> None:
    expr = compile_expr(text, kind, SCOPE)
    got = value(expr, env_for(Ctx(SNAP, "test", SYMBOL, {}, NOW), expr.resolvers))
    assert type(got) is (Decimal if kind == NUM else bool)


ATTRIBUTES = [(t, k) for t, k in LEAVES if "(" not in t and "." in t]
"""The leaves reached through attributes only (no method call, not a bare root)."""


@pytest.mark.parametrize(("text", "kind"), ATTRIBUTES, ids=[t for t, _ in ATTRIBUTES])
def test_a_field_reads_the_same_as_an_attribute_of_its_view(text: str, kind: str) -> None:
    expr = compile_expr(text, kind, SCOPE)
    ctx = Ctx(SNAP, "test", SYMBOL, {}, NOW)
    root, *steps = text.split(".")
    read = ROOTS[root].read
    assert read is not None
    obj: Any = read(ctx, "BOTH" if root == "position" else "r")
    for step in steps:
        obj = (
            obj.key(step)
            if not isinstance(obj, View) or step not in type(obj).FIELDS
            else getattr(obj, step)
        )
    assert obj == value(expr, env_for(Ctx(SNAP, "test", SYMBOL, {}, NOW), expr.resolvers))


def test_a_fills_value_is_a_number_not_the_helper_of_the_same_name() -> None:
    """``history.fills.last.value`` (a fill's filled value) read the record view's own helper
    method ``value`` (a function) before each field was read through its declaration."""
    fills = [f.model_copy(update={"value": Decimal(250)}) for f in SNAP.fills]
    snap = type(SNAP)(NOW, SNAP.balance, SNAP.instruments, SNAP.tickers, fills=fills)
    expr = compile_expr("history.fills.last.value > 200", BOOL, SCOPE)
    assert value(expr, env_for(Ctx(snap, "test", SYMBOL, {}, NOW), expr.resolvers)) is True
