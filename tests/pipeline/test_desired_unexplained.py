"""``reconcile(..., explain=False)`` (the quiet skip's keep check, which only asks whether
anything changes) decides exactly what the explained reconcile decides: the same actions,
rungs, orders and intents; only an order kept within its tolerance carries no reason."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from botkit.exchange.models import OpenOrder, OrderSide
from botkit.intents import DeclaredOrder, KeepPolicy
from botkit.pipeline.desired import Action, RuleDiff, reconcile
from tests.pipeline.test_desired import SLOT, kid, want
from tests.rules.helpers import BTC, NOW, SYMBOL, open_order


def _run(
    declared: list[DeclaredOrder], resting: list[OpenOrder], policy: KeepPolicy, explain: bool
) -> RuleDiff:
    return reconcile(
        strategy="test", rule="r", symbol=SYMBOL, declared=declared, policy=policy,
        resting=resting, sent=((NOW - 20_000, kid(0)),), now_ms=NOW, slot=SLOT,
        instrument=BTC, explain=explain,
    )  # fmt: skip


@given(
    wanted=st.lists(st.integers(-300, 300), min_size=0, max_size=4),
    rested=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 120_000)), max_size=5),
    tolerance=st.sampled_from([Decimal(0), Decimal(2), Decimal(10), Decimal(25)]),
    ticks=st.booleans(),
    min_rest=st.sampled_from([0, 30_000]),
    max_replacements=st.sampled_from([None, 0, 1, 3]),
)
def test_an_unexplained_reconcile_decides_the_same(
    wanted: list[int],
    rested: list[tuple[int, int]],
    tolerance: Decimal,
    ticks: bool,
    min_rest: int,
    max_replacements: int | None,
) -> None:
    policy = KeepPolicy(
        tolerance, tolerance_ticks=ticks, min_rest_ms=min_rest, max_replacements=max_replacements
    )
    declared = [want(i, str(Decimal(59000) + Decimal(d) / 10)) for i, d in enumerate(wanted)]
    resting = [
        open_order(kid(rung), px=str(Decimal(59000) + Decimal(rung)), cTime=NOW - age)
        for rung, age in rested
    ]
    told = _run(declared, resting, policy, explain=True)
    quick = _run(declared, resting, policy, explain=False)
    assert len(quick.decisions) == len(told.decisions)
    for a, b in zip(told.decisions, quick.decisions, strict=True):
        assert (b.action, b.rung, b.resting, b.intent) == (a.action, a.rung, a.resting, a.intent)
        if b.reason != a.reason:
            assert a.action is Action.KEEP
            assert a.reason.startswith("within tolerance")
            assert b.reason == ""
    assert quick.changes == told.changes


def test_an_order_within_tolerance_is_kept_without_a_reason() -> None:
    diff = _run([want(0, "59050")], [open_order(kid(0))], KeepPolicy(), explain=False)
    (decision,) = diff.decisions
    assert (decision.action, decision.reason) == (Action.KEEP, "")
    diff = _run(
        [want(0, "59100", side=OrderSide.BUY)], [open_order(kid(0))], KeepPolicy(), explain=False
    )
    assert diff.decisions[-1].action is Action.REPLACE
    assert diff.decisions[-1].reason.startswith("price drifted 0.17 %")
