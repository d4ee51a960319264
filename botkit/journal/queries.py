"""Reads of the journal: orders by filter, the event log, cycle summaries, activity, unsettled.

Functions over an open ``sqlite3.Connection``; :class:`botkit.journal.db.Journal` calls them under
its lock. Rows become the values of :mod:`botkit.journal.records`.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Collection, Iterator
from typing import Any

from botkit.intents import Activity, RuleActivity
from botkit.journal.records import (
    CycleSummary,
    EventRecord,
    OrderFilter,
    OrderRecord,
    OrderState,
    Outcome,
    TripRecord,
)
from botkit.journal.schema import LIVE_KEY, live_key, rotated

__all__ = [
    "NOT_ROW_KINDS",
    "activity",
    "cycle_summaries",
    "events_after",
    "events_for",
    "iter_order_cells",
    "known_ids",
    "select_orders",
    "select_trips",
]

_ORDER_COLUMNS = (
    "id, cycle_id, ts_ms, dry, strategy, rule, slot, leg, cl_ord_id, symbol, side, type,"
    " pos_side, mgn_mode, reduce_only, intent_px, intent_sz, px, sz, notes, inputs, request,"
    " state, outcome, ord_id, code, msg, reasons, error, resolved, attempts, sent_ms, outcome_ms"
)


def _order(row: tuple[Any, ...]) -> OrderRecord:
    (
        id_, cycle_id, ts_ms, dry, strategy, rule, slot, leg, cl_ord_id, symbol, side, type_,
        pos_side, mgn_mode, reduce_only, intent_px, intent_sz, px, sz, notes, inputs, request,
        state, outcome, ord_id, code, msg, reasons, error, resolved, attempts, sent_ms, outcome_ms,
    ) = row  # fmt: skip
    return OrderRecord(
        id=id_,
        cycle_id=cycle_id,
        ts_ms=ts_ms,
        dry=bool(dry),
        strategy=strategy,
        rule=rule,
        slot=slot,
        leg=leg,
        cl_ord_id=cl_ord_id,
        symbol=symbol,
        side=side,
        type=type_,
        pos_side=pos_side,
        mgn_mode=mgn_mode,
        reduce_only=bool(reduce_only),
        intent_px=intent_px,
        intent_sz=intent_sz,
        px=px,
        sz=sz,
        notes=tuple(json.loads(notes)),
        inputs=dict(json.loads(inputs)),
        request=json.loads(request) if request else None,
        state=OrderState(state),
        outcome=Outcome(outcome) if outcome else None,
        ord_id=ord_id,
        code=code,
        msg=msg,
        reasons=tuple(json.loads(reasons)),
        error=error,
        resolved=bool(resolved),
        attempts=attempts,
        sent_ms=sent_ms,
        outcome_ms=outcome_ms,
    )


def select_orders(conn: sqlite3.Connection, flt: OrderFilter) -> list[OrderRecord]:
    """Orders matching ``flt``, oldest first (the newest ``limit`` when a limit is given)."""
    sql, args = _orders_sql(flt)
    return [_order(row) for row in conn.execute(sql, args)]


_NO_REASONS = "[]"


_CELL_COLUMNS = (  # the id for the order (and a limit's inner query)
    "id, ts_ms, strategy, rule, cl_ord_id, symbol, side, type, coalesce(px, intent_px),"
    " coalesce(sz, intent_sz), outcome, code,"
    " CASE WHEN msg IS NULL OR msg = '' THEN error ELSE msg END,"
    f" CASE WHEN reasons = '{_NO_REASONS}' THEN NULL ELSE reasons END"
)

OrderCells = tuple[
    int, int, str, str, str, str, str, str, str | None, str, str | None, int | None,
    str | None, tuple[str, ...] | None,
]  # fmt: skip
"""An order as :func:`iter_order_cells` gives it: ``(id, ts_ms, strategy, rule, cl_ord_id,
symbol, side, type, px, sz, outcome, code, msg, reasons)``."""


def iter_order_cells(conn: sqlite3.Connection, flt: OrderFilter) -> Iterator[OrderCells]:
    """:func:`select_orders` one at a time as the plain rows SQLite returns (a backtest's result
    reads every order of a year: a list of records would be its peak of memory, a record per
    order read once its cost), what its table of orders shows worked out in the query:
    ``px`` and ``sz`` the ones sent, else the intended ones (``px`` text may be empty);
    ``outcome`` its word (``None``: unsettled); ``msg`` the message, else the error;
    ``reasons`` ``None`` when there are none, else the tuple (decoded here)."""
    sql, args = _orders_sql(flt, _CELL_COLUMNS)
    cursor = conn.execute(sql, args)
    while rows := cursor.fetchmany(1000):
        for row in rows:
            if row[13] is None:
                yield row
            else:
                yield (*row[:13], tuple(json.loads(row[13])))


def kept_index(flt: OrderFilter) -> bool:
    """Whether :func:`select_orders` of ``flt`` searches an index a transient journal keeps
    (:mod:`botkit.journal.deferred`): a live order by its client order id (the live unique
    index), or live orders since a time (``orders_by_time_strategy``; the rechecker's read of
    recent failures) — not the unsettled ones (``orders_unsettled``)."""
    if flt.include_dry or flt.outcome == "unsettled":
        return False
    return flt.cl_ord_id is not None or flt.since_ms is not None


def _orders_sql(flt: OrderFilter, columns: str = _ORDER_COLUMNS) -> tuple[str, list[Any]]:
    where: list[str] = []
    args: list[Any] = []
    for column, value in (
        ("strategy", flt.strategy),
        ("rule", flt.rule),
        ("symbol", flt.symbol),
        ("cycle_id", flt.cycle_id),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if flt.cl_ord_id is not None:
        if flt.include_dry and flt.outcome != "unsettled":
            # live rows by their unique index, dry-run rows by theirs (schema version 5)
            where.append(f"(({LIVE_KEY} = ? AND dry = 0) OR (cl_ord_id = ? AND dry <> 0))")
            args += (live_key(flt.cl_ord_id), flt.cl_ord_id)
        else:  # dry = 0 below: the live unique index (schema version 8: by its key)
            where.append(f"{LIVE_KEY} = ?")
            args.append(live_key(flt.cl_ord_id))
    if flt.outcome == "unsettled":
        where.append("outcome IS NULL AND dry = 0")
    elif flt.outcome is not None:
        where.append("outcome = ?")
        args.append(flt.outcome)
    if flt.since_ms is not None:
        where.append("ts_ms >= ?")
        args.append(flt.since_ms)
    if flt.until_ms is not None:
        where.append("ts_ms < ?")
        args.append(flt.until_ms)
    if not flt.include_dry:
        where.append("dry = 0")
    sql = f"SELECT {columns} FROM orders"  # noqa: S608 - columns are constants
    if where:
        sql += " WHERE " + " AND ".join(where)
    if flt.limit is not None:
        sql = f"SELECT * FROM ({sql} ORDER BY id DESC LIMIT ?) ORDER BY id"  # noqa: S608
        args.append(flt.limit)
    elif flt.since_ms is not None:
        # "+id": SQLite then searches the time index and sorts what it finds, where it chose to
        # scan the whole table in id order (a day of orders for the rechecker's last minutes)
        sql += " ORDER BY +id"
    else:
        sql += " ORDER BY id"
    return sql, args


def known_ids(conn: sqlite3.Connection, ids: Collection[str]) -> set[str]:
    """Which of ``ids`` the journal already holds as live (not dry-run) orders."""
    found: set[str] = set()
    items = list(ids)
    for start in range(0, len(items), 500):
        chunk = items[start : start + 500]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT cl_ord_id FROM orders WHERE dry = 0 AND {LIVE_KEY} IN ({marks})"  # noqa: S608
        found.update(row[0] for row in conn.execute(sql, [live_key(c) for c in chunk]))
    return found


def ord_ids(conn: sqlite3.Connection, ids: Collection[str]) -> dict[str, str]:
    """clOrdId → the exchange's ordId (``""`` while unknown) of each of ``ids`` the journal
    holds as a live order."""
    found: dict[str, str] = {}
    items = list(ids)
    for start in range(0, len(items), 500):
        chunk = items[start : start + 500]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT cl_ord_id, ord_id FROM orders WHERE dry = 0 AND {LIVE_KEY} IN ({marks})"  # noqa: S608
        found.update(
            (row[0], row[1] or "") for row in conn.execute(sql, [live_key(c) for c in chunk])
        )
    return found


_EVENT_COLUMNS = "id, ts_ms, cycle_id, kind, strategy, rule, cl_ord_id, text, detail"


def _event(r: tuple[Any, ...]) -> EventRecord:
    return EventRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8]))


def events_after(
    conn: sqlite3.Connection, after_id: int, *, limit: int = 1000
) -> list[EventRecord]:
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?",  # noqa: S608
        (after_id, limit),
    )
    return [_event(row) for row in rows]


_ROW_KINDS = "('intent', 'rejected_local', 'outcome')"
""":data:`~botkit.journal.schema.ORDER_ROW_KINDS` as SQL."""
NOT_ROW_KINDS = "kind <> 'intent' AND kind <> 'rejected_local' AND kind <> 'outcome'"
"""The text of ``events_by_order``'s condition (schema version 6): a query repeats every term of
it to use that index."""
_OTHER_LINES = (
    f"SELECT {_EVENT_COLUMNS} FROM events"  # noqa: S608 - constants only
    f" WHERE (cl_ord_id = ? AND {NOT_ROW_KINDS})"
    f" OR (cl_ord_id = '' AND {NOT_ROW_KINDS} AND detail LIKE ?)"
)
_ROW_LINES = (
    f"SELECT {_EVENT_COLUMNS} FROM events"  # noqa: S608 - constants only
    f" WHERE ts_ms = ? AND cl_ord_id = ? AND kind IN {_ROW_KINDS}"
)
_ROW_LINES_ANY_TIME = (
    f"SELECT {_EVENT_COLUMNS} FROM events"  # noqa: S608 - constants only
    f" WHERE cl_ord_id = ? AND kind IN {_ROW_KINDS}"
)


_ORDER_TIMES = (
    "SELECT ts_ms, outcome_ms FROM orders"  # noqa: S608
    f" WHERE ({LIVE_KEY} = {rotated('?1')} AND dry = 0) OR (cl_ord_id = ?1 AND dry <> 0)"
)


def events_for(conn: sqlite3.Connection, cl_ord_id: str) -> list[EventRecord]:
    """Every event of one order, oldest first (its history).

    The lines written with the order's row (its intent or local refusal, its outcome: the
    kinds ``events_by_order`` leaves out) are found at the row's times, ``ts_ms`` and
    ``outcome_ms`` (one clock reading served the row and its line); a repair moved
    ``outcome_ms`` away from the outcome's line, so a repaired order's are found by a scan.
    The other lines by the index, and the lines of several orders by their detail."""
    by_id: dict[int, tuple[Any, ...]] = {
        row[0]: row for row in conn.execute(_OTHER_LINES, (cl_ord_id, f'%"{cl_ord_id}"%'))
    }
    if any(row[3] == "repaired" for row in by_id.values()):
        found = list(conn.execute(_ROW_LINES_ANY_TIME, (cl_ord_id,)))
    else:
        times: set[int] = set()
        for ts_ms, outcome_ms in conn.execute(
            _ORDER_TIMES,
            (cl_ord_id,),
        ):
            times.add(ts_ms)
            if outcome_ms is not None:
                times.add(outcome_ms)
        found = [row for ts in times for row in conn.execute(_ROW_LINES, (ts, cl_ord_id))]
    for row in found:
        by_id[row[0]] = row
    return [_event(by_id[key]) for key in sorted(by_id)]


def last_event(conn: sqlite3.Connection, kind: str) -> EventRecord | None:
    row = conn.execute(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE kind = ? ORDER BY id DESC LIMIT 1",  # noqa: S608
        (kind,),
    ).fetchone()
    return _event(row) if row is not None else None


def last_event_id(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()
    return int(row[0])


def select_trips(
    conn: sqlite3.Connection, *, cycle_id: int | None = None, since_ms: int | None = None
) -> list[TripRecord]:
    sql = (
        "SELECT id, cycle_id, ts_ms, dry, guard, scope, strategy, cl_ord_id, limit_value, value,"
        " message FROM guard_trips WHERE 1 = 1"
    )
    args: list[Any] = []
    if cycle_id is not None:
        sql += " AND cycle_id = ?"
        args.append(cycle_id)
    if since_ms is not None:
        sql += " AND ts_ms >= ?"
        args.append(since_ms)
    rows = conn.execute(sql + " ORDER BY id", args)
    return [
        TripRecord(r[0], r[1], r[2], bool(r[3]), r[4], r[5], r[6], r[7], r[8], r[9], r[10])
        for r in rows
    ]


def cycle_summaries(
    conn: sqlite3.Connection,
    *,
    since_ms: int | None = None,
    until_ms: int | None = None,
    limit: int | None = None,
) -> list[CycleSummary]:
    """Per-cycle counts, oldest first (the newest ``limit`` cycles when a limit is given)."""
    where, args = ["1 = 1"], []
    if since_ms is not None:
        where.append("started_ms >= ?")
        args.append(since_ms)
    if until_ms is not None:
        where.append("started_ms < ?")
        args.append(until_ms)
    sql = (
        "SELECT id, started_ms, finished_ms, dry, clock_offset_ms, error FROM cycles WHERE "  # noqa: S608
        + " AND ".join(where)
        + " ORDER BY id DESC"
    )
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    cycles = list(conn.execute(sql, args))[::-1]
    out: list[CycleSummary] = []
    for cid, started, finished, dry, offset, error in cycles:
        evals, fired = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(fired), 0) FROM evaluations WHERE cycle_id = ?", (cid,)
        ).fetchone()
        by_outcome: dict[str, int] = {}
        total = 0
        for outcome, count in conn.execute(
            "SELECT COALESCE(outcome, 'unsettled'), COUNT(*) FROM orders WHERE cycle_id = ?"
            " GROUP BY 1",
            (cid,),
        ):
            by_outcome[outcome] = count
            total += count
        (trips,) = conn.execute(
            "SELECT COUNT(*) FROM guard_trips WHERE cycle_id = ?", (cid,)
        ).fetchone()
        out.append(
            CycleSummary(
                cid,
                started,
                finished,
                bool(dry),
                offset,
                evals,
                fired,
                total,
                by_outcome,
                trips,
                error,
            )
        )
    return out


def activity(
    conn: sqlite3.Connection, strategy: str, since_ms: int, *, include_dry: bool = False
) -> Activity:
    """Fires and orders per rule of ``strategy`` since ``since_ms``, oldest first.

    Orders count when the exchange accepted them or their fate is still open (not refused
    locally, not rejected, not failed).
    """
    dry = "" if include_dry else " AND dry = 0"
    fires: dict[str, list[int]] = defaultdict(list)
    orders: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for rule, ts in conn.execute(
        "SELECT rule, ts_ms FROM evaluations WHERE strategy = ? AND fired = 1 AND ts_ms >= ?"  # noqa: S608
        + dry
        + " ORDER BY ts_ms, id",
        (strategy, since_ms),
    ):
        fires[rule].append(ts)
    for rule, ts, cid in conn.execute(
        "SELECT rule, ts_ms, cl_ord_id FROM orders WHERE strategy = ? AND ts_ms >= ?"  # noqa: S608
        " AND (outcome IS NULL OR outcome IN ('accepted', 'dry_run'))"
        + dry
        + " ORDER BY ts_ms, id",
        (strategy, since_ms),
    ):
        orders[rule].append((ts, cid))
    return {
        rule: RuleActivity(tuple(fires.get(rule, ())), tuple(orders.get(rule, ())))
        for rule in sorted(set(fires) | set(orders))
    }
