"""When a rule may fire: enabled, keep_open, once per slot, cooldown, max_fires.

Pure: the rule, what the journal remembers it did (:class:`~botkit.intents.RuleActivity`), how
many of its orders rest now, and the time in; a verdict out. The condition is evaluated only
when every gate is open, so a blocked rule costs almost nothing.
"""

from __future__ import annotations

from enum import StrEnum

from botkit.intents import RuleActivity
from botkit.rules.durations import format_duration
from botkit.rules.model import Rule

__all__ = ["RuleStatus", "gate"]


class RuleStatus(StrEnum):
    """What happened to a rule in one evaluation."""

    FIRED = "fired"
    DECLARED = "declared"
    """A ``keep:`` rule's condition held: its orders are the declared set (never a fire)."""
    DISABLED = "disabled"
    KEEP_OPEN = "keep_open"
    SAME_SLOT = "same_slot"
    COOLDOWN = "cooldown"
    MAX_FIRES = "max_fires"
    CONDITION_FALSE = "condition_false"
    NOTHING_TO_DO = "nothing_to_do"
    WARMING_UP = "warming_up"
    """An indicator it reads has too few closed candles yet (it never fires on partial data)."""
    ERROR = "error"


def gate(
    rule: Rule,
    activity: RuleActivity | None,
    *,
    now_ms: int,
    period_ms: int,
    open_orders: int,
    strategy_enabled: bool = True,
) -> tuple[RuleStatus, str] | None:
    """Why the rule may not fire now, or None when it may (its condition decides)."""
    if not strategy_enabled:
        return RuleStatus.DISABLED, "the strategy is disabled (enabled: false)"
    if not rule.enabled:
        return RuleStatus.DISABLED, "the rule is disabled (enabled: false)"
    if rule.keep_open and open_orders > 0:
        return RuleStatus.KEEP_OPEN, f"keep_open: {open_orders} of its orders still rest"
    last = activity.last_fire_ms if activity is not None else None
    if last is not None:
        if last // period_ms == now_ms // period_ms and last <= now_ms:
            return RuleStatus.SAME_SLOT, "already fired in this evaluation slot"
        ago = now_ms - last
        if rule.cooldown_ms and ago < rule.cooldown_ms:
            return (
                RuleStatus.COOLDOWN,
                f"cooldown: fired {format_duration(ago)} ago, cooldown "
                f"{format_duration(rule.cooldown_ms)}",
            )
    if rule.max_fires is not None and activity is not None:
        since = now_ms - rule.max_fires.per_ms
        fires = activity.count_fires_within(since, now_ms)
        if fires >= rule.max_fires.count:
            return (
                RuleStatus.MAX_FIRES,
                f"max_fires: fired {fires} times in the last "
                f"{format_duration(rule.max_fires.per_ms)} (limit {rule.max_fires.count})",
            )
    return None
