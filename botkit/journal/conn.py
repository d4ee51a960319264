"""The journal's SQLite connection: credentials redacted from every value it stores, and SQLite
errors turned into the journal's errors (a corrupt database is :class:`JournalUntrusted`).

:class:`RedactingConnection` passes every text parameter of every statement through the one
:class:`~botkit.redaction.Redactor` (the log sink's): an exchange that echoes the API key in a
message cannot put it into the journal, whichever write path stores the message. Reads go through
it too, so a value is looked up in the form it was stored in.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from botkit.errors import JournalError, JournalUntrusted
from botkit.redaction import Redactor

__all__ = ["RedactingConnection", "is_corrupt", "journal_failure", "untrusted"]

# SQLite result codes (the low byte of an extended code) that mean the file is not a sound
# database: SQLITE_CORRUPT, SQLITE_NOTADB.
_CORRUPT_CODES = frozenset({11, 26})


def _null(value: None) -> None:
    """``None`` as a statement's parameter: NULL, as without an adapter."""
    return value


# ``sqlite3`` binds a parameter of exactly ``int``, ``float``, ``str`` or ``bytearray`` as it is,
# and looks anything else up as an adaptation first: for ``None`` (NULL) a key tuple, a failed
# registry lookup and two failed attribute lookups, about 0.5 µs a value, ten times an
# integer's. A live cycle binds about 300 (an intent's outcome and its time, an outcome line's
# cycle): found in the registry, each costs half. The value bound is the same NULL; ``None``
# is no base type, so every other value is bound as before.
sqlite3.register_adapter(type(None), _null)


_is_text = str.__instancecheck__
"""``isinstance(value, str)``, as a function ``filter`` calls in C."""

_JOIN = "\x00"
"""What :meth:`RedactingConnection._clean` joins a statement's texts with, to search them at
once. A form a value holds is found in the joined text; one found there that no value holds
(across a join: only a form holding this character) costs the per-value pass, nothing else."""


class RedactingConnection(sqlite3.Connection):
    """A connection whose statements store text with credentials replaced by ``***``.

    A statement's texts are searched at once (joined): a live cycle's intents bind about
    3,000 values in a handful of statements, and a search per value and form cost more than the
    statements. Only when a form is found there is each value redacted on its own."""

    redactor: Redactor = Redactor(())

    def _clean(self, parameters: Any) -> Any:
        redact = self.redactor
        kind = type(parameters)
        if kind is list or kind is tuple or kind is dict:
            values = parameters.values() if kind is dict else parameters
            # the texts picked out in C (``isinstance(v, str)``, without a Python step per value)
            if not redact.found_in(_JOIN.join(filter(_is_text, values))):
                return parameters  # no value holds a secret: each is stored as it is
        if isinstance(parameters, Mapping):
            return {k: redact(v) if isinstance(v, str) else v for k, v in parameters.items()}
        return [redact(v) if isinstance(v, str) else v for v in parameters]

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return super().execute(sql, self._clean(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        return super().executemany(sql, (self._clean(p) for p in parameters))


def is_corrupt(exc: BaseException) -> bool:
    """Whether SQLite says the file is not a sound database (malformed, not a database)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        isinstance(exc, sqlite3.DatabaseError)
        and code is not None
        and code & 0xFF in (_CORRUPT_CODES)
    )


def untrusted(path: str, exc: BaseException | str) -> JournalUntrusted:
    return JournalUntrusted(
        f"journal {path} is corrupt ({exc}) — stopping: nothing it says can be trusted. Move it"
        " aside (keep it for inspection) and restore a backup or start a new journal; the"
        " exchange still holds what was sent"
    )


def journal_failure(path: str, exc: sqlite3.Error, doing: str, hint: str) -> JournalError:
    """The journal's error for ``exc`` met while ``doing`` (``read``, ``write``, ...)."""
    if is_corrupt(exc):
        return untrusted(path, exc)
    return JournalError(f"journal {path}: {doing} failed ({exc}){f' — {hint}' if hint else ''}")
