"""What each rule did recently, read from the journal once and then by increments.

The rules need every fire and order of a rule within its strategy's ``activity_window_ms`` (a day
or more). Reading that whole window every cycle costs in proportion to the window, so the cache
reads it once per strategy (start-up, a changed window) and afterwards only the records written
since its previous read, dropping those that fell out of the window. The journal stays the source
of truth: a restart rebuilds the cache from it.

An order counted here whose fate was unknown and later turned out ``failed`` stays counted until
it leaves the window — the conservative direction for cooldowns and ``max_fires``.
"""

from __future__ import annotations

from dataclasses import dataclass

from botkit.intents import Activity, RuleActivity
from botkit.ports.journal import ActivityReads

__all__ = ["ActivityCache"]

OVERLAP_MS = 60_000
"""Increments are read from this far before the previous read: records written after a wall-clock
step back (NTP, a resumed VM) still arrive; the merge drops what it already has."""


@dataclass
class _Entry:
    window_ms: int
    read_at: int
    activity: Activity
    revision: int
    """The journal's ``activity_revision`` at ``read_at``."""
    oldest_ms: int | None
    """The oldest time in ``activity`` (None: it is empty)."""


def _oldest(activity: Activity) -> int | None:
    times = [a.fire_times_ms[0] for a in activity.values() if a.fire_times_ms]
    times += [a.orders[0][0] for a in activity.values() if a.orders]
    return min(times, default=None)


def _merge(old: Activity, new: Activity, since_ms: int) -> Activity:
    merged: Activity = {}
    for rule in set(old) | set(new):
        before = old.get(rule, RuleActivity())
        after = new.get(rule, RuleActivity())
        fires = tuple(
            dict.fromkeys(t for t in before.fire_times_ms + after.fire_times_ms if t >= since_ms)
        )
        by_id = {o[1]: o for o in after.orders + before.orders if o[0] >= since_ms}
        orders = tuple(sorted(by_id.values()))
        if fires or orders:
            merged[rule] = RuleActivity(fires, orders)
    return merged


class ActivityCache:
    """Per strategy activity over its window; ``get`` is cheap after the first call."""

    def __init__(self, journal: ActivityReads, *, include_dry: bool = False) -> None:
        self.journal = journal
        self.include_dry = include_dry
        self._entries: dict[str, _Entry] = {}

    def forget(self, strategy: str) -> None:
        self._entries.pop(strategy, None)

    def get(self, strategy: str, window_ms: int) -> Activity:
        """The activity of ``strategy`` over the last ``window_ms`` (journal time).

        The returned mapping may be the one returned before (when nothing changed): read it,
        do not mutate it."""
        journal = self.journal
        now = journal.clock()
        since = now - window_ms
        revision = journal.activity_revision
        entry = self._entries.get(strategy)
        if entry is None or entry.window_ms != window_ms:
            activity = journal.activity(strategy, since, include_dry=self.include_dry)
        elif entry.revision == revision:  # nothing written since: only the window moves
            if entry.oldest_ms is None or entry.oldest_ms >= since:
                entry.read_at = now
                return entry.activity
            activity = _merge(entry.activity, {}, since)
        else:
            since_last = min(entry.read_at, now) - OVERLAP_MS  # a wall clock may step back
            delta = journal.activity(strategy, since_last, include_dry=self.include_dry)
            activity = _merge(entry.activity, delta, since)
        self._entries[strategy] = _Entry(window_ms, now, activity, revision, _oldest(activity))
        return activity
