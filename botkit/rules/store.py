"""The strategies the runner runs, reloaded each cycle from a strategy source.

:class:`StrategyStore` keeps, per strategy file, its last good compiled version. ``refresh()``
takes what the source holds now (:class:`~botkit.rules.source.Scan`: each file's bytes, or why
it could not be read), compares the content hash, and reports what changed: a valid change
takes effect, an invalid change keeps the last good version running and reports the located
error, and a deleted file stops its strategy (the runner applies the strategy's
``on_delete``). A new strategy whose client order id tag is another's — one loaded from
another file, or one that ran before (``ran``: the journal's) — is refused, and tried again
at every refresh. The store reads no file: the file adapter (:class:`botkit.sources.FileSource`)
does, and hands the text over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from botkit.errors import ConfigError, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.ports.journal import StrategyBook
from botkit.rules.ids import strategy_tag, twin_clash
from botkit.rules.loader import loads_bytes
from botkit.rules.model import Strategy
from botkit.rules.source import SourceText, StrategySource, Unreadable

__all__ = ["ReloadReport", "StrategyStore", "ran_in"]


def _fingerprint(instruments: Mapping[str, Instrument] | None) -> object:
    if instruments is None:
        return None
    return tuple(
        sorted(
            (s, i.minPx, i.maxPx, i.ordPxRange, i.minSz, i.lotSz) for s, i in instruments.items()
        )
    )


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
    fingerprint: object
    """The instruments' fingerprint the file was compiled against."""
    strategy: Strategy | None
    error: StrategyFileError | None
    content: bytes | None = None
    """The bytes compiled (None: never the same, so the file is tried again: a file refused
    for its name)."""


@dataclass(slots=True)
class _Found:
    """What one refresh finds, in the order it is reported; ``names``: which file runs each
    strategy name so far."""

    errors: list[StrategyFileError]
    loaded: list[Strategy] = field(default_factory=list)
    changed: list[Strategy] = field(default_factory=list)
    removed: list[Strategy] = field(default_factory=list)
    kept: list[Strategy] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    ran: Mapping[str, str] | None = None
    """The strategies that ran (the store's ``ran``), read once, when a file is to load."""

    def keep(self, strategy: Strategy, file: str) -> None:
        """``strategy`` runs on at its last good version (its file is now invalid)."""
        self.kept.append(strategy)
        self.names[strategy.name] = file

    def report(self) -> ReloadReport:
        return ReloadReport(
            tuple(self.loaded),
            tuple(self.changed),
            tuple(self.removed),
            tuple(self.errors),
            tuple(self.kept),
        )


class StrategyStore:
    """Strategy files by name, each with its last good compiled version, read from
    ``source``."""

    __slots__ = ("_entries", "instruments", "ran", "source")

    def __init__(
        self,
        source: StrategySource,
        *,
        instruments: Mapping[str, Instrument] | None = None,
        ran: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self.source = source
        self.instruments = instruments
        self.ran = ran
        """The strategies that ran before (the journal's): name → where they are known (read
        at a refresh that loads a file). A new strategy with the client order id tag of one
        of them under another name is refused, as one with a loaded one's tag is."""
        self._entries: dict[str, _Entry] = {}

    @property
    def paths(self) -> tuple[str, ...]:
        """The files and folders the source reads, as configured."""
        return self.source.paths

    @property
    def strategies(self) -> dict[str, Strategy]:
        """The strategies running now (last good versions), by name."""
        return {
            e.strategy.name: e.strategy for e in self._entries.values() if e.strategy is not None
        }

    @property
    def fixed(self) -> bool:
        """True when :meth:`refresh` can change nothing any more (no file is read): the
        strategies and their versions stay what they are now (a backtest's store)."""
        return False

    def refresh(self, instruments: Mapping[str, Instrument] | None = None) -> ReloadReport:
        """Re-read the source; apply valid changes; keep the last good version of invalid ones.

        Strategies whose files did not change keep their names first; a new or changed file
        that takes a name already running elsewhere is refused (and retried every refresh).
        """
        if instruments is not None:
            self.instruments = instruments
        scan = self.source.scan()
        found = _Found(errors=[StrategyFileError([m]) for m in scan.missing])
        fingerprint = _fingerprint(self.instruments)
        for source in self._unchanged_first(scan.files, fingerprint, found):
            self._load(source, fingerprint, found)
        present = {source.file for source in scan.files}
        for file in [f for f in self._entries if f not in present]:
            gone = self._entries.pop(file)
            if gone.strategy is not None:
                found.removed.append(gone.strategy)
        return found.report()

    def _unchanged_first(
        self, files: Iterable[SourceText | Unreadable], fingerprint: object, found: _Found
    ) -> list[SourceText]:
        """Settle the files that could not be read and those unchanged since the last refresh
        (their strategies claim their names first); return the new and changed ones."""
        todo: list[SourceText] = []
        for source in files:
            entry = self._entries.get(source.file)
            if isinstance(source, Unreadable):
                found.errors.append(source.error)
                if entry is not None and entry.strategy is not None:
                    found.keep(entry.strategy, source.file)
                continue
            if (
                entry is None
                or entry.content != source.content  # the bytes compiled the last time, or None
                or entry.fingerprint != fingerprint
            ):
                todo.append(source)
                continue
            if entry.error is not None:
                found.errors.append(entry.error)
            if entry.strategy is not None and entry.error is not None:
                found.keep(entry.strategy, source.file)
            elif entry.strategy is not None:
                found.names[entry.strategy.name] = source.file
        return todo

    def _load(self, source: SourceText, fingerprint: object, found: _Found) -> None:
        """Compile a new or changed file; refuse it (keeping its last good version) when it is
        invalid or its strategy's name is running from another file."""
        file = source.file
        entry = self._entries.get(file)
        previous = entry.strategy if entry is not None else None
        try:
            strategy = loads_bytes(source.content, file, instruments=self.instruments)
        except StrategyFileError as exc:
            self._refuse(file, fingerprint, previous, exc, found, source.content)
            if previous is not None:
                found.names.setdefault(previous.name, file)
            return
        other = found.names.get(strategy.name)
        if other is not None and other != file:
            taken = _name_taken(strategy.name, other, source)
            self._refuse(file, fingerprint, previous, taken, found)  # no content: tried again
            return
        running = {n: f for n, f in found.names.items() if f != file}
        clash = twin_clash(strategy.name, running, lambda: self._ran(found))
        if clash is not None:
            shared = _tag_taken(*clash, source)
            self._refuse(file, fingerprint, previous, shared, found)  # no content: tried again
            return
        self._entries[file] = _Entry(fingerprint, strategy, None, source.content)
        found.names[strategy.name] = file
        if previous is None:
            found.loaded.append(strategy)
        elif previous.name != strategy.name:
            found.removed.append(previous)
            found.loaded.append(strategy)
        elif previous.version != strategy.version:
            found.changed.append(strategy)

    def _ran(self, found: _Found) -> Mapping[str, str]:
        if found.ran is None:
            found.ran = self.ran() if self.ran is not None else {}
        return found.ran

    def _refuse(
        self,
        file: str,
        fingerprint: object,
        previous: Strategy | None,
        error: StrategyFileError,
        found: _Found,
        content: bytes | None = None,
    ) -> None:
        self._entries[file] = _Entry(fingerprint, previous, error, content)
        found.errors.append(error)
        if previous is not None:
            found.kept.append(previous)


def ran_in(journal: StrategyBook, where: str) -> Callable[[], dict[str, str]]:
    """The strategies ``journal`` knows (they ran, here or under an older botkit), each as known
    ``where`` (how the journal is named to the operator): a store's or a check's ``ran``."""
    return lambda: {record.name: where for record in journal.strategies(strategy_tag)}


def _tag_taken(text: str, hint: str, source: SourceText) -> StrategyFileError:
    return StrategyFileError([ConfigError(text, where=source.name_location(), hint=hint)])


def _name_taken(name: str, other: str, source: SourceText) -> StrategyFileError:
    return StrategyFileError(
        [
            ConfigError(
                f"strategy name '{name}' is already used by {other}",
                where=source.name_location(),
                hint="give every strategy its own name",
            )
        ]
    )
