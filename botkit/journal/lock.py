"""One process per journal: an OS lock on a file beside it, and private files.

:func:`lock_journal` takes an exclusive ``flock`` on ``<journal>-lock`` (created mode 0600) and
writes who holds it (pid, host, since when, the command) into that file. The lock belongs to the
open file: the kernel drops it when the process ends however it ends (SIGKILL, OOM, a crash), so
a dead holder never leaves it stuck, and the file itself is never removed (removing it would let
a second process lock a new file while the first still runs). A second process asking gets
:class:`~botkit.errors.JournalLocked`, one line naming the holder.

Every process that *writes* the journal takes it: ``botkit run`` (dry runs too), ``botkit plan``,
``botkit demo``, a backtest writing a file, and any command that settles or cancels orders. Readers
(``botkit status``, ``botkit journal tail/show/...``) do not: SQLite's WAL lets them read while the
holder writes.

:func:`create_private` creates a file mode 0600 whatever the umask (the journal, this lock file;
SQLite gives the journal's ``-wal`` and ``-shm`` files the journal's own mode).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from botkit.errors import JournalError, JournalLocked, JournalUntrusted
from botkit.filelock import LockBusy, LockUnusable, create_private, identity, lock_path, take

__all__ = ["JournalLock", "create_private", "identity", "lock_journal", "lock_path"]


class JournalLock:
    """An exclusive lock on a journal, held until :meth:`release` (or the process ends)."""

    def __init__(self, journal: str | Path, fd: int) -> None:
        self.journal = str(journal)
        self.path = lock_path(journal)
        self._fd: int | None = fd
        info = os.fstat(fd)
        self._identity = (info.st_dev, info.st_ino)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def verify(self) -> None:
        """Raise :class:`JournalUntrusted` when the lock file at the path is no longer the one
        this process locked (removed or replaced): a second process could lock it now."""
        if self._fd is not None and identity(self.path) != self._identity:
            raise JournalUntrusted(
                f"journal {self.journal}: its lock file {self.path} was removed or replaced while"
                " this process held it — another process may now hold the journal; stopping"
                " (a restart takes the lock again)"
            )

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the file drops the flock

    def __enter__(self) -> JournalLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"JournalLock({self.journal!r}, held={self.held})"


def lock_journal(journal: str | Path, command: str) -> JournalLock:
    """Hold the journal at ``journal`` for this process (``command`` says who, e.g.
    ``botkit run``), or raise :class:`JournalLocked` naming the holder. The journal's folder is
    created if needed (:func:`botkit.filelock.take`)."""
    path = lock_path(journal)
    try:
        fd = take(journal, command)
    except LockBusy as busy:
        raise JournalLocked(
            f"journal {journal} is in use by {busy.holder} — one process per journal: stop that"
            " one first, or give this one another journal (--journal)"
        ) from None
    except LockUnusable as bad:
        if bad.step == "create":
            raise JournalError(
                f"journal {journal}: cannot create its lock file {path} ({bad.detail}) —"
                " check the path and its permissions"
            ) from None
        if bad.step == "not_regular":
            raise JournalError(
                f"journal {journal}: {path} is not a regular file — remove it"
            ) from None
        raise JournalError(
            f"journal {journal}: cannot lock {path} ({bad.detail}) — put the"
            " journal on a local file system"
        ) from None
    return JournalLock(journal, fd)
