"""Reads of the journal's evaluations for the status API: the last evaluation journaled for
each rule, and the newest evaluations (decisions) with what each rule saw.

Functions over an open ``sqlite3.Connection``; :class:`botkit.journal.db.Journal` calls them
under its lock.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

__all__ = ["EvaluationRecord", "latest_evaluations", "recent_evaluations"]

_COLUMNS = "id, cycle_id, ts_ms, dry, strategy, version, rule, fired, reason, inputs"


@dataclass(frozen=True, slots=True)
class EvaluationRecord:
    """One journaled evaluation of one rule (``reason``: why it did not fire, or its status)."""

    id: int
    cycle_id: int | None
    ts_ms: int
    dry: bool
    strategy: str
    version: str
    rule: str
    fired: bool
    reason: str
    inputs: dict[str, str] = field(default_factory=dict)


def _record(row: tuple[object, ...]) -> EvaluationRecord:
    id_, cycle_id, ts_ms, dry, strategy, version, rule, fired, reason, inputs = row
    return EvaluationRecord(
        int(str(id_)),
        None if cycle_id is None else int(str(cycle_id)),
        int(str(ts_ms)),
        bool(dry),
        str(strategy),
        str(version),
        str(rule),
        bool(fired),
        str(reason),
        json.loads(str(inputs)),
    )


def latest_evaluations(conn: sqlite3.Connection, *, include_dry: bool) -> list[EvaluationRecord]:
    """The newest evaluation of every (strategy, rule), by strategy and rule."""
    dry = "" if include_dry else "WHERE dry = 0"
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM evaluations WHERE id IN"  # noqa: S608 - constants only
        f" (SELECT MAX(id) FROM evaluations {dry} GROUP BY strategy, rule)"
        " ORDER BY strategy, id"
    )
    return [_record(row) for row in rows]


def recent_evaluations(
    conn: sqlite3.Connection, *, limit: int, fired_only: bool, include_dry: bool
) -> list[EvaluationRecord]:
    """The ``limit`` newest evaluations, newest first."""
    where = [w for w in ("fired = 1" if fired_only else "", "" if include_dry else "dry = 0") if w]
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM evaluations {clause} ORDER BY id DESC LIMIT ?",  # noqa: S608
        (limit,),
    )
    return [_record(row) for row in rows]
