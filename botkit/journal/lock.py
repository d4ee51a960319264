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

import errno
import fcntl
import os
import socket
import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from botkit.errors import JournalError, JournalLocked, JournalUntrusted, printable

__all__ = ["JournalLock", "create_private", "identity", "lock_journal", "lock_path"]

PRIVATE_MODE = 0o600


def lock_path(journal: str | Path) -> Path:
    """The lock file of the journal at ``journal`` (beside it, like SQLite's ``-wal``)."""
    return Path(f"{journal}-lock")


def create_private(path: str | Path) -> bool:
    """Create ``path`` empty with mode 0600 (whatever the umask) unless it exists; True when it
    was created here. An existing file is left as it is."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_MODE)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, PRIVATE_MODE)  # the umask may have taken bits away (0277: not writable)
    finally:
        os.close(fd)
    return True


def identity(path: str | Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, or None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _holder_text(command: str) -> str:
    since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"pid={os.getpid()} host={socket.gethostname()} since={since} command={command}\n"


def _describe_holder(text: str) -> str:
    fields = dict(part.partition("=")[::2] for part in text.split("\n", 1)[0].split(" ") if part)
    if "pid" not in fields:  # the holder has locked but not yet written (or an old file)
        return "another process (it has not said who yet)"
    command = text.split("command=", 1)[1].strip() if "command=" in text else ""
    return printable(
        f"pid {fields['pid']} on host {fields.get('host', '?')} since {fields.get('since', '?')}"
        + (f" ({command})" if command else "")
    )


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
    created if needed."""
    path = lock_path(journal)
    try:
        Path(journal).parent.mkdir(parents=True, exist_ok=True)
        create_private(path)
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise JournalError(
            f"journal {journal}: cannot create its lock file {path} ({exc.strerror or exc}) —"
            " check the path and its permissions"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise JournalError(f"journal {journal}: {path} is not a regular file — remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise JournalError(
                    f"journal {journal}: cannot lock {path} ({exc.strerror or exc}) — put the"
                    " journal on a local file system"
                ) from None
            holder = _describe_holder(_read_holder(fd))
            raise JournalLocked(
                f"journal {journal} is in use by {holder} — one process per journal: stop that"
                " one first, or give this one another journal (--journal)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, _holder_text(command).encode("utf-8", "replace"), 0)
    except BaseException:
        os.close(fd)
        raise
    return JournalLock(journal, fd)


def _read_holder(fd: int) -> str:
    """What the holder wrote; it may be writing it right now, so try a few times."""
    text = ""
    for _ in range(5):
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        if text.endswith("\n"):
            return text
        time.sleep(0.01)
    return text
