"""One process per file: an exclusive OS lock on ``<file>-lock`` that says who holds it.

The journal (:mod:`botkit.journal.lock`) and the paper account (:mod:`botkit.sim.state`) are each
held by one process at a time in the same way: :func:`take` creates the lock file beside the
held file (mode 0600 whatever the umask, never through a symbolic link), takes an exclusive
``flock`` on it without waiting, and writes who holds it (pid, host, since when, the command).
The lock belongs to the open file: the kernel drops it when the process ends however it ends
(SIGKILL, OOM, a crash), so a dead holder never leaves it stuck; the lock file itself is never
removed (removing it would let a second process lock a new file while the first still runs).

:func:`take` raises :class:`LockBusy` (naming the holder) or :class:`LockUnusable` (what failed);
each caller turns them into its own one-line error.
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
from typing import Literal

from botkit.errors import printable

__all__ = [
    "PRIVATE_MODE",
    "LockBusy",
    "LockUnusable",
    "create_private",
    "identity",
    "lock_path",
    "take",
]

PRIVATE_MODE = 0o600


class LockBusy(Exception):
    """Another process holds the lock; ``holder`` says who, in words."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


class LockUnusable(Exception):
    """The lock file could not be created (``create``), is not a regular file
    (``not_regular``), or the file system refused the lock (``lock``); ``detail`` is the OS's
    reason."""

    def __init__(self, step: Literal["create", "not_regular", "lock"], detail: str = "") -> None:
        super().__init__(f"{step}: {detail}")
        self.step = step
        self.detail = detail


def lock_path(held: str | Path) -> Path:
    """The lock file of the file at ``held`` (beside it, like SQLite's ``-wal``)."""
    return Path(f"{held}-lock")


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


def take(held: str | Path, command: str) -> int:
    """Hold the file at ``held`` for this process (``command`` says who, e.g. ``botkit run``):
    the open, locked descriptor of its lock file (closing it releases the lock). The held file's
    folder is created if needed."""
    path = lock_path(held)
    try:
        Path(held).parent.mkdir(parents=True, exist_ok=True)
        create_private(path)
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise LockUnusable("create", str(exc.strerror or exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LockUnusable("not_regular")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise LockUnusable("lock", str(exc.strerror or exc)) from None
            raise LockBusy(_describe_holder(_read_holder(fd))) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, _holder_text(command).encode("utf-8", "replace"), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


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


def _read_holder(fd: int) -> str:
    """What the holder wrote; it may be writing it right now, so try a few times."""
    text = ""
    for _ in range(5):
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        if text.endswith("\n"):
            return text
        time.sleep(0.01)
    return text
