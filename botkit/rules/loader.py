"""Loading strategy files: text → checked, compiled :class:`~botkit.rules.model.Strategy`.

``loads`` (text) and ``loads_bytes`` (a file's bytes, as a strategy source hands them over:
:mod:`botkit.rules.source`) are pure: this package reads no file (reading, listing and the
file limits are the file adapter's, :mod:`botkit.sources`). Both raise
:class:`~botkit.errors.StrategyFileError` listing every located problem of the file, so the
operator fixes them all in one go.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from botkit.errors import ConfigError, Location, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.compile import compile_strategy
from botkit.rules.messages import validation_problems
from botkit.rules.model import Strategy
from botkit.rules.schema import NAME_PATTERN, StrategySpec
from botkit.rules.yamlsrc import SourceMap, parse_yaml_all

__all__ = [
    "MAX_FILE_BYTES",
    "file_too_large",
    "loads",
    "loads_bytes",
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
        data, smap, structure = parse_yaml_all(text, file)
    except StrategyFileError:
        raise
    except ConfigError as exc:
        raise StrategyFileError([exc]) from None
    if not isinstance(data, dict):
        raise StrategyFileError(
            [
                *structure,
                ConfigError(
                    "a strategy file is a mapping of keys",
                    where=Location(file=file, line=1, column=1),
                    hint="start with 'strategy: NAME'",
                ),
            ]
        )
    if params:
        data = _with_params(data, params, file)
    try:
        spec = StrategySpec.model_validate(data)
    except ValidationError as exc:
        problems = structure + validation_problems(exc, smap)
        problems += _compile_problems_despite(exc, data, smap, instruments)
        raise StrategyFileError(_unique(problems)) from None
    strategy, problems = compile_strategy(
        spec,
        smap,
        version=version or version_of(text),
        source=file,
        instruments=instruments,
    )
    if structure:  # a duplicate key and the like: reported with everything else found
        raise StrategyFileError(_unique(structure + problems))
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
        elif head == "params" and len(loc) == 2 and isinstance(repaired.get("params"), dict):
            repaired["params"][loc[1]] = Decimal(1)  # a bad value: the name stays defined
        elif head == "margin" and len(loc) == 2 and isinstance(repaired.get("margin"), dict):
            repaired["margin"].pop(loc[1], None)  # that one value falls back to its default
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
    if any(e["loc"][:2] == ("margin", "position_mode") for e in exc.errors()):
        # the mode meant is unknown: whether a pos_side fits it cannot be told
        problems = [p for p in problems if not p.message.startswith("pos_side:")]
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


_TOO_LARGE_HINT = "a strategy file is a few dozen lines"


def file_too_large(file: str, size: int | None = None) -> StrategyFileError:
    """The error of a file over :data:`MAX_FILE_BYTES` (``size``: as the file system told it)."""
    said = f" ({size:,} bytes)" if size is not None else ""
    return StrategyFileError(
        [
            ConfigError(
                f"the file is larger than 1 MB{said}",
                where=Location(file=file),
                hint=_TOO_LARGE_HINT,
            )
        ]
    )


def loads_bytes(
    raw: bytes,
    file: str,
    *,
    instruments: Mapping[str, Instrument] | None = None,
    params: Mapping[str, Decimal] | None = None,
) -> Strategy:
    """Load from the file's bytes (UTF-8); the version is the hash of exactly these bytes."""
    if len(raw) > MAX_FILE_BYTES:
        raise file_too_large(file)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StrategyFileError(
            [ConfigError("the file is not UTF-8 text", where=Location(file=file, line=line),
                         hint="save it as UTF-8")]
        ) from None  # fmt: skip
    return loads(text, file, instruments=instruments, version=version_of(raw), params=params)
