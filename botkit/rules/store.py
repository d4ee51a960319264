"""The strategy files the runner runs, re-read each cycle (the edge: file I/O lives here).

:class:`StrategyStore` watches files and directories (``*.yaml`` / ``*.yml``). ``refresh()``
re-reads every file, compares the content hash, and reports what changed: a valid change takes
effect, an invalid change keeps the last good version running and reports the located error,
and a deleted file stops its strategy (the runner applies the strategy's ``on_delete``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from botkit.errors import ConfigError, Location, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.loader import loads_bytes, read_strategy_file, version_of
from botkit.rules.model import Strategy

__all__ = ["ReloadReport", "StrategyStore", "discover"]

SUFFIXES = (".yaml", ".yml")
_NAME_LINE = re.compile(rb"^strategy\s*:", re.MULTILINE)


def discover(paths: Iterable[str | Path]) -> tuple[list[Path], list[ConfigError]]:
    """The strategy files named by ``paths`` (files as given; directories: their ``*.yaml``
    and ``*.yml`` files, hidden ones skipped), sorted, and a problem for each missing path."""
    files: list[Path] = []
    problems: list[ConfigError] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            files.extend(
                sorted(
                    p
                    for p in path.iterdir()
                    if p.suffix in SUFFIXES and p.is_file() and not p.name.startswith((".", "#"))
                )
            )
        elif path.is_file():
            files.append(path)
        else:
            problems.append(
                ConfigError(
                    "no such file or directory",
                    where=Location(file=str(path)),
                    hint="check the path (a strategy file or a folder of *.yaml files)",
                )
            )
    unique = list(dict.fromkeys(files))
    return unique, problems


def _fingerprint(instruments: Mapping[str, Instrument] | None) -> object:
    if instruments is None:
        return None
    return tuple(
        sorted(
            (s, i.minPx, i.maxPx, i.ordPxRange, i.minSz, i.lotSz) for s, i in instruments.items()
        )
    )


def _name_location(file: str, raw: bytes) -> Location:
    match = _NAME_LINE.search(raw)
    line = raw[: match.start()].count(b"\n") + 1 if match else 1
    return Location(file=file, line=line, column=1)


@dataclass(frozen=True, slots=True)
class ReloadReport:
    """What one refresh changed. ``errors`` are per file; their last good version still runs."""

    loaded: tuple[Strategy, ...] = ()
    changed: tuple[Strategy, ...] = ()
    removed: tuple[Strategy, ...] = ()
    errors: tuple[StrategyFileError, ...] = ()
    kept: tuple[Strategy, ...] = ()
    """Strategies still running at their last good version because their file is now invalid."""

    @property
    def changed_anything(self) -> bool:
        return bool(self.loaded or self.changed or self.removed)

    def lines(self) -> list[str]:
        """One line per event, for logs and the operator."""
        out = [f"loaded {s.name} ({s.source}, version {s.version[:12]})" for s in self.loaded]
        out += [f"reloaded {s.name} ({s.source}, version {s.version[:12]})" for s in self.changed]
        out += [
            f"stopped {s.name}: {s.source} is gone (resting orders: on_delete={s.on_delete.value})"
            for s in self.removed
        ]
        out += [
            f"kept {s.name} at version {s.version[:12]}: its file is invalid" for s in self.kept
        ]
        out += [line for e in self.errors for line in str(e).splitlines()]
        return out


@dataclass(slots=True)
class _Entry:
    key: tuple[str, object]
    strategy: Strategy | None
    error: StrategyFileError | None


class StrategyStore:
    """Strategy files by path, each with its last good compiled version."""

    __slots__ = ("_entries", "instruments", "outside_links", "paths")

    def __init__(
        self,
        paths: str | Path | Sequence[str | Path],
        *,
        instruments: Mapping[str, Instrument] | None = None,
        outside_links: bool = False,
    ) -> None:
        self.paths: list[str | Path] = [paths] if isinstance(paths, str | Path) else list(paths)
        self.instruments = instruments
        self.outside_links = outside_links
        """Follow symlinks out of the strategies folder (the allow_strategy_symlinks setting)."""
        self._entries: dict[Path, _Entry] = {}

    @property
    def strategies(self) -> dict[str, Strategy]:
        """The strategies running now (last good versions), by name."""
        return {
            e.strategy.name: e.strategy for e in self._entries.values() if e.strategy is not None
        }

    def refresh(self, instruments: Mapping[str, Instrument] | None = None) -> ReloadReport:
        """Re-read the files; apply valid changes; keep the last good version of invalid ones.

        Strategies whose files did not change keep their names first; a new or changed file
        that takes a name already running elsewhere is refused (and retried every refresh).
        """
        if instruments is not None:
            self.instruments = instruments
        fingerprint = _fingerprint(self.instruments)
        files, missing = discover(self.paths)
        loaded: list[Strategy] = []
        changed: list[Strategy] = []
        removed: list[Strategy] = []
        kept: list[Strategy] = []
        errors: list[StrategyFileError] = [StrategyFileError([m]) for m in missing]
        names: dict[str, Path] = {}
        todo: list[tuple[Path, bytes, tuple[str, object]]] = []
        for path in files:
            entry = self._entries.get(path)
            try:
                raw = read_strategy_file(path, outside_links=self.outside_links)
            except StrategyFileError as exc:
                errors.append(exc)
                if entry is not None and entry.strategy is not None:
                    kept.append(entry.strategy)
                    names[entry.strategy.name] = path
                continue
            key = (version_of(raw), fingerprint)
            if entry is not None and entry.key == key:
                if entry.error is not None:
                    errors.append(entry.error)
                if entry.strategy is not None:
                    if entry.error is not None:
                        kept.append(entry.strategy)
                    names[entry.strategy.name] = path
            else:
                todo.append((path, raw, key))
        for path, raw, key in todo:
            entry = self._entries.get(path)
            previous = entry.strategy if entry is not None else None
            try:
                strategy = loads_bytes(raw, str(path), instruments=self.instruments)
            except StrategyFileError as exc:
                self._entries[path] = _Entry(key, previous, exc)
                errors.append(exc)
                if previous is not None:
                    kept.append(previous)
                    names.setdefault(previous.name, path)
                continue
            other = names.get(strategy.name)
            if other is not None and other != path:
                taken = _name_taken(strategy.name, other, path, raw)
                self._entries[path] = _Entry(_RETRY, previous, taken)
                errors.append(taken)
                if previous is not None:
                    kept.append(previous)
                continue
            self._entries[path] = _Entry(key, strategy, None)
            names[strategy.name] = path
            if previous is None:
                loaded.append(strategy)
            elif previous.name != strategy.name:
                removed.append(previous)
                loaded.append(strategy)
            elif previous.version != strategy.version:
                changed.append(strategy)
        present = set(files)
        for path in [p for p in self._entries if p not in present]:
            gone = self._entries.pop(path)
            if gone.strategy is not None:
                removed.append(gone.strategy)
        return ReloadReport(
            tuple(loaded), tuple(changed), tuple(removed), tuple(errors), tuple(kept)
        )


_RETRY: tuple[str, object] = ("", object())
"""The cache key of a file refused for its name: never equal, so it is tried again."""


def _name_taken(name: str, other: Path, path: Path, raw: bytes) -> StrategyFileError:
    return StrategyFileError(
        [
            ConfigError(
                f"strategy name '{name}' is already used by {other}",
                where=_name_location(str(path), raw),
                hint="give every strategy its own name",
            )
        ]
    )
