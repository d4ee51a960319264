"""The rows kept in memory until the journal's next write transaction.

In group-commit mode (``Journal(..., group_rows=N)``) cycle rows, evaluation rows and events wait
here; in write-through mode a cycle's row and evaluations wait until the cycle's next write; in
both, the outcomes a caller holds (``settle(..., hold=True)``). They are kept in their final form
(texts and JSON encoded when the call was made) and written in one go, table by table in the
order they were added, inside the journal's next write transaction. Cycle ids are assigned by the
journal's counter, so a cycle row may still change here (its end) before it is written; the end
of a cycle already written becomes an ``UPDATE``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from botkit.journal.writes import (
    CYCLE_INSERT,
    EVALUATION_INSERT,
    EVENT_INSERT,
    SETTLE,
    Row,
    cycle_error_text,
    insert_values,
)

__all__ = ["Pending"]


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
        "open",
        "rows",
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

    def write(self, conn: sqlite3.Connection) -> None:
        """Insert every pending row (inside the caller's transaction); :meth:`clear` once it
        is committed."""
        insert_values(conn, CYCLE_INSERT, self.cycles)
        if self.ends:
            conn.executemany("UPDATE cycles SET finished_ms = ?, error = ? WHERE id = ?", self.ends)
        insert_values(conn, EVALUATION_INSERT, self.evaluations)
        insert_values(conn, EVENT_INSERT, self.events)
        if self.settles:
            conn.executemany(SETTLE, self.settles)

    def clear(self) -> None:
        self.cycles = []
        self.open = {}
        self.ends = []
        self.evaluations = []
        self.events = []
        self.settles = []
        self.held = set()
        self.rows = 0
