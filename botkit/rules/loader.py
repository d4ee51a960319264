"""Loading strategy files: text → checked, compiled :class:`~botkit.rules.model.Strategy`.

``loads`` is pure (text in); ``load`` reads a file. Both raise
:class:`~botkit.errors.StrategyFileError` listing every located problem of the file, so the
operator fixes them all in one go.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from botkit.errors import ConfigError, Location, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.compile import compile_strategy
from botkit.rules.messages import validation_problems
from botkit.rules.model import Strategy
from botkit.rules.schema import StrategySpec
from botkit.rules.yamlsrc import parse_yaml

__all__ = ["load", "loads", "version_of"]

MAX_FILE_BYTES = 1_000_000


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
) -> Strategy:
    """Parse, validate and compile one strategy. ``instruments`` (when known) enables the
    symbol and instrument-limit checks."""
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
    try:
        spec = StrategySpec.model_validate(data)
    except ValidationError as exc:
        raise StrategyFileError(validation_problems(exc, smap)) from None
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


def load(path: str | Path, *, instruments: Mapping[str, Instrument] | None = None) -> Strategy:
    """Read and load one strategy file."""
    file = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise StrategyFileError(
            [ConfigError(f"cannot read the file: {reason}", where=Location(file=file),
                         hint="check the path and its permissions")]
        ) from None  # fmt: skip
    return loads_bytes(raw, file, instruments=instruments)


def loads_bytes(
    raw: bytes, file: str, *, instruments: Mapping[str, Instrument] | None = None
) -> Strategy:
    """Load from the file's bytes (UTF-8); the version is the hash of exactly these bytes."""
    if len(raw) > MAX_FILE_BYTES:
        raise StrategyFileError(
            [ConfigError("the file is larger than 1 MB", where=Location(file=file),
                         hint="a strategy file is a few dozen lines")]
        )  # fmt: skip
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StrategyFileError(
            [ConfigError("the file is not UTF-8 text", where=Location(file=file, line=line),
                         hint="save it as UTF-8")]
        ) from None  # fmt: skip
    return loads(text, file, instruments=instruments, version=version_of(raw))
