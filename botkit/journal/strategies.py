"""The ``strategies`` table: which strategies the bot has run and their ``on_delete``.

Written when a strategy (version) is loaded and when its file goes; read at start-up to give
the open orders of a strategy whose file was deleted while the service was stopped that
strategy's ``on_delete``. A strategy journaled by an older botkit (orders, no row here) is
returned with ``on_delete = ""`` (unknown).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from botkit.journal.records import StrategyRecord

__all__ = ["mark_removed", "select_strategies", "upsert_strategies"]

_UPSERT = (
    "INSERT INTO strategies (name, tag, version, source, on_delete, loaded_ms, removed_ms)"
    " VALUES (?, ?, ?, ?, ?, ?, NULL)"
    " ON CONFLICT(name) DO UPDATE SET tag = excluded.tag, version = excluded.version,"
    " source = excluded.source, on_delete = excluded.on_delete,"
    " loaded_ms = excluded.loaded_ms, removed_ms = NULL"
)


def upsert_strategies(conn: sqlite3.Connection, rows: Sequence[StrategyRecord], now: int) -> None:
    conn.executemany(
        _UPSERT, [(r.name, r.tag, r.version, r.source, r.on_delete, now) for r in rows]
    )


def mark_removed(conn: sqlite3.Connection, names: Sequence[str], now: int) -> None:
    conn.executemany(
        "UPDATE strategies SET removed_ms = ? WHERE name = ? AND removed_ms IS NULL",
        [(now, n) for n in names],
    )


def select_strategies(
    conn: sqlite3.Connection, tag_of: Callable[[str], str], *, recorded: bool = True
) -> list[StrategyRecord]:
    """Every strategy known, by name; those with only orders journaled get ``on_delete=""``.
    ``recorded=False``: a journal older than the ``strategies`` table (schema 3): orders only."""
    rows = (
        conn.execute(
            "SELECT name, tag, version, source, on_delete, loaded_ms, removed_ms FROM strategies"
        ).fetchall()
        if recorded
        else []
    )
    out = {r[0]: StrategyRecord(*r) for r in rows}
    for (name,) in conn.execute("SELECT DISTINCT strategy FROM orders WHERE dry = 0"):
        if name not in out:
            out[name] = StrategyRecord(name, tag_of(name), "", "", "", 0, None)
    return [out[n] for n in sorted(out)]
