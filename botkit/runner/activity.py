"""What each rule did recently: read from the journal once, then kept current by the journal's
notes of what it writes.

The rules need every fire and order of a rule within its strategy's ``activity_window_ms`` (a day
or more). Reading that whole window every cycle costs in proportion to the window, so the cache
reads it once per strategy (start-up, a changed window) and afterwards takes what the journal says
it wrote (:meth:`~botkit.ports.journal.ActivityReads.watch_activity`: each fire, each order, each
order settled with an outcome activity does not count), dropping what fell out of the window. No
query runs after the first read: a cycle's fires and orders reach the cache as the cycle writes
them. The journal stays the source of truth: a restart rebuilds the cache from it.

An order is counted as its fate stood when the cache first took it in (at the next :meth:`get`
after it was written): one the exchange rejected before that is not counted; one whose fate was
unknown then and later turned out ``failed`` stays counted until it leaves the window — the
conservative direction for cooldowns and ``max_fires``. These are the answers the earlier
read-again cache gave (``test_activity``: equal to a full read at every step, two fires of a
rule in one millisecond counted once). A rule's fires are oldest first, as a full read gives
them, even after the clock stepped back. The news of a cycle are appended to what the cache
holds (cut at the window's start by bisection) instead of merged with the whole window again:
each rule's fires and orders are a :class:`~botkit.intents.Timeline`, which grows in place and
is cut without a copy, so a cycle's ``get`` costs its news whatever the window holds (tuples
copied the whole window of each rule that fired, every cycle: a day of cycles cost a strategy
~9 µs an order more than a fresh start).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter

from botkit.intents import Activity, RuleActivity, Timeline
from botkit.ports.journal import ActivityNote, ActivityReads

__all__ = ["ActivityCache"]


@dataclass(slots=True)
class _Entry:
    window_ms: int
    activity: Activity
    oldest_ms: int | None
    """The oldest time in ``activity`` (None: it is empty)."""
    merged: bool = False
    """``activity`` came out of :func:`_merge` (each rule's fires without repeats, its orders
    sorted): a rule the notes do not touch and the window does not cut stays as it is."""
    fresh: list[ActivityNote] = field(default_factory=list)
    """The notes of this strategy's writes since the last :meth:`ActivityCache.get`."""


def _oldest(activity: Activity) -> int | None:
    oldest: int | None = None
    for rule in activity.values():
        first = _rule_oldest(rule)
        if first is not None and (oldest is None or first < oldest):
            oldest = first
    return oldest


def _rule_oldest(activity: RuleActivity) -> int | None:
    """The oldest time of a rule's activity (its fires and orders are oldest first)."""
    fires, orders = activity.fire_times_ms, activity.orders
    fire: int | None
    order: tuple[int, str] | None
    if isinstance(fires, Timeline) and isinstance(orders, Timeline):
        fire, order = fires.first, orders.first
    else:  # the journal's read, as it came
        fire = fires[0] if fires else None
        order = orders[0] if orders else None
    if order is None:
        return fire
    return order[0] if fire is None or order[0] < fire else fire


def _merge(old: Activity, new: Activity, since_ms: int, merged: bool, unique: bool) -> Activity:
    """``old`` and ``new`` together, without what is older than ``since_ms``: per rule the fires
    without repeats, oldest first, and the orders by (time, client order id), ``old``'s kept for
    a client order id in both.

    When ``old`` was ``merged`` before (its rules already in that form), a rule ``new`` does not
    touch, with nothing older than ``since_ms``, is kept as it is, and one whose news are all
    newer than what it holds is cut and appended to (``unique``: a client order id names one
    order — live orders — so a newer order cannot repeat an older one) instead of merged again
    from scratch: the same answer at the cost of the news, not of the window (its
    :class:`~botkit.intents.Timeline` grows in place and is cut by bisection)."""
    out: Activity = {}
    for rule in sorted(set(old) | set(new)):
        before = old.get(rule)
        after = new.get(rule)
        if merged and before is not None:
            if after is None:
                oldest = _rule_oldest(before)
                if oldest is None or oldest >= since_ms:
                    out[rule] = before
                    continue
            joined = _appended(before, after or _NONE, since_ms, unique)
            if joined is not None:
                if joined.fire_times_ms or joined.orders:
                    out[rule] = joined
                continue
        before = before or _NONE
        after = after or _NONE
        fires = sorted(
            dict.fromkeys(t for t in (*before.fire_times_ms, *after.fire_times_ms) if t >= since_ms)
        )
        by_id = {o[1]: o for o in (*after.orders, *before.orders) if o[0] >= since_ms}
        orders = sorted(by_id.values())
        if fires or orders:
            out[rule] = RuleActivity(Timeline(fires), Timeline(orders))
    return out


def _appended(
    before: RuleActivity, after: RuleActivity, since_ms: int, unique: bool
) -> RuleActivity | None:
    """``before`` (merged) cut at ``since_ms`` with ``after`` (oldest first) appended, when
    everything in ``after`` is newer than everything in ``before``; else None (merge)."""
    fires, orders = Timeline.of(before.fire_times_ms), Timeline.of(before.orders)
    news, placed = after.fire_times_ms, after.orders
    if news:
        last = fires.last
        if last is not None and news[0] <= last:
            return None
    if placed:
        newest = orders.last
        if not unique or (newest is not None and placed[0][0] <= newest[0]):
            return None
    fires = fires.cut(since_ms)
    if news:
        if news[0] < since_ms:
            news = news[bisect_left(news, since_ms) :]
        fires = fires.extended(dict.fromkeys(news))
    orders = orders.cut((since_ms,))
    if placed:
        fresh = [o for o in placed if o[0] >= since_ms]
        fresh.sort()
        orders = orders.extended(fresh)
    return RuleActivity(fires, orders)


def _grown(
    old: Activity, news: Activity, since_ms: int, oldest_ms: int | None
) -> tuple[Activity, int | None] | None:
    """What :func:`_merge` gives (merged, client order ids unique) when nothing in ``old`` is
    older than ``since_ms``, and its oldest time, without going over the rules the news leave
    alone: each touched rule's news appended (:func:`_appended`), a new rule's taken as
    :func:`_merge` takes them, the rules in :func:`_merge`'s (sorted) order. None when a rule's
    news are not all newer than what it holds (merge)."""
    out = dict(old)
    added = False
    for rule, after in news.items():
        before = old.get(rule)
        if before is None:
            fires = sorted(dict.fromkeys(t for t in after.fire_times_ms if t >= since_ms))
            by_id = {o[1]: o for o in after.orders if o[0] >= since_ms}
            orders = sorted(by_id.values())
            if not (fires or orders):
                continue
            joined = RuleActivity(Timeline(fires), Timeline(orders))
            first = _rule_oldest(joined)
            if first is not None and (oldest_ms is None or first < oldest_ms):
                oldest_ms = first
            added = True
        else:
            appended = _appended(before, after, since_ms, True)
            if appended is None:
                return None
            joined = appended
        out[rule] = joined
    if added:
        out = dict(sorted(out.items()))
    return out, oldest_ms


_NONE = RuleActivity()
_TIME = itemgetter(0)
"""An order's time (sorting the news keeps the journal's order within a millisecond)."""


class ActivityCache:
    """Per strategy activity over its window; ``get`` is cheap after the first call."""

    def __init__(self, journal: ActivityReads, *, include_dry: bool = False) -> None:
        self.journal = journal
        self.include_dry = include_dry
        self._entries: dict[str, _Entry] = {}
        self._fresh_orders: dict[str, ActivityNote] = {}
        """Order notes not yet taken in by a :meth:`get`, by client order id (a settle note
        that says an order no longer counts finds its order here)."""
        self._dead: set[str] = set()
        """Orders among ``_fresh_orders`` settled with an outcome activity does not count."""
        journal.watch_activity(self._note)

    def _note(self, notes: Sequence[ActivityNote]) -> None:
        entries = self._entries
        for note in notes:
            if not note.strategy:  # a settle: the order no longer counts
                if note.cl_ord_id in self._fresh_orders:
                    self._dead.add(note.cl_ord_id)
                continue
            if note.dry and not self.include_dry:
                continue
            entry = entries.get(note.strategy)
            if entry is None:  # read in full on its first get
                continue
            entry.fresh.append(note)
            if note.cl_ord_id:
                self._fresh_orders[note.cl_ord_id] = note

    def forget(self, strategy: str) -> None:
        entry = self._entries.pop(strategy, None)
        if entry is not None:
            self._drop_fresh(entry.fresh)

    def _drop_fresh(self, fresh: list[ActivityNote]) -> None:
        for note in fresh:
            if note.cl_ord_id and self._fresh_orders.pop(note.cl_ord_id, None) is not None:
                self._dead.discard(note.cl_ord_id)

    def get(self, strategy: str, window_ms: int) -> Activity:
        """The activity of ``strategy`` over the last ``window_ms`` (journal time).

        The returned mapping may be the one returned before (when nothing changed): read it,
        do not mutate it."""
        journal = self.journal
        since = journal.clock() - window_ms
        entry = self._entries.get(strategy)
        if entry is None or entry.window_ms != window_ms:
            if entry is not None:
                self._drop_fresh(entry.fresh)
            activity = journal.activity(strategy, since, include_dry=self.include_dry)
            self._entries[strategy] = _Entry(window_ms, activity, _oldest(activity))
            return activity
        fresh = entry.fresh
        if not fresh:  # nothing written since: only the window moves
            if entry.oldest_ms is None or entry.oldest_ms >= since:
                return entry.activity
            activity = _merge(entry.activity, {}, since, entry.merged, not self.include_dry)
        else:
            entry.fresh = []
            news = self._take(fresh)
            unique = not self.include_dry
            if entry.merged and unique and (entry.oldest_ms is None or entry.oldest_ms >= since):
                grown = _grown(entry.activity, news, since, entry.oldest_ms)
                if grown is not None:  # the usual cycle: news appended, nothing cut
                    entry.activity, entry.oldest_ms = grown
                    return grown[0]
            activity = _merge(entry.activity, news, since, entry.merged, unique)
        entry.activity = activity
        entry.oldest_ms = _oldest(activity)
        entry.merged = True
        return activity

    def _take(self, fresh: list[ActivityNote]) -> Activity:
        """The activity the notes add, in the journal's order (fires, and the orders that still
        count)."""
        fires: dict[str, list[int]] = {}
        orders: dict[str, list[tuple[int, str]]] = {}
        dead = self._dead
        pending = self._fresh_orders
        for note in fresh:
            cid = note.cl_ord_id
            if not cid:
                fires.setdefault(note.rule, []).append(note.ts_ms)
                continue
            pending.pop(cid, None)
            if cid in dead:
                dead.discard(cid)
            elif note.counted:
                orders.setdefault(note.rule, []).append((note.ts_ms, cid))
        return {  # oldest first, the journal's order within a millisecond (its reads' order)
            rule: RuleActivity(
                tuple(sorted(fires.get(rule, ()))),
                tuple(sorted(orders.get(rule, ()), key=_TIME)),
            )
            for rule in set(fires) | set(orders)
        }
