"""A journal read without changing it: the strategies it knows, for ``botkit check``.

:class:`~botkit.journal.Journal` is the service's writer open: it sets pragmas that write the
file's header, turns it to WAL, migrates its schema and creates one in an empty (or any SQLite)
file, and waits 30 s behind a writer. A command that only reads opens the file here instead:
``mode=ro`` and ``query_only``, no pragma that writes, no migration. An older schema is read as
it is (``orders.strategy`` is in every version; the ``strategies`` table when it is there); a
file that is no botkit journal, one of a newer schema, or a corrupt one (``quick_check``, as
the service's open) is refused with one line.

A WAL reader does not wait for the writer. A read-only connection to a WAL-mode file whose
``-wal`` is not there (no process has it open) creates the ``-wal`` and ``-shm`` and cannot
remove them: :func:`_tidy` lets SQLite remove them as the last connection does at close, and
leaves them when another process has the file open (they are its).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from botkit.errors import JournalError, printable
from botkit.journal.conn import is_corrupt, untrusted
from botkit.journal.records import StrategyRecord
from botkit.journal.schema import SCHEMA_VERSION
from botkit.journal.strategies import select_strategies

__all__ = ["read_strategies"]

_BUSY_MS = 2_000
"""A rollback-mode file is unreadable only while a writer commits; a WAL reader never waits."""


def read_strategies(path: str | Path, tag_of: Callable[[str], str]) -> list[StrategyRecord]:
    """Every strategy the journal at ``path`` knows, as :meth:`Journal.strategies` gives them,
    read without changing the file. :class:`~botkit.errors.JournalError` (one line) when it is
    not a file, not a botkit journal, of a newer schema, corrupt, or cannot be read."""
    file = Path(path)
    if file.is_dir():
        raise JournalError(f"journal {path} is a folder — name the journal file")
    if not file.is_file():
        what = "does not exist" if not file.exists() else "is not a file"
        raise JournalError(f"journal {path} {what} — name the journal file")
    wal = Path(f"{file}-wal")
    had_wal = wal.exists()
    try:
        conn = sqlite3.connect(
            f"file:{quote(str(file.absolute()))}?mode=ro", uri=True, timeout=_BUSY_MS / 1000
        )
    except sqlite3.Error as exc:
        raise _failure(str(path), exc) from None
    try:
        conn.execute("PRAGMA query_only = ON")
        return _read(conn, str(path), tag_of)
    except sqlite3.Error as exc:
        raise _failure(str(path), exc) from None
    finally:
        conn.close()
        if not had_wal and wal.exists():
            _tidy(file)


def _read(
    conn: sqlite3.Connection, path: str, tag_of: Callable[[str], str]
) -> list[StrategyRecord]:
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise JournalError(
            f"journal {path} has schema version {version}, newer than this botkit understands"
            f" ({SCHEMA_VERSION}) — upgrade botkit"
        )
    if "orders" not in tables:
        raise JournalError(
            f"{path} is not a botkit journal (no orders table) — name the journal setting's file"
        )
    rows = conn.execute("PRAGMA quick_check(1)").fetchall()  # as the service's open does
    if rows != [("ok",)]:
        raise untrusted(path, _one_line(str(rows[0][0]) if rows else "no answer")[:200])
    return select_strategies(conn, tag_of, recorded="strategies" in tables)


def _failure(path: str, exc: sqlite3.Error) -> JournalError:
    code = getattr(exc, "sqlite_errorcode", 0) or 0
    if code & 0xFF == 26:  # SQLITE_NOTADB
        return JournalError(
            f"{path} is not a botkit journal (not an SQLite database) — name the journal"
            " setting's file"
        )
    if is_corrupt(exc):
        return untrusted(path, _one_line(str(exc)))
    return JournalError(f"journal {path}: cannot read ({_one_line(str(exc))})")


def _one_line(text: str) -> str:
    """SQLite's text on one line: its lines joined with ``; `` (not a literal ``\\n``)."""
    return printable("; ".join(line.strip() for line in text.splitlines() if line.strip()))


def _tidy(file: Path) -> None:
    """Remove the empty ``-wal`` and the ``-shm`` a read-only open of ``file`` left, as SQLite
    does: a connection that reads (only, ``query_only``) and closes removes them when it is the
    last connection to the file (it checkpoints an empty log: nothing is written to the file),
    and leaves them to the process that has the file open otherwise."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(file.absolute()))}?mode=rw", uri=True, timeout=0)
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        pass  # left for the next open: SQLite reads an empty log as none
