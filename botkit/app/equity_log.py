"""``/api/equity``'s samples: the account's equity as ``botkit serve`` read it, kept in memory and
in a file beside the journal so that a restart of serve does not lose the curve.

The file (``JOURNAL.equity.jsonl``, mode 600) holds one JSON object a line, oldest first:
``{"ts_ms": 1763000000000, "eq": "10000.5", "upl": "-1.2", "acct": "3f2a9c0b1d7e"}`` (amounts
as decimal strings; ``acct``: whose equity it is, :func:`account_label`). The curve is the
current account's: samples of another account (the settings now name another exchange, API key
or paper account) stay in the file, unshown, with a warning at start (the newest
:data:`EQUITY_SAMPLES` of them, all other accounts together, survive a rewrite); lines without
``acct`` (written before it was added) count as the current account's. ``botkit sim reset``
keeps the paper account's file, so its label: the curve shows the reset as a jump. serve
appends a line per sample (no fsync: a crash loses the last few, never the file) and, when the
file holds twice :data:`EQUITY_SAMPLES` lines of this account, rewrites it with the newest
:data:`EQUITY_SAMPLES` (a new file put in place: a crash leaves the old or the new one), so it
stays under about 1.5 MB (2.2 MB with other accounts' samples in it). At start serve reads it
back: a torn last line (a crash mid-write) is cut off, any other line it cannot read is skipped
with a warning.

The file is made when the journal's folder exists (serve never makes it). One serve writes a
journal's file at a time (an OS lock on ``FILE-lock``, as the journal has); a second serve on
the same journal, a journal in memory, or a folder serve cannot write keeps its samples in
memory only, and says so in the answer and the log.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import IO, Any

from loguru import logger

from botkit.filelock import LockBusy, LockUnusable, create_private, take
from botkit.settings import Settings

__all__ = ["EQUITY_SAMPLES", "EquityLog", "Sample", "account_label", "equity_path"]

EQUITY_SAMPLES = 10_000
"""How many samples serve keeps (one per fresh account read)."""

Sample = tuple[int, Decimal | None, Decimal | None]
"""(exchange ms, equity, unrealized PnL)."""


def equity_path(journal: str | Path) -> Path | None:
    """Where serve keeps the samples of ``journal``: beside it; None for a journal in memory."""
    if str(journal) == ":memory:":
        return None
    path = Path(journal)
    return path.with_name(path.name + ".equity.jsonl")


def account_label(settings: Settings) -> str:
    """Whose equity serve samples, without naming it: 12 hex digits of a SHA-256 over the
    exchange's address and the API key (live), or the paper account's file (sim)."""
    if settings.exchange == "sim":
        where = settings.paper_state_file()
        basis = f"sim\n{':memory:' if where is None else where.resolve()}"
    else:
        key = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        basis = f"live\n{settings.base_url}\n{key}"
    return hashlib.sha256(basis.encode()).hexdigest()[:12]


def _line(sample: Sample, account: str) -> str:
    ts, eq, upl = sample
    return json.dumps(
        {
            "ts_ms": ts,
            "eq": None if eq is None else str(eq),
            "upl": None if upl is None else str(upl),
            "acct": account,
        }
    )


def _amount(value: Any) -> Decimal | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("an amount must be a string")
    number = Decimal(value)
    if not number.is_finite():
        raise ValueError("an amount must be finite")
    return number


def _parse(line: bytes) -> tuple[str | None, Sample]:
    """The account (``None`` on a line written before accounts were) and the sample."""
    value = json.loads(line)
    if not isinstance(value, dict) or not isinstance(value.get("ts_ms"), int):
        raise ValueError("not a sample")
    account = value.get("acct")
    if account is not None and not isinstance(account, str):
        raise ValueError("an account must be a string")
    return account, (value["ts_ms"], _amount(value.get("eq")), _amount(value.get("upl")))


class EquityLog:
    """The samples of ``account`` (:func:`account_label`), newest last, at most ``keep``; in
    the file at ``path`` when serve may write it (``None``: in memory only). Not thread-safe:
    its caller holds a lock."""

    def __init__(self, path: Path | None, *, account: str = "", keep: int = EQUITY_SAMPLES) -> None:
        self.path = path
        self.account = account
        self.keep = keep
        self.samples: deque[Sample] = deque(maxlen=keep)
        self._others: deque[bytes] = deque(maxlen=keep)
        """The newest lines of other accounts in the file (``keep`` of them, all accounts
        together), kept when it is rewritten; the file is rewritten once this account's lines
        reach twice ``keep``."""
        self.where = "in memory only (the journal is in memory)"
        """Where the samples are kept, in words (for the answer)."""
        self._lock: int | None = None
        self._out: IO[str] | None = None
        self._lines = 0
        self._waiting = False
        """The journal's folder does not exist yet (the service has not run): the file is
        opened at the first sample after it does."""
        if path is not None:
            self._open_when_there(path)

    def _open_when_there(self, path: Path) -> None:
        self._waiting = not path.parent.is_dir()
        if self._waiting:
            self.where = f"in memory until {path.parent} exists (the service has not run yet)"
        else:
            self._open(path)

    def _open(self, path: Path) -> None:
        try:
            self._lock = take(path, "botkit serve")
        except LockBusy as exc:
            self._memory(f"another botkit serve writes {path}: {exc.holder}")
            return
        except LockUnusable as exc:
            self._memory(f"cannot lock {path} ({exc.detail or exc.step})")
            return
        try:
            create_private(path)
            self._load(path)
            self._out = path.open("a", encoding="utf-8")
        except OSError as exc:
            self._memory(f"cannot use {path} ({exc.strerror or type(exc).__name__})")
            return
        self.where = f"in {path}, read back when serve starts"
        if self._others:
            self.where += f" ({len(self._others)} samples of another account in it are not shown)"
        if self._lines >= 2 * self.keep + len(self._others):
            self._compact()

    def _memory(self, why: str) -> None:
        logger.warning("equity samples are kept in memory only: {}", why)
        self.where = f"in memory only: {why}"
        if self._out is not None:
            self._out.close()
            self._out = None

    def _load(self, path: Path) -> None:
        data = path.read_bytes()
        whole = data.rfind(b"\n") + 1
        if whole < len(data):  # a torn last line (a crash mid-write): cut it off
            logger.warning(
                "{}: the last line was cut short (serve stopped mid-write); dropped", path
            )
            with path.open("r+b") as file:
                file.truncate(whole)
        bad = others = 0
        lines = data[:whole].splitlines()
        for line in lines:
            if not line.strip():
                continue
            try:
                account, sample = _parse(line)
            except (ValueError, InvalidOperation):
                bad += 1
                continue
            if account is None or account == self.account:
                self.samples.append(sample)
            else:
                others += 1
                self._others.append(line)
        if bad:
            logger.warning("{}: {} lines are not equity samples; skipped", path, bad)
        if others:
            logger.warning(
                "{}: {} samples of another account (the settings named another exchange, API"
                " key or paper account when they were taken) are kept in the file and not shown"
                " — serve with those settings to see them, or delete the file while serve is"
                " stopped to drop them",
                path,
                others,
            )
        self._lines = len(lines)

    def add(self, sample: Sample) -> None:
        """Keep ``sample`` (and write it, when the file is serve's)."""
        if self._waiting and self.path is not None:
            self._open_when_there(self.path)
        self.samples.append(sample)
        if self._out is None:
            return
        try:
            self._out.write(_line(sample, self.account) + "\n")
            self._out.flush()
        except OSError as exc:
            self._memory(f"writing {self.path} failed ({exc.strerror or type(exc).__name__})")
            return
        self._lines += 1
        if self._lines >= 2 * self.keep + len(self._others):
            self._compact()

    def _compact(self) -> None:
        """The file rewritten with the samples kept: a new file put in place."""
        assert self.path is not None
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.writelines(line.decode() + "\n" for line in self._others)
                out.writelines(_line(s, self.account) + "\n" for s in self.samples)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            self._memory(f"rewriting {self.path} failed ({exc.strerror or type(exc).__name__})")
            return
        if self._out is not None:
            self._out.close()
        self._out = self.path.open("a", encoding="utf-8")
        self._lines = len(self._others) + len(self.samples)

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
