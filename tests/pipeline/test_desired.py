"""The pure reconcile of declared orders: each decision and its reason, from plain values."""

# ruff: noqa: E501  (the tables hold one case per line, unwrapped)

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.exchange.models import OpenOrder, OrderSide, OrderType
from botkit.intents import DeclaredOrder, KeepPolicy
from botkit.pipeline.desired import Action, Decision, FillFact, RuleDiff, reconcile
from botkit.rules.ids import client_order_id, kept_order_id
from tests.rules.helpers import BTC, NOW, SYMBOL, open_order

SLOT = NOW // 60_000
DEFAULT = KeepPolicy()


def kid(rung: int, generation: int = SLOT - 5) -> str:
    return kept_order_id("test", "r", generation, rung)


def want(rung: int, px: str, sz: int = 1, side: OrderSide = OrderSide.BUY) -> DeclaredOrder:
    return DeclaredOrder(rung=rung, side=side, type=OrderType.LIMIT, sz=Decimal(sz), px=Decimal(px))


def run(
    declared: list[DeclaredOrder],
    resting: Sequence[OpenOrder] = (),
    policy: KeepPolicy = DEFAULT,
    sent: tuple[tuple[int, str], ...] = (),
    filled: dict[str, FillFact] | None = None,
) -> RuleDiff:
    return reconcile(
        strategy="test", rule="r", symbol=SYMBOL, declared=declared, policy=policy,
        resting=resting, sent=sent, now_ms=NOW, slot=SLOT, instrument=BTC,
        filled=(filled or {}).get,
    )  # fmt: skip


def actions(diff: RuleDiff) -> list[tuple[Action, int | None]]:
    return [(d.action, d.rung) for d in diff.decisions]


def test_a_declared_order_with_nothing_resting_is_placed_under_a_kept_id() -> None:
    diff = run([want(0, "59000")])
    (decision,) = diff.decisions
    assert (decision.action, decision.reason) == (Action.PLACE, "declared, nothing rests")
    assert decision.intent is not None
    assert decision.intent.cl_ord_id == kept_order_id("test", "r", SLOT, 0)


@pytest.mark.parametrize(
    ("px", "policy", "action", "reason"),
    [
        ("59050", KeepPolicy(), Action.KEEP, "within tolerance: 0.08 % ≤ 0.10 %"),
        ("59100", KeepPolicy(), Action.REPLACE, "price drifted 0.17 % > tolerance 0.10 % (59000 → 59100)"),
        ("59000.3", KeepPolicy(Decimal(3), tolerance_ticks=True), Action.KEEP, "within tolerance: 3 tick(s) ≤ 3 tick(s)"),
        ("59000.4", KeepPolicy(Decimal(3), tolerance_ticks=True), Action.REPLACE, "price drifted 4 tick(s) > tolerance 3 tick(s) (59000 → 59000.4)"),
    ],
)  # fmt: skip
def test_a_resting_order_is_kept_within_tolerance_and_replaced_beyond(
    px: str, policy: KeepPolicy, action: Action, reason: str
) -> None:
    diff = run([want(0, px)], [open_order(kid(0))], policy)
    (decision,) = diff.decisions
    assert (decision.action, decision.reason) == (action, reason)


def test_a_replacement_gets_the_next_generation_and_is_listed_after_the_cancels() -> None:
    resting = [open_order(kid(0)), open_order(kid(1), px="58000")]
    diff = run([want(0, "60000")], resting, sent=((NOW - 1, kid(0, SLOT)),))
    assert actions(diff) == [(Action.CANCEL, 1), (Action.REPLACE, 0)]
    assert diff.decisions[0].reason == "no longer declared (the rule declares 1 order(s))"
    replacement = diff.decisions[1].intent
    assert replacement is not None
    assert replacement.cl_ord_id == kept_order_id("test", "r", SLOT + 1, 0)  # never reused
    assert [o.clOrdId for o in diff.cancels] == [kid(1), kid(0)]


def test_size_side_and_flags_changes_replace() -> None:
    assert (
        "size changed: 1 → 2"
        in run([want(0, "59000", sz=2)], [open_order(kid(0))]).decisions[0].reason
    )
    sell = want(0, "59000", side=OrderSide.SELL)
    assert "side changed: BUY → SELL" in run([sell], [open_order(kid(0))]).decisions[0].reason


def test_when_nothing_is_declared_every_order_of_the_rule_is_cancelled() -> None:
    stray = open_order(client_order_id("test", "r", SLOT, 0))
    diff = run([], [open_order(kid(0)), stray])
    assert actions(diff) == [(Action.CANCEL, None), (Action.CANCEL, 0)]
    assert diff.decisions[1].reason == "no longer declared (the condition is false)"


def test_a_rung_that_rests_twice_keeps_its_newest_order() -> None:
    diff = run([want(0, "59000")], [open_order(kid(0, SLOT - 9)), open_order(kid(0))])
    assert actions(diff) == [(Action.CANCEL, 0), (Action.KEEP, 0)]
    assert diff.decisions[0].resting is not None
    assert diff.decisions[0].resting.clOrdId == kid(0, SLOT - 9)


def test_min_rest_and_max_replacements_keep_a_drifted_order() -> None:
    young = open_order(kid(0), cTime=NOW - 10_000)
    diff = run([want(0, "60000")], [young], KeepPolicy(min_rest_ms=30_000))
    assert diff.decisions[0].action is Action.KEEP
    assert diff.decisions[0].reason.endswith("but it rested 10s < min_rest 30s")
    sent = ((NOW - 300_000, kid(0, SLOT - 6)), (NOW - 20_000, kid(0)))  # one re-placement
    diff = run([want(0, "60000")], [open_order(kid(0))], KeepPolicy(max_replacements=1), sent)
    assert diff.decisions[0].action is Action.KEEP
    assert (
        "1 re-placement(s) in the last minute reach max_replacements 1" in diff.decisions[0].reason
    )


@pytest.mark.parametrize(
    ("refill", "action", "reason"),
    [
        (None, Action.WAIT, "filled 2m ago; refill: never"),
        (300_000, Action.WAIT, "filled 2m ago; refill after 5m: due in 3m"),
        (60_000, Action.PLACE, "refill: "),
    ],
)
def test_a_filled_rung_is_placed_again_as_refill_says(
    refill: int | None, action: Action, reason: str
) -> None:
    sent = ((NOW - 600_000, kid(0)),)
    fill = {kid(0): FillFact(NOW - 120_000, Decimal(59000))}
    diff = run([want(0, "59000")], [], KeepPolicy(refill_ms=refill), sent, fill)
    (decision,) = diff.decisions
    assert decision.action is action
    assert reason in decision.reason


def test_a_gone_order_that_did_not_fill_is_placed_again_at_once() -> None:
    sent = ((NOW - 600_000, kid(0)),)
    diff = run([want(0, "59000")], [], KeepPolicy(refill_ms=None), sent)
    assert diff.decisions[0].action is Action.PLACE
    assert "no longer rests and did not fill" in diff.decisions[0].reason


def _summary_counted_per_action(diff: RuleDiff) -> str:
    """The summary as it was written first: each action counted on its own."""
    words = (
        (Action.KEEP, "kept"),
        (Action.PLACE, "to place"),
        (Action.REPLACE, "to replace"),
        (Action.CANCEL, "to cancel"),
        (Action.WAIT, "waiting"),
    )
    counts = ", ".join(
        f"{diff.count(a)} {word}" for a, word in words if diff.count(a) or a is Action.KEEP
    )
    return f"{diff.strategy}/{diff.rule}: {counts}" + (f" ({diff.held})" if diff.held else "")


@given(
    actions=st.lists(st.sampled_from(list(Action)), max_size=12),
    held=st.sampled_from(["", "its evaluation failed"]),
)
def test_a_summary_counts_each_action_as_counting_it_alone_does(
    actions: list[Action], held: str
) -> None:
    """Fails if the one-pass tally drops, doubles or reorders an action."""
    diff = RuleDiff("s", "r", tuple(Decision(a, None, "why") for a in actions), held)
    assert diff.summary() == _summary_counted_per_action(diff)
