"""Loading strategy files: text → checked, compiled :class:`~botkit.rules.model.Strategy`.

``loads`` is pure (text in); ``load`` reads a file. Both raise
:class:`~botkit.errors.StrategyFileError` listing every located problem of the file, so the
operator fixes them all in one go.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import stat
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from botkit.errors import ConfigError, Location, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.compile import compile_strategy
from botkit.rules.messages import validation_problems
from botkit.rules.model import Strategy
from botkit.rules.schema import NAME_PATTERN, StrategySpec
from botkit.rules.yamlsrc import SourceMap, parse_yaml

__all__ = [
    "MAX_FILE_BYTES",
    "load",
    "loads",
    "loads_bytes",
    "read_strategy_file",
    "version_of",
]

MAX_FILE_BYTES = 1_000_000
"""A strategy file is a few dozen lines: a larger file is refused before it is read."""


def version_of(content: bytes | str) -> str:
    """The version the journal records: sha256 (hex) of the file's bytes."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return hashlib.sha256(data).hexdigest()


def loads(
    text: str,
    file: str = "<string>",
    *,
    instruments: Mapping[str, Instrument] | None = None,
    version: str | None = None,
    params: Mapping[str, Decimal] | None = None,
) -> Strategy:
    """Parse, validate and compile one strategy. ``instruments`` (when known) enables the
    symbol and instrument-limit checks. ``params`` replaces values of the file's ``params:``
    (a backtest sweep's variants); a name the file does not define is an error."""
    try:
        data, smap = parse_yaml(text, file)
    except StrategyFileError:
        raise
    except ConfigError as exc:
        raise StrategyFileError([exc]) from None
    if not isinstance(data, dict):
        raise StrategyFileError(
            [
                ConfigError(
                    "a strategy file is a mapping of keys",
                    where=Location(file=file, line=1, column=1),
                    hint="start with 'strategy: NAME'",
                )
            ]
        )
    if params:
        data = _with_params(data, params, file)
    try:
        spec = StrategySpec.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc, smap)
        problems += _compile_problems_despite(exc, data, smap, instruments)
        raise StrategyFileError(_unique(problems)) from None
    strategy, problems = compile_strategy(
        spec,
        smap,
        version=version or version_of(text),
        source=file,
        instruments=instruments,
    )
    if problems:
        raise StrategyFileError(problems)
    return strategy


def _with_params(data: dict[str, Any], params: Mapping[str, Decimal], file: str) -> dict[str, Any]:
    """``data`` with the given ``params:`` values replaced (only names the file defines)."""
    defined = data.get("params")
    defined = defined if isinstance(defined, dict) else {}
    unknown = sorted(set(params) - set(defined))
    if unknown:
        known = ", ".join(sorted(str(k) for k in defined)) or "none"
        raise StrategyFileError(
            [
                ConfigError(
                    f"params {', '.join(unknown)} not defined in the file",
                    where=Location(file=file),
                    hint=f"override only the file's params (it defines: {known})",
                )
            ]
        )
    return {**data, "params": {**defined, **params}}


_ACTIONS = {"place", "close", "cancel", "set_leverage", "set_position_mode"}
_PLACEHOLDERS: dict[str, Any] = {"strategy": "invalid", "symbol": "INVALID", "every": "1m"}


def _compile_problems_despite(
    exc: ValidationError,
    data: dict[str, Any],
    smap: SourceMap,
    instruments: Mapping[str, Instrument] | None,
) -> list[ConfigError]:
    """Also report the expression and meaning problems of the parts that are well-formed.

    Each part the schema refused is set aside (an unknown key dropped, a broken rule replaced
    by a harmless stand-in of the same name, a broken top-level value by a placeholder) and
    the rest is compiled, so one run of ``botkit check`` shows every problem of the file.
    """
    repaired = copy.deepcopy(data)
    rules = repaired.get("rules")
    for err in exc.errors(include_url=False):
        loc = err["loc"]
        if not loc:
            return []
        head = loc[0]
        if err["type"] == "extra_forbidden":
            parent = _at(repaired, loc[:-1])
            if isinstance(parent, dict):
                parent.pop(loc[-1], None)
                if len(loc) == 3 and head == "rules" and not _ACTIONS & parent.keys():
                    parent["cancel"] = {}  # a stand-in, so "does nothing" is not reported too
        elif (
            head == "rules"
            and len(loc) >= 2
            and isinstance(loc[1], int)
            and isinstance(rules, list)
        ):
            old = rules[loc[1]]
            name = old.get("name") if isinstance(old, dict) else None
            valid = isinstance(name, str) and re.fullmatch(NAME_PATTERN, name)
            rules[loc[1]] = {"name": name if valid else f"invalid-{loc[1]}", "cancel": {}}
        elif isinstance(head, str) and head in _PLACEHOLDERS and len(loc) == 1:
            repaired[head] = _PLACEHOLDERS[head]
        elif isinstance(head, str) and head not in ("rules", "strategy", "symbol", "every"):
            repaired.pop(head, None)
        else:
            return []
    try:
        spec = StrategySpec.model_validate(repaired)
    except ValidationError:
        return []
    if repaired.get("symbol") != data.get("symbol"):
        instruments = None
    _, problems = compile_strategy(
        spec, smap, version="", source=smap.file, instruments=instruments
    )
    return problems


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _unique(problems: list[ConfigError]) -> list[ConfigError]:
    seen: set[str] = set()
    out: list[ConfigError] = []
    for p in sorted(problems, key=lambda p: (p.where.line or 0, p.where.column or 0)):
        if p.format() not in seen:
            seen.add(p.format())
            out.append(p)
    return out


def load(
    path: str | Path,
    *,
    instruments: Mapping[str, Instrument] | None = None,
    outside_links: bool = False,
) -> Strategy:
    """Read (:func:`read_strategy_file`) and load one strategy file."""
    raw = read_strategy_file(Path(path), outside_links=outside_links)
    return loads_bytes(raw, str(path), instruments=instruments)


def _file_error(file: str, message: str, hint: str) -> StrategyFileError:
    return StrategyFileError([ConfigError(message, where=Location(file=file), hint=hint)])


_TOO_LARGE_HINT = "a strategy file is a few dozen lines"
_LINK_HINT = (
    "copy the file into the folder, or set allow_strategy_symlinks = true "
    "(BOTKIT_ALLOW_STRATEGY_SYMLINKS) to follow links out of it"
)


def read_strategy_file(path: Path, *, outside_links: bool = False) -> bytes:
    """The bytes of one strategy file, the one way every command reads them.

    The size is checked on the open file before anything is read, and at most
    :data:`MAX_FILE_BYTES` + 1 bytes are read (a file growing meanwhile is still refused), so
    a huge file in the folder costs nothing each cycle. A symlink whose target lies outside
    the folder holding the link is refused unless ``outside_links`` (the
    ``allow_strategy_symlinks`` setting). Raises :class:`StrategyFileError` (one located line).
    """
    file = str(path)
    target = path
    if path.is_symlink():
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
    try:
        # O_NONBLOCK: a FIFO put in place of the file must not hang the reader
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _file_error(
            file, f"cannot read the file: {reason}", "check the path and its permissions"
        ) from None
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _file_error(file, "not a regular file", "name a *.yaml file")
        if info.st_size > MAX_FILE_BYTES:
            raise _file_error(
                file, f"the file is larger than 1 MB ({info.st_size:,} bytes)", _TOO_LARGE_HINT
            )
        try:
            raw = stream.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise _file_error(file, f"cannot read the file: {reason}", "check the disk") from None
    if len(raw) > MAX_FILE_BYTES:
        raise _file_error(file, "the file is larger than 1 MB", _TOO_LARGE_HINT)
    return raw


def loads_bytes(
    raw: bytes,
    file: str,
    *,
    instruments: Mapping[str, Instrument] | None = None,
    params: Mapping[str, Decimal] | None = None,
) -> Strategy:
    """Load from the file's bytes (UTF-8); the version is the hash of exactly these bytes."""
    if len(raw) > MAX_FILE_BYTES:
        raise _file_error(file, "the file is larger than 1 MB", _TOO_LARGE_HINT)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StrategyFileError(
            [ConfigError("the file is not UTF-8 text", where=Location(file=file, line=line),
                         hint="save it as UTF-8")]
        ) from None  # fmt: skip
    return loads(text, file, instruments=instruments, version=version_of(raw), params=params)
