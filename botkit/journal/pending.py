"""The rows kept in memory until the journal's next write transaction.

In group-commit mode (``Journal(..., group_rows=N)``) cycle rows, evaluation rows and events wait
here; in write-through mode a cycle's row and evaluations wait until the cycle's next write; in
both, the outcomes a caller holds (``settle(..., hold=True)``) and the send marks of reserved
orders (``Journal.mark_sent`` within a reservation). They are kept in their final form
(texts and JSON encoded when the call was made) and written in one go, table by table in the
order they were added, inside the journal's next write transaction. Cycle ids are assigned by the
journal's counter, so a cycle row may still change here (its end) before it is written; the end
of a cycle already written becomes an ``UPDATE``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from botkit.journal.records import OrderState
from botkit.journal.writes import (
    CYCLE_INSERT,
    EVALUATION_INSERT,
    EVENT_INSERT,
    ORDER_FULL_INSERT,
    ORDER_LATER,
    Row,
    cycle_error_text,
    insert_values,
    update_outcomes,
    update_sent,
)

__all__ = ["Pending"]

# positions in a row of ORDER_FULL_INSERT
_CL_ORD_ID, _STATE, _OUTCOME, _REASONS, _OUTCOME_MS = 7, 21, 22, 23, 24
_ORD_ID, _CODE, _MSG, _ERROR, _RESOLVED, _ATTEMPTS, _SENT_MS = range(25, 32)


class Pending:
    """Rows not yet written, in order; ``rows`` counts them (each cycle end counts one). Each
    ``add`` method answers whether ``limit`` rows are now pending (time to write them)."""

    __slots__ = (
        "cycles",
        "ends",
        "evaluations",
        "events",
        "held",
        "limit",
        "live",
        "open",
        "orders",
        "rows",
        "sends",
        "settles",
    )

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cycles: list[list[Any]] = []
        """Values of :data:`CYCLE_INSERT` (lists: the end is filled in here)."""
        self.open: dict[int, list[Any]] = {}
        """The rows of ``cycles`` by id."""
        self.ends: list[tuple[int, str, int]] = []
        """(finished_ms, error, id) of cycles already written."""
        self.evaluations: list[Row] = []
        self.events: list[Row] = []
        self.settles: list[Row] = []
        """Values of :data:`~botkit.journal.writes.SETTLE` of outcomes held for the next
        write (``Journal.settle(..., hold=True)``)."""
        self.held: set[str] = set()
        """The client order ids of ``settles``."""
        self.sends: list[Row] = []
        """(sent_ms, client order id) of reserved orders whose request left, the send marks
        held for the next write (``Journal.mark_sent`` within a reservation); their events are
        in :attr:`events`."""
        self.orders: list[list[Any]] = []
        """Values of :data:`~botkit.journal.writes.ORDER_FULL_INSERT`: a transient journal's
        orders, changed here (sent, settled) until written once in their final form."""
        self.live: dict[str, list[Any]] = {}
        """The live (not dry-run) rows of ``orders`` by client order id."""
        self.rows = 0

    def add_cycle(
        self, cycle_id: int, now: int, *, dry: bool, clock_offset_ms: int | None, note: str
    ) -> bool:
        row = [cycle_id, now, None, int(dry), clock_offset_ms, note, ""]
        self.cycles.append(row)
        self.open[cycle_id] = row
        self.rows += 1
        return self.rows >= self.limit

    def add_end(self, cycle_id: int, now: int, error: str) -> bool:
        row = self.open.get(cycle_id)
        if row is None:
            self.ends.append((now, error, cycle_id))
            self.rows += 1
        else:
            row[2] = now
            row[6] = error
        if error:
            text = cycle_error_text(cycle_id, error)
            self.events.append((now, cycle_id, "cycle_error", "", "", "", text, "{}"))
            self.rows += 1
        return self.rows >= self.limit

    def add_evaluations(self, rows: list[Row], fires: list[Row]) -> bool:
        self.evaluations += rows
        if fires:
            self.events += fires
        self.rows += len(rows) + len(fires)
        return self.rows >= self.limit

    def add_events(self, rows: list[Row]) -> bool:
        self.events += rows
        self.rows += len(rows)
        return self.rows >= self.limit

    def add_event(self, row: Row) -> bool:
        self.events.append(row)
        self.rows += 1
        return self.rows >= self.limit

    def add_settles(self, updates: list[Row], events: list[Row]) -> bool:
        """Held outcomes: each order's update (its client order id last) and its event."""
        self.settles += updates
        self.held.update(row[-1] for row in updates)
        self.events += events
        self.rows += len(updates) + len(events)
        return self.rows >= self.limit

    def add_sends(self, ids: Sequence[str], now: int, event: Row) -> bool:
        """A held send mark of reserved orders: their send time and the ``sent`` event."""
        self.sends += [(now, cid) for cid in ids]
        self.events.append(event)
        self.rows += len(ids) + 1
        return self.rows >= self.limit

    def add_orders(self, rows: list[Row], events: list[Row], *, dry: bool) -> bool:
        """A transient journal's new orders (values of the insert of
        :func:`~botkit.journal.writes.order_rows`) and their events."""
        for row in rows:
            full = [*row, *ORDER_LATER]
            self.orders.append(full)
            if not dry:
                self.live[row[_CL_ORD_ID]] = full
        self.events += events
        self.rows += len(rows) + len(events)
        return self.rows >= self.limit

    def mark_sent(self, ids: Sequence[str], now: int) -> None:
        """What ``Journal.mark_sent``'s ``UPDATE`` does, to rows all in :attr:`live`."""
        for cid in ids:
            row = self.live[cid]
            if row[_OUTCOME] is None:
                row[_STATE] = OrderState.SENT.value
            row[_ATTEMPTS] += 1
            row[_SENT_MS] = now

    def open_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are rows of :attr:`live` without an outcome."""
        live = self.live
        return {cid for cid in ids if cid in live and live[cid][_OUTCOME] is None}

    def ord_ids(self, ids: Iterable[str]) -> dict[str, str]:
        """clOrdId -> ordId (``""`` while unsettled) of those of ``ids`` in :attr:`live`."""
        live = self.live
        return {cid: live[cid][_ORD_ID] or "" for cid in ids if cid in live}

    def settle(self, updates: Sequence[Row]) -> None:
        """What :data:`~botkit.journal.writes.SETTLE` does, to rows all open in :attr:`live`
        (the values of :func:`~botkit.journal.writes.settle_rows`)."""
        for outcome, ord_id, code, msg, error, resolved, reasons, now, cid in updates:
            row = self.live[cid]
            row[_STATE] = OrderState.FINAL.value
            row[_OUTCOME] = outcome
            row[_ORD_ID] = ord_id
            row[_CODE] = code
            row[_MSG] = msg
            row[_ERROR] = error
            row[_RESOLVED] = resolved
            row[_REASONS] = reasons
            row[_OUTCOME_MS] = now

    def write(
        self, conn: sqlite3.Connection, events: list[Row] | None = None, *, path: str = ""
    ) -> None:
        """Insert every pending row (inside the caller's transaction), and ``events`` after
        the pending events, in the same statements; :meth:`clear` once it is committed.
        ``path`` names the journal in the error of held outcomes another process settled
        meanwhile (:func:`~botkit.journal.writes.update_outcomes`)."""
        insert_values(conn, CYCLE_INSERT, self.cycles)
        insert_values(conn, ORDER_FULL_INSERT, self.orders)
        if self.ends:
            conn.executemany("UPDATE cycles SET finished_ms = ?, error = ? WHERE id = ?", self.ends)
        insert_values(conn, EVALUATION_INSERT, self.evaluations)
        insert_values(conn, EVENT_INSERT, self.events + events if events else self.events)
        if self.settles:  # with the send times of the orders both sent and settled
            update_outcomes(conn, self.settles, path=path, sent=self.sends)
        elif self.sends:
            update_sent(conn, self.sends)

    def clear(self) -> None:
        self.cycles = []
        self.open = {}
        self.ends = []
        self.evaluations = []
        self.events = []
        self.settles = []
        self.held = set()
        self.sends = []
        self.orders = []
        self.live = {}
        self.rows = 0
