"""The journal's schema as versioned migrations (``PRAGMA user_version`` holds the version).

Each migration is a list of statements applied in one transaction together with the version
bump, so a journal is always at exactly one version. Append new migrations; never edit an old one.
"""

from __future__ import annotations

__all__ = ["LIVE_KEY", "MIGRATIONS", "ORDER_ROW_KINDS", "SCHEMA_VERSION", "live_key", "rotated"]

_V1 = [
    """
    CREATE TABLE cycles (
        id INTEGER PRIMARY KEY,
        started_ms INTEGER NOT NULL,
        finished_ms INTEGER,
        dry INTEGER NOT NULL DEFAULT 0,
        clock_offset_ms INTEGER,
        note TEXT NOT NULL DEFAULT '',
        error TEXT NOT NULL DEFAULT ''
    )
    """,
    """
    CREATE TABLE evaluations (
        id INTEGER PRIMARY KEY,
        cycle_id INTEGER,
        ts_ms INTEGER NOT NULL,
        dry INTEGER NOT NULL DEFAULT 0,
        strategy TEXT NOT NULL,
        version TEXT NOT NULL DEFAULT '',
        rule TEXT NOT NULL,
        fired INTEGER NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        inputs TEXT NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX evaluations_by_rule ON evaluations(strategy, rule, ts_ms)",
    "CREATE INDEX evaluations_by_cycle ON evaluations(cycle_id)",
    """
    CREATE TABLE orders (
        id INTEGER PRIMARY KEY,
        cycle_id INTEGER,
        ts_ms INTEGER NOT NULL,
        dry INTEGER NOT NULL DEFAULT 0,
        strategy TEXT NOT NULL,
        rule TEXT NOT NULL,
        slot INTEGER NOT NULL,
        leg INTEGER NOT NULL,
        cl_ord_id TEXT NOT NULL,
        symbol TEXT NOT NULL,
        side TEXT NOT NULL,
        type TEXT NOT NULL,
        pos_side TEXT NOT NULL,
        mgn_mode TEXT NOT NULL,
        reduce_only INTEGER NOT NULL,
        intent_px TEXT,
        intent_sz TEXT NOT NULL,
        px TEXT,
        sz TEXT,
        notes TEXT NOT NULL DEFAULT '[]',
        inputs TEXT NOT NULL DEFAULT '{}',
        request TEXT,
        state TEXT NOT NULL,
        outcome TEXT,
        ord_id TEXT NOT NULL DEFAULT '',
        code INTEGER,
        msg TEXT NOT NULL DEFAULT '',
        reasons TEXT NOT NULL DEFAULT '[]',
        error TEXT NOT NULL DEFAULT '',
        resolved INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        sent_ms INTEGER,
        outcome_ms INTEGER
    )
    """,
    # one live order per client order id; dry-run plans may repeat an id
    "CREATE UNIQUE INDEX orders_cl_ord_id_live ON orders(cl_ord_id) WHERE dry = 0",
    "CREATE INDEX orders_by_id ON orders(cl_ord_id)",
    "CREATE INDEX orders_unsettled ON orders(id) WHERE outcome IS NULL",
    "CREATE INDEX orders_by_rule ON orders(strategy, rule, ts_ms)",
    "CREATE INDEX orders_by_cycle ON orders(cycle_id)",
    "CREATE INDEX orders_by_time ON orders(ts_ms)",
    # exactly one final outcome per order: once set, it never changes
    """
    CREATE TRIGGER orders_one_final_outcome BEFORE UPDATE OF outcome ON orders
    WHEN OLD.outcome IS NOT NULL
    BEGIN
        SELECT RAISE(ABORT, 'order already has a final outcome');
    END
    """,
    """
    CREATE TABLE guard_trips (
        id INTEGER PRIMARY KEY,
        cycle_id INTEGER,
        ts_ms INTEGER NOT NULL,
        dry INTEGER NOT NULL DEFAULT 0,
        guard TEXT NOT NULL,
        scope TEXT NOT NULL,
        strategy TEXT NOT NULL DEFAULT '',
        cl_ord_id TEXT NOT NULL DEFAULT '',
        limit_value TEXT,
        value TEXT,
        message TEXT NOT NULL
    )
    """,
    "CREATE INDEX guard_trips_by_cycle ON guard_trips(cycle_id)",
    """
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        ts_ms INTEGER NOT NULL,
        cycle_id INTEGER,
        kind TEXT NOT NULL,
        strategy TEXT NOT NULL DEFAULT '',
        rule TEXT NOT NULL DEFAULT '',
        cl_ord_id TEXT NOT NULL DEFAULT '',
        text TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX events_by_time ON events(ts_ms)",
    "CREATE INDEX events_by_order ON events(cl_ord_id)",
]

# The rules read a strategy's fires and orders since a time every cycle (the activity): these
# indexes find them without scanning the strategy's whole history (it grows by every cycle).
_V2 = [
    "CREATE INDEX evaluations_fired ON evaluations(strategy, ts_ms) WHERE fired = 1",
    "CREATE INDEX orders_by_strategy ON orders(strategy, ts_ms)",
]

# The strategies the bot has loaded, one row each with its last loaded version's on_delete:
# at start-up the open orders of a strategy whose file went while the service was stopped get
# that on_delete (the client order id only carries a hash of the name). Never pruned.
_V3 = [
    """
    CREATE TABLE strategies (
        name TEXT PRIMARY KEY,
        tag TEXT NOT NULL,
        version TEXT NOT NULL,
        source TEXT NOT NULL,
        on_delete TEXT NOT NULL,
        loaded_ms INTEGER NOT NULL,
        removed_ms INTEGER
    )
    """,
]

# A verdict of "failed" or "rejected" is revisable: an order later seen at the exchange is
# repaired to "accepted" (Journal.repair, which journals a "repaired" event). Nothing else may
# change a final outcome.
_V4 = [
    "DROP TRIGGER orders_one_final_outcome",
    """
    CREATE TRIGGER orders_one_final_outcome BEFORE UPDATE OF outcome ON orders
    WHEN OLD.outcome IS NOT NULL
        AND NOT (OLD.outcome IN ('failed', 'rejected') AND NEW.outcome = 'accepted')
    BEGIN
        SELECT RAISE(ABORT, 'order already has a final outcome');
    END
    """,
]

# Every intent writes an entry into each index of ``orders``, and an index keyed by strategy or
# by client order id (which starts with the strategy's tag) takes it at one place per strategy:
# a cycle of 20 strategies writes about 20 of its pages to the WAL at the intents' commit. Two
# of them only repeated another: ``orders_by_id`` the live unique index for every live order
# (only dry-run rows need one of their own, which a live bot never writes), and
# ``orders_by_rule`` (strategy, rule, time) ``orders_by_strategy`` (strategy, time), which a
# read by strategy and rule uses as well.
#
# ``events_by_order`` likewise took each intent's and each outcome's line at its strategy's
# place (a third of the pages a live cycle wrote). Those lines are written in the same call as
# their order's row, at the same time: an intent's (or a local refusal's) at the row's
# ``ts_ms``, an outcome's at its ``outcome_ms``. The index keeps every other line of an order;
# :func:`~botkit.journal.queries.events_for` finds those by their time (``events_by_time``).
ORDER_ROW_KINDS = ("intent", "rejected_local", "outcome")
"""The kinds of the event lines written with their order's row (``Journal.record_event``
refuses them): ``events_by_order`` leaves them out."""

_V5 = [
    "DROP INDEX orders_by_id",
    "DROP INDEX orders_by_rule",
    "CREATE INDEX orders_dry_by_id ON orders(cl_ord_id) WHERE dry <> 0",
    "DROP INDEX events_by_order",
    "CREATE INDEX events_by_order ON events(cl_ord_id)"
    " WHERE kind NOT IN ('intent', 'rejected_local', 'outcome')",
]

# Version 5's ``events_by_order`` condition, ``kind NOT IN (...)``, is evaluated for every event
# row a statement writes, and SQLite builds a table of the list for each row to do it: about
# 1.1 µs a row here, more than a quarter of what writing an event line costs (a live cycle
# writes two an order). The same condition as one ``<>`` per kind costs a few comparisons; the
# index holds the same lines. A query names every term to use it
# (:data:`~botkit.journal.queries.NOT_ROW_KINDS`).
_V6 = [
    "DROP INDEX events_by_order",
    "CREATE INDEX events_by_order ON events(cl_ord_id)"
    " WHERE kind <> 'intent' AND kind <> 'rejected_local' AND kind <> 'outcome'",
]

# The indexes that begin with the strategy took each commit's entries at one place per strategy
# (and, once an index holds more leaves than there are strategies, an interior page each):
# after a day of ``bench runner``'s cycles (20 strategies, 100 orders) ``orders_by_strategy``
# wrote 41 WAL pages a cycle, ``evaluations_by_rule`` 25, ``evaluations_fired`` 24, of ~200.
# Their readers do as well by time first, where a cycle's entries are appended together:
#
# * the rules' activity (``strategy = ? AND ts_ms >= ?``, fires and orders) is read once per
#   strategy at start-up and then followed by the journal's notes: it now searches the window by
#   time, the strategy's entries picked in the index without reading the others' rows;
# * the status API's newest evaluation of each rule grouped the whole index anyway (and read each
#   row for ``dry``): a scan of the table is quicker;
# * a read of one strategy's orders with no time (the CLI, the API's newest of a strategy) scans
#   the table, newest first where a limit asks for the newest.
#
# ``IF EXISTS``: the tests' older files are made from a current one, without these indexes.
_V7 = [
    "DROP INDEX IF EXISTS orders_by_strategy",
    "DROP INDEX IF EXISTS orders_by_time",
    "CREATE INDEX IF NOT EXISTS orders_by_time_strategy ON orders(ts_ms, strategy)",
    "DROP INDEX IF EXISTS evaluations_fired",
    "CREATE INDEX IF NOT EXISTS evaluations_fired_by_time ON evaluations(ts_ms, strategy)"
    " WHERE fired = 1",
    "DROP INDEX IF EXISTS evaluations_by_rule",
]

# The live unique index of client order ids took each commit's intents at one place per
# strategy (an id begins with its strategy's and rule's 12-character tag, ``bk`` + 6 + 4): after
# a day of ``bench runner``'s cycles it wrote a leaf and an interior page per strategy, the
# largest writer left. Keyed by the id rotated past its tag (``-slot-leg`` first, the slot a
# time), a cycle's intents are appended together. The rotation is a bijection of the ids of one
# length (the identity for ids of 12 characters or fewer) and keeps the length, so the index
# refuses exactly the ids the column's index refused (of ids without a NUL character, where
# SQLite's ``substr`` stops; a client order id is ``[A-Za-z0-9_-]{1,32}``, an exchange's rule
# the requests' model checks). A statement finds a live order by naming
# the same expression (:data:`LIVE_KEY`) against the rotated id (:func:`rotated`, in SQL;
# :func:`live_key`, in Python) and ``dry = 0``; else it scans the table.
_V8 = [
    "DROP INDEX orders_cl_ord_id_live",
    "CREATE UNIQUE INDEX orders_cl_ord_id_live"
    " ON orders(substr(cl_ord_id, 13) || substr(cl_ord_id, 1, 12)) WHERE dry = 0",
]

_TAG = 12
"""The characters an id's rotation moves to its end (its tag: ``bk``, the strategy's 6, the
rule's 4)."""


def rotated(value: str) -> str:
    """The SQL expression of the live unique index's key of ``value`` (an SQL expression of a
    client order id: a column or a parameter)."""
    return f"substr({value}, {_TAG + 1}) || substr({value}, 1, {_TAG})"


def live_key(cl_ord_id: str) -> str:
    """The live unique index's key of ``cl_ord_id``: what :func:`rotated` computes in SQL."""
    return cl_ord_id[_TAG:] + cl_ord_id[:_TAG]


LIVE_KEY = rotated("cl_ord_id")
"""The live unique index's expression (schema version 8): ``LIVE_KEY = <rotated id>`` with
``dry = 0`` searches it."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    tuple(_V1),
    tuple(_V2),
    tuple(_V3),
    tuple(_V4),
    tuple(_V5),
    tuple(_V6),
    tuple(_V7),
    tuple(_V8),
)
"""``MIGRATIONS[i]`` takes a journal from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
