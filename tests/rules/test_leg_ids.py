"""Each order a rule places is named by :func:`~botkit.rules.ids.client_order_id` of its
strategy, rule, slot and leg, for every leg a rule may place (``MAX_LEGS``: one- and
two-character legs): the evaluation must name each order as the id function does."""

from __future__ import annotations

from botkit.intents import OrderIntent
from botkit.rules import client_order_id, evaluate
from botkit.rules.actions import MAX_LEGS
from tests.rules.helpers import NOW, snapshot, strategy

SLOT = NOW // 60_000


def test_every_leg_of_the_longest_ladder_is_named_by_the_id_function() -> None:
    """A ladder of ``MAX_LEGS`` rungs: leg k's id is ``client_order_id(..., k)`` and no two are
    alike. Fails if a leg's text is taken from the wrong position (e.g. k + 1) or the prefix is
    not the slot's."""
    rules = (
        "  - name: wall\n"
        "    when: price.mark > 0\n"
        "    place:\n"
        f"      ladder: {{side: BUY, count: {MAX_LEGS}, from_px: price.mark * 0.5,"
        " step_px: 1, sz: 1}\n"
    )
    intents = evaluate(strategy(rules), snapshot(), {}, NOW).result("wall").intents
    ids = [i.cl_ord_id for i in intents if isinstance(i, OrderIntent)]
    assert ids == [client_order_id("test", "wall", SLOT, k) for k in range(MAX_LEGS)]
    assert len(set(ids)) == MAX_LEGS


def test_a_slot_too_long_for_a_leg_is_an_error_of_the_rule_as_before() -> None:
    """A slot so far out that its prefix leaves no room for a leg's two characters: the id
    function's refusal, the rule's error (no order with a clipped or overlong id)."""
    rules = (
        "  - name: wall\n"
        "    when: price.mark > 0\n"
        "    place:\n"
        "      ladder: {side: BUY, count: 40, from_px: price.mark * 0.5, step_px: 1, sz: 1}\n"
    )
    far = 60_000 * 36**17  # a slot of 18 base-36 digits: 13 + 18 = 31 characters of prefix
    result = evaluate(strategy(rules), snapshot(now_ms=far), {}, far).result("wall")
    assert not result.intents
    assert "longer than 32 characters" in result.reason
