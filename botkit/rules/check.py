"""Checking strategy files without running them, and the JSON Schema of the format.

``check_scan`` loads every file a strategy source handed over (``botkit check``:
:func:`botkit.sources.check_paths`), collects every located problem — including strategy names
used by two files — and never stops at the first. ``json_schema`` describes the format for
editors (YAML language servers read JSON Schema).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botkit.errors import ConfigError, Location, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.ids import twin_clash
from botkit.rules.loader import loads_bytes
from botkit.rules.model import Strategy
from botkit.rules.schema import StrategySpec
from botkit.rules.source import Scan, SourceText, Unreadable

__all__ = ["check_scan", "json_schema", "load_scan"]

SCHEMA_ID = "https://botkit.invalid/schema/strategy.json"


def load_scan(
    scan: Scan, *, instruments: Mapping[str, Instrument] | None = None
) -> tuple[list[tuple[SourceText, Strategy]], list[ConfigError]]:
    """Each file of ``scan`` that loads, with its strategy, in file order, and every problem:
    the paths that do not exist, the files that could not be read, the files that do not load."""
    loaded: list[tuple[SourceText, Strategy]] = []
    problems = list(scan.missing)
    for source in scan.files:
        if isinstance(source, Unreadable):
            problems.extend(source.error.problems)
            continue
        try:
            loaded.append(
                (source, loads_bytes(source.content, source.file, instruments=instruments))
            )
        except StrategyFileError as exc:
            problems.extend(exc.problems)
    return loaded, problems


def check_scan(
    scan: Scan,
    *,
    shown: str,
    instruments: Mapping[str, Instrument] | None = None,
    ran: Mapping[str, str] | None = None,
) -> tuple[list[Strategy], list[ConfigError]]:
    """The strategies of ``scan`` that load and every problem found (:func:`load_scan`), a
    strategy name used twice, and a client order id tag used twice — by two of the files, or
    by a file and a strategy that ``ran`` (the journal's: name → where it is known); "no
    strategy files" (located at ``shown``, the paths named) when there are none."""
    if not scan.files and not scan.missing:
        missing = ConfigError(
            "no strategy files (*.yaml, *.yml) found",
            where=Location(file=shown),
            hint="add a strategy file or name one",
        )
        return [], [missing]
    loaded, problems = load_scan(scan, instruments=instruments)
    strategies: list[Strategy] = []
    first: dict[str, Strategy] = {}
    files: dict[str, str] = {}  # the file of each name in ``first``
    known = None if ran is None else lambda: ran
    for source, strategy in loaded:
        if strategy.name in first:
            problems.append(
                ConfigError(
                    f"strategy name '{strategy.name}' is already used by "
                    f"{first[strategy.name].source}",
                    where=source.name_location(),
                    hint="give every strategy its own name (client order ids derive from it)",
                )
            )
            continue
        clash = twin_clash(strategy.name, files, known)
        if clash is not None:
            text, hint = clash
            problems.append(ConfigError(text, where=source.name_location(), hint=hint))
            continue
        first[strategy.name] = strategy
        files[strategy.name] = strategy.source
        strategies.append(strategy)
    return strategies, problems


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a strategy file."""
    schema = StrategySpec.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "botkit strategy",
        "description": "A botkit strategy file (see docs/strategies.md).",
    }
