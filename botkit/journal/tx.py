"""The journal's write transactions: one ``BEGIN IMMEDIATE`` ... ``COMMIT`` under its lock.

A class rather than a generator context manager: the journal writes several times a cycle, and
a generator-based context manager cost more than the SQL of a small write. The pending
bookkeeping rows of the group-commit mode (:class:`~botkit.journal.pending.Pending`) are written
first, in the same transaction, and forgotten once it commits (kept when it rolls back).
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import suppress
from types import TracebackType

from botkit.errors import JournalError
from botkit.journal.conn import journal_failure
from botkit.journal.pending import Pending
from botkit.journal.writes import Row

__all__ = ["Transaction", "write_failed"]


def write_failed(path: str, exc: sqlite3.Error) -> JournalError:
    """The error of a failed write of the journal at ``path`` (:class:`JournalUntrusted` when
    SQLite says the file is corrupt)."""
    return journal_failure(path, exc, "write", "check free disk space")


class Transaction:
    """``with Transaction(...) as conn:`` — committed at the end, rolled back on an exception;
    a SQLite error becomes a :class:`JournalError`."""

    __slots__ = ("_conn", "_events", "_lock", "_path", "_pending")

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.RLock,
        pending: Pending,
        path: str,
        events: list[Row] | None = None,
    ) -> None:
        self._conn = conn
        self._lock = lock
        self._pending = pending
        self._path = path
        self._events = events
        """Event rows of this transaction's own, written with the pending ones (after them)."""

    def __enter__(self) -> sqlite3.Connection:
        conn = self._conn
        self._lock.acquire()
        try:
            conn.execute("BEGIN IMMEDIATE")
            if self._pending.rows or self._events:
                try:
                    self._pending.write(conn, self._events, path=self._path)
                except BaseException:
                    with suppress(sqlite3.Error):  # SQLite may have rolled back already
                        conn.execute("ROLLBACK")
                    raise
        except BaseException as exc:
            self._lock.release()
            if isinstance(exc, sqlite3.Error):
                raise write_failed(self._path, exc) from exc
            raise
        return conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
            if exc_type is None and self._pending.rows:
                self._pending.clear()
        except sqlite3.Error as error:
            raise write_failed(self._path, error) from error
        finally:
            self._lock.release()
        if isinstance(exc, sqlite3.Error):
            raise write_failed(self._path, exc) from exc
