"""The strategy files on disk: the file adapter of the strategy store (the edge: file I/O
lives here, the rules package reads none).

:class:`FileSource` lists the files and folders it is given (``*.yaml`` / ``*.yml``; hidden
and editor files skipped), applies the limits before anything is parsed — the size on the open
file (a huge file costs nothing each cycle), no special file (a FIFO opened non-blocking cannot
hang the reader), no symlink out of its folder unless allowed — and hands the core each file's
bytes (:class:`~botkit.rules.source.SourceText`) or the located reason it could not be read.
The core parses, validates and compiles from the bytes.

``load`` and ``check_paths`` are the same reading for one file and for ``botkit check``.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from botkit.errors import ConfigError, Location, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.check import check_scan
from botkit.rules.loader import MAX_FILE_BYTES, file_too_large, loads_bytes
from botkit.rules.model import Strategy
from botkit.rules.source import Scan, SourceText, Unreadable

__all__ = [
    "SUFFIXES",
    "FileSource",
    "check_paths",
    "discover",
    "load",
    "read_strategy_file",
]

SUFFIXES = (".yaml", ".yml")


def discover(paths: Iterable[str | Path]) -> tuple[list[Path], list[ConfigError]]:
    """The strategy files named by ``paths`` (files as given; directories: their ``*.yaml``
    and ``*.yml`` files, hidden ones skipped), sorted, and a problem for each missing path."""
    listed, problems = _listing(paths, {})
    return [Path(file) for file in listed], problems


_CHILDREN_KEPT = 4096
"""The most file names :func:`_listing` keeps made (then it starts again)."""

_Listed = dict[str, bool | None]
"""Each strategy file's name (``str`` of its path, in :func:`discover`'s order), and whether
it is a symlink when its folder's listing says so (None: a file named directly)."""


def _listing(
    paths: Iterable[str | Path], children: dict[tuple[str, str], str]
) -> tuple[_Listed, list[ConfigError]]:
    """:func:`discover`, as names; ``children`` keeps the name of each (folder, file name) made
    (``str(Path(folder) / name)``: the same text, without the path objects every cycle)."""
    files: _Listed = {}
    problems: list[ConfigError] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            folder = str(path)
            for name, link in _strategy_entries(path):
                file = children.get((folder, name))
                if file is None:
                    if len(children) >= _CHILDREN_KEPT:  # names come and go (renames, deploys)
                        children.clear()
                    file = children[folder, name] = str(path / name)
                files.setdefault(file, link)
        elif path.is_file():
            files.setdefault(str(path), None)
        else:
            problems.append(
                ConfigError(
                    "no such file or directory",
                    where=Location(file=str(path)),
                    hint="check the path (a strategy file or a folder of *.yaml files)",
                )
            )
    return files, problems


def _strategy_entries(folder: Path) -> list[tuple[str, bool]]:
    """The names of ``folder``'s strategy files, sorted, each with whether it is a symlink:
    ``*.yaml`` / ``*.yml`` (the suffix as :attr:`PurePath.suffix` reads it), regular files or
    links to them, hidden and editor files skipped. As ``sorted(p for p in folder.iterdir() if
    p.suffix in SUFFIXES and p.is_file() and not p.name.startswith((".", "#")))`` (the paths of
    one folder sort as their names), read through :func:`os.scandir`, whose entries know a
    plain file's kind (and a link's) without a ``stat`` each (the folder is listed every
    cycle)."""
    names: list[tuple[str, bool]] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            dot = name.rfind(".")
            if (
                0 < dot < len(name) - 1
                and name[dot:] in SUFFIXES
                and not name.startswith((".", "#"))
                and _is_file(entry)
            ):
                names.append((name, entry.is_symlink()))
    names.sort()
    return names


def _is_file(entry: os.DirEntry[str]) -> bool:
    """:meth:`Path.is_file` of the entry: a regular file, or a link to one; False for a
    broken link, a link loop or a name gone meanwhile, and any other failure raised as there."""
    try:
        return entry.is_file()
    except OSError as exc:
        if exc.errno in _MISSING:
            return False
        raise


_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
"""The errors :meth:`Path.is_file` reads as "not a file" (pathlib's own list)."""


def _file_error(file: str, message: str, hint: str) -> StrategyFileError:
    return StrategyFileError([ConfigError(message, where=Location(file=file), hint=hint)])


_LINK_HINT = (
    "copy the file into the folder, or set allow_strategy_symlinks = true "
    "(BOTKIT_ALLOW_STRATEGY_SYMLINKS) to follow links out of it"
)


def _target(path: Path, file: str, outside_links: bool) -> Path:
    """What ``path`` names: itself, or the target of a symlink that may be followed."""
    if not path.is_symlink():
        return path
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise _file_error(
            file, "the file is a symlink to nothing (broken link or loop)", _LINK_HINT
        ) from None
    folder = path.absolute().parent.resolve()
    if not outside_links and not target.is_relative_to(folder):
        raise _file_error(
            file, f"the file is a symlink to {target}, outside the folder {folder}", _LINK_HINT
        )
    return target


def read_strategy_file(path: Path, *, outside_links: bool = False) -> SourceText:
    """One strategy file's bytes and facts, the one way every command reads them.

    The size is checked on the open file before anything is read, and at most
    :data:`MAX_FILE_BYTES` + 1 bytes are read (a file growing meanwhile is still refused), so
    a huge file in the folder costs nothing each cycle. A symlink whose target lies outside
    the folder holding the link is refused unless ``outside_links`` (the
    ``allow_strategy_symlinks`` setting). Raises :class:`StrategyFileError` (one located line).
    """
    file = str(path)
    return _read(file, _target(path, file, outside_links))


def _read(file: str, target: str | Path) -> SourceText:
    """:func:`read_strategy_file` of ``file``, once ``target`` (what it names) is known."""
    try:
        # O_NONBLOCK: a FIFO put in place of the file must not hang the reader
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _file_error(
            file, f"cannot read the file: {reason}", "check the path and its permissions"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _file_error(file, "not a regular file", "name a *.yaml file")
        if info.st_size > MAX_FILE_BYTES:
            raise file_too_large(file, info.st_size)
        try:
            # the size the file has, and one byte more: a buffer of the cap for every file
            # every cycle cost more than the rest of the read; one that grew meanwhile is read
            # on, up to the cap
            raw = _read_up_to(fd, info.st_size + 1)
            if len(raw) > info.st_size:
                raw += _read_up_to(fd, MAX_FILE_BYTES + 1 - len(raw))
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise _file_error(file, f"cannot read the file: {reason}", "check the disk") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        raise file_too_large(file)
    return SourceText(file, raw)


def _read_up_to(fd: int, size: int) -> bytes:
    """At most ``size`` bytes from ``fd``, fewer only at the end of the file (what a buffered
    file's ``read(size)`` gives, without building one for each file every cycle)."""
    chunks: list[bytes] = []
    left = size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class FileSource:
    """The strategy files of some files and folders, read afresh at each :meth:`scan` (a
    :class:`~botkit.rules.source.StrategySource`). ``outside_links``: follow symlinks out of a
    file's folder (the ``allow_strategy_symlinks`` setting)."""

    __slots__ = ("_children", "_given", "outside_links", "paths")

    def __init__(
        self, paths: str | Path | Sequence[str | Path], *, outside_links: bool = False
    ) -> None:
        self._given: list[str | Path] = [paths] if isinstance(paths, str | Path) else list(paths)
        self.paths: tuple[str, ...] = tuple(str(p) for p in self._given)
        self.outside_links = outside_links
        self._children: dict[tuple[str, str], str] = {}

    def __repr__(self) -> str:
        return f"FileSource({list(self.paths)!r}, outside_links={self.outside_links})"

    def scan(self) -> Scan:
        files, missing = _listing(self._given, self._children)
        return Scan(tuple([self._read(f, link) for f, link in files.items()]), tuple(missing))

    def _read(self, file: str, link: bool | None) -> SourceText | Unreadable:
        """:func:`read_strategy_file` of ``file`` (``link``: whether its folder's listing
        says it is a symlink, which then needs no ``lstat`` of its own)."""
        try:
            if link is False:
                return _read(file, file)
            return read_strategy_file(Path(file), outside_links=self.outside_links)
        except StrategyFileError as exc:
            return Unreadable(file, exc)


def load(
    path: str | Path,
    *,
    instruments: Mapping[str, Instrument] | None = None,
    outside_links: bool = False,
) -> Strategy:
    """Read (:func:`read_strategy_file`) and load one strategy file."""
    source = read_strategy_file(Path(path), outside_links=outside_links)
    return loads_bytes(source.content, str(path), instruments=instruments)


def check_paths(
    paths: Iterable[str | Path],
    *,
    instruments: Mapping[str, Instrument] | None = None,
    outside_links: bool = False,
    ran: Mapping[str, str] | None = None,
) -> tuple[list[Strategy], list[ConfigError]]:
    """``botkit check``: the strategies of the files named (files or folders) that load, and
    every problem found, in file order (:func:`~botkit.rules.check.check_scan`; ``ran``: the
    strategies the journal knows)."""
    files = FileSource(list(paths), outside_links=outside_links)
    return check_scan(files.scan(), shown=", ".join(files.paths), instruments=instruments, ran=ran)
