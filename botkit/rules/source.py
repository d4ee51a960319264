"""Where strategy text comes from: the port the strategy store reads through, and its values.

The rules package never touches the file system: a strategy source (the file adapter,
:class:`botkit.sources.FileSource`, or a test's stand-in) lists the strategy files, applies
the limits (size, symlinks, special files) and hands over, per file, its bytes
(:class:`SourceText`), or why it could not be read (:class:`Unreadable`). The core parses,
validates and compiles from those bytes only (:func:`~botkit.rules.loader.loads_bytes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from botkit.errors import ConfigError, Location, StrategyFileError

__all__ = ["Scan", "SourceText", "StrategySource", "Unreadable"]


@dataclass(frozen=True, slots=True)
class SourceText:
    """One strategy file as read: its name (the path as listed, the name every message and the
    journal use) and its bytes (UTF-8 text, undecoded: the version is their hash)."""

    file: str
    content: bytes

    def __repr__(self) -> str:
        return f"SourceText({self.file!r}, {len(self.content)} bytes)"

    def name_location(self) -> Location:
        """Where the file names its strategy (its ``strategy:`` line; else line 1): where a
        name refused for another file's or strategy's sake is shown, by every loader."""
        match = _NAME_LINE.search(self.content)
        line = self.content[: match.start()].count(b"\n") + 1 if match else 1
        return Location(file=self.file, line=line, column=1)


_NAME_LINE = re.compile(rb"^strategy\s*:", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A strategy file the source could not hand over, with the one located error saying why
    (too large, a symlink out of its folder, not a regular file, no permission)."""

    file: str
    error: StrategyFileError


@dataclass(frozen=True, slots=True)
class Scan:
    """What a source holds now: every strategy file found, in order, and a problem for each
    path named that does not exist."""

    files: tuple[SourceText | Unreadable, ...] = ()
    missing: tuple[ConfigError, ...] = ()


class StrategySource(Protocol):
    """Where the strategy store reads its files from."""

    @property
    def paths(self) -> tuple[str, ...]:
        """The files and folders configured, as given (for messages)."""
        ...

    def scan(self) -> Scan:
        """List and read every strategy file now."""
        ...
