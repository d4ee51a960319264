"""``quiet_until`` keeps its answers over bounded values only (botkit.rules.deps): asked again
with the same condition and the same values, it gives the answer it gave; any other condition,
value or unbounded read is worked out again."""

from __future__ import annotations

from decimal import Decimal

from botkit.intents import RuleActivity
from botkit.rules import RuleStatus
from botkit.rules.deps import Quiet, quiet_until
from botkit.rules.model import Rule
from tests.rules.helpers import strategy

FALSE = RuleStatus.CONDITION_FALSE
MINUTE = 60_000


def _rule(condition: str, name: str = "r") -> Rule:
    return strategy(f"  - name: {name}\n    when: {condition}\n    cancel: {{}}\n").rules[0]


def test_the_same_condition_over_other_bounded_values_is_worked_out_again() -> None:
    rule = _rule("position.qty == 0 and strategy.open_orders > 0")
    flat = {"position.qty@BOTH": Decimal(0), "strategy.open_orders": Decimal(0)}
    resting = {"position.qty@BOTH": Decimal(0), "strategy.open_orders": Decimal(3)}
    held = {"position.qty@BOTH": Decimal(1)}
    for _ in range(3):  # asked alternately: each answer is that of its own values
        assert quiet_until(rule, FALSE, flat) == Quiet(book=True, orders=True)
        assert quiet_until(rule, FALSE, resting) is None  # true: never quiet
        assert quiet_until(rule, FALSE, held) == Quiet(book=True)


def test_another_condition_over_the_same_values_is_worked_out_again() -> None:
    few = _rule("position.qty == 0 and strategy.open_orders > 0", "few")
    many = _rule("position.qty == 0 and strategy.open_orders > 5", "many")
    values = {"position.qty@BOTH": Decimal(0), "strategy.open_orders": Decimal(3)}
    for _ in range(2):
        assert quiet_until(few, FALSE, values) is None
        assert quiet_until(many, FALSE, values) == Quiet(book=True, orders=True)


def test_a_fires_count_is_worked_out_with_the_activity_each_time() -> None:
    # the same value read (one fire in the last 10 minutes) stands until that fire leaves the
    # window: a time that the activity says, not the value
    rule = _rule("rule.fires('10m') > 1")
    values = {"rule.fires('10m')@r": 1}
    for at in (5 * MINUTE, 7 * MINUTE, 5 * MINUTE):
        now = 12 * MINUTE
        activity = RuleActivity(fire_times_ms=(at,))
        got = quiet_until(rule, FALSE, values, activity, now)
        assert got is not None
        assert got.until_ms == at + 10 * MINUTE


def test_a_price_read_is_worked_out_at_each_price() -> None:
    rule = _rule("position.qty == 0 and price.mark < 100")
    low = {"position.qty@BOTH": Decimal(0), "price.mark": Decimal(90)}
    high = {"position.qty@BOTH": Decimal(0), "price.mark": Decimal(110)}
    for _ in range(2):
        assert quiet_until(rule, FALSE, low, recheck=True) is None  # true at 90
        got = quiet_until(rule, FALSE, high, recheck=True)
        assert got is not None
        assert len(got.rechecks) == 1


def test_a_negative_zero_is_not_taken_for_a_zero() -> None:
    """``-0`` equals ``0`` but a power tells them apart (``0 ** -1`` is Infinity, ``-0 ** -1``
    -Infinity): the condition below reads the open orders only when the quantity is ``-0``, so
    its verdict there must not be the one kept for ``0``. Fails if the key took -0 for 0."""
    rule = _rule("position.qty ** -1 < 0 and strategy.open_orders > 5")
    zero = {"position.qty@BOTH": Decimal("0"), "strategy.open_orders": Decimal(3)}
    negative = {"position.qty@BOTH": Decimal("-0"), "strategy.open_orders": Decimal(3)}
    alone = quiet_until(rule, FALSE, negative)
    assert alone == Quiet(book=True, orders=True)
    for _ in range(2):
        assert quiet_until(rule, FALSE, zero) == Quiet(book=True)
        assert quiet_until(rule, FALSE, negative) == alone
