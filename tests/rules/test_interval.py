"""Interval evaluation of compiled expressions (botkit.rules.interval) is sound.

Every arithmetic result holds the plain Decimal result for any values inside the operands —
rounded by the context in any direction, at its precision —, a comparison or a truth that
returns is the plain one at every point, and an evaluation of a whole compiled expression that
returns gives the plain evaluation's truth at every point (which then does not fail).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from decimal import (
    ROUND_CEILING,
    ROUND_FLOOR,
    ROUND_HALF_EVEN,
    ROUND_HALF_UP,
    Decimal,
    localcontext,
)
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from botkit.rules.deps import Recheck
from botkit.rules.expr import ExprError, compile_expr
from botkit.rules.interval import Interval, Undecided
from tests.rules.test_compiled import SCOPE, boolean

D = Decimal

decimals = st.decimals(
    min_value=D("-1e6"), max_value=D("1e6"), allow_nan=False, allow_infinity=False, places=8
) | st.sampled_from([D(0), D(1), D(-1), D(3), D("0.1"), D("1e-8")])


@st.composite
def boxes(draw: st.DrawFn) -> tuple[Interval, list[Decimal]]:
    """An interval and points inside it (its ends among them)."""
    a, b = draw(decimals), draw(decimals)
    lo, hi = min(a, b), max(a, b)
    inside = [lo, hi]
    for _ in range(3):
        fraction = draw(st.integers(0, 1000))
        inside.append(lo + (hi - lo) * fraction / 1000)
    inside = [p for p in inside if lo <= p <= hi]
    return Interval(lo, hi), inside


ROUNDINGS = [ROUND_HALF_EVEN, ROUND_FLOOR, ROUND_CEILING, ROUND_HALF_UP]
BINARY: list[Callable[[Any, Any], Any]] = [
    operator.add, operator.sub, operator.mul, operator.truediv
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(boxes(), boxes(), st.sampled_from(BINARY), st.booleans())
def test_arithmetic_holds_every_rounded_result_of_the_points(
    left: tuple[Interval, list[Decimal]],
    right: tuple[Interval, list[Decimal]],
    op: Callable[[Any, Any], Any],
    point_right: bool,
) -> None:
    """The result interval (made in the default context) holds the operation of every pair of
    points rounded in any direction at the context's precision (a result rounded to nearest
    only, not outward, misses the ones rounded away)."""
    (a, a_points), (b, b_points) = left, right
    if point_right:  # an interval with a plain Decimal, as an expression's constants are
        b, b_points = b.lo, [b.lo]  # type: ignore[assignment]
    try:
        got = op(a, b)
    except Undecided:
        assert op is operator.truediv  # only a division by an interval holding zero refuses
        low, high = (b.lo, b.hi) if isinstance(b, Interval) else (b, b)
        assert low <= 0 <= high
        return
    assert isinstance(got, Interval)
    for x in a_points:
        for y in b_points:
            for rounding in ROUNDINGS:
                with localcontext() as ctx:
                    ctx.rounding = rounding
                    plain = op(x, y)
                assert got.lo <= plain <= got.hi, (x, y, rounding, got)


@settings(max_examples=300, deadline=None)
@given(boxes(), st.sampled_from([operator.neg, operator.pos, abs]))
def test_unary_operations_hold_every_point(
    box: tuple[Interval, list[Decimal]], op: Callable[[Any], Any]
) -> None:
    a, points = box
    got = op(a)
    for x in points:
        for rounding in ROUNDINGS:
            with localcontext() as ctx:
                ctx.rounding = rounding
                plain = op(x)
            assert got.lo <= plain <= got.hi


COMPARISONS: list[Callable[[Any, Any], Any]] = [
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(boxes(), boxes(), st.sampled_from(COMPARISONS), st.booleans())
def test_a_comparison_decided_is_the_plain_one_at_every_point(
    left: tuple[Interval, list[Decimal]],
    right: tuple[Interval, list[Decimal]],
    op: Callable[[Any, Any], Any],
    flip: bool,
) -> None:
    (a, a_points), (b, b_points) = left, right
    if flip:  # a Decimal on the left: Python asks the interval's reflected comparison
        a, a_points = a.lo, [a.lo]  # type: ignore[assignment]
    try:
        got = op(a, b)
    except Undecided:
        # undecided only when two pairs of points disagree (or a bound could): the ends do
        ends_a = [a.lo, a.hi] if isinstance(a, Interval) else [a]
        answers = {op(x, y) for x in ends_a for y in (b.lo, b.hi)}
        assert len(answers) > 1 or op in (operator.eq, operator.ne)
        return
    assert type(got) is bool
    for x in a_points:
        for y in b_points:
            assert op(x, y) is got


@given(boxes())
def test_the_truth_of_an_interval_is_decided_only_when_every_point_agrees(
    box: tuple[Interval, list[Decimal]],
) -> None:
    a, points = box
    try:
        got = bool(a)
    except Undecided:
        assert a.lo <= 0 <= a.hi
        assert a.lo != a.hi
        return
    assert all(bool(p) is got for p in points)


def test_what_an_interval_cannot_bound_refuses() -> None:
    a = Interval(D(1), D(2))
    with pytest.raises(Undecided):
        _ = a / Interval(D(-1), D(1))
    with pytest.raises(Undecided):
        _ = a < Interval(D("1.5"), D(3))
    with pytest.raises(TypeError):
        _ = a + 1
    with pytest.raises(AttributeError):
        a.sqrt()  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="lo <= hi"):
        Interval(D(2), D(1))


MOVING = ["price.mark", "account.availMgn"]


@settings(max_examples=400, deadline=None)
@given(boolean(), st.data())
def test_a_compiled_condition_over_intervals_is_the_plain_one_at_every_point(
    text: str, data: st.DataObject
) -> None:
    """Random conditions of the compiler's own test (every operator and function) with
    ``price.mark`` and ``account.availMgn`` as intervals: when the interval evaluation returns
    (``Recheck.false_over`` proves it false, or it proves it true), the plain evaluation gives
    the same truth at every point of the box and does not fail."""
    try:
        expr = compile_expr(text, "boolean", SCOPE)
    except ExprError:
        assume(False)
        raise
    assume(expr.const is None)
    values: dict[str, Any] = {}
    boxes_: dict[str, tuple[Interval, list[Decimal]]] = {}
    for key in expr.names:
        if key.split("@")[0] in MOVING:
            boxes_[key] = data.draw(boxes())
            values[key] = boxes_[key][0]
        else:
            values[key] = data.draw(decimals)
    try:
        with localcontext():
            truth = bool(expr.fn(dict(values)))
    except Exception:  # undecided, unbounded or failing: nothing was claimed
        return
    points = [dict(values)]
    for _ in range(4):
        point = dict(values)
        for key, (_, inside) in boxes_.items():
            point[key] = data.draw(st.sampled_from(inside))
        points.append(point)
    for point in points:
        for key, (box, _) in boxes_.items():
            if isinstance(point[key], Interval):
                point[key] = box.lo
        assert bool(expr.fn(point)) is truth, (text, point)
    recheck = Recheck(expr.fn, {k: v for k, v in values.items() if k not in boxes_})
    assert recheck.false_over({k: v for k, v in values.items() if k in boxes_}) is (not truth)
