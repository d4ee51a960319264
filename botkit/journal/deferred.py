"""A throw-away journal's secondary indexes, built only when a read needs them.

A transient journal held in no file of its own (the backtest's temporary database: nothing
outlives the process, nothing else reads it) writes every order, event and evaluation into the
indexes its reads would search — the cycle, unsettled and dry-run indexes of ``orders``, the
indexes of ``events`` and ``evaluations`` — while a backtest reads none of them: its lookups by
client order id search the live unique index, the rechecker's read of recent failures the time
index of ``orders`` (both kept), and its result reads every order in id order
(:meth:`~botkit.journal.db.Journal.iter_order_cells`, a scan). Those indexes cost about a third
of its grouped inserts. :class:`DeferredIndexes` drops them when the journal opens and builds
them again (:meth:`DeferredIndexes.restore`) before the first read that may search them, once
one of their tables holds a row; from then on they are kept as in any journal.

An index only makes a read quicker: every read answers the same with or without them. The
schema after :meth:`~DeferredIndexes.restore` is the one the migrations made, statement for
statement and in the same order (``iterdump`` lists indexes and triggers in the order they were
created: every one from the first deferred on is created again, in its original order).
"""

from __future__ import annotations

import sqlite3

__all__ = ["DEFERRED", "DeferredIndexes"]

DEFERRED = frozenset(
    {
        "evaluations_by_cycle",
        "evaluations_fired_by_time",
        "orders_unsettled",
        "orders_by_cycle",
        "orders_dry_by_id",
        "events_by_time",
        "events_by_order",
    }
)
"""The indexes a transient journal builds only when a read needs them: none is unique (the
live client order ids' index refuses a duplicate, and stays), and none is searched by the
writes of a backtest's cycles (by client order id: the unique index). ``orders_by_time_strategy``
stays too: the rechecker's read of recent failures searches it (``orders`` since a time, live)
while a backtest runs."""

_SCHEMA = (
    "SELECT type, name, sql FROM sqlite_master"
    " WHERE type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY rowid"
)
_ANY_ROW = (
    "SELECT EXISTS (SELECT 1 FROM orders) OR EXISTS (SELECT 1 FROM events)"
    " OR EXISTS (SELECT 1 FROM evaluations)"
)


class DeferredIndexes:
    """The indexes of :data:`DEFERRED` dropped from ``conn`` (a journal at its current schema,
    outside a transaction) until :meth:`restore`."""

    __slots__ = ("_tail",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        entries: list[tuple[str, str, str]] = conn.execute(_SCHEMA).fetchall()
        first = next((i for i, (_, name, _) in enumerate(entries) if name in DEFERRED), None)
        self._tail = entries[first:] if first is not None else []
        """The indexes and triggers from the first deferred one on, in their creation order:
        :meth:`restore` creates them all again in that order."""
        if self._tail:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for _, name, _ in self._tail:
                    if name in DEFERRED:
                        conn.execute(f'DROP INDEX "{name}"')
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    @property
    def dropped(self) -> bool:
        return bool(self._tail)

    def needed(self, conn: sqlite3.Connection) -> bool:
        """Whether a read may search the dropped indexes: one of their tables holds a row (over
        empty tables every read is as quick without them)."""
        return bool(self._tail) and bool(conn.execute(_ANY_ROW).fetchone()[0])

    def restore(self, conn: sqlite3.Connection) -> None:
        """Build the dropped indexes again (in one transaction, outside any other): those kept
        meanwhile after the first dropped one are dropped and made again too, so the schema
        lists every index and trigger in the migrations' order."""
        if not self._tail:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            for kind, name, _ in self._tail:
                if name not in DEFERRED:
                    conn.execute(f'DROP {kind.upper()} "{name}"')
            for _, _, sql in self._tail:
                conn.execute(sql)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._tail = []
