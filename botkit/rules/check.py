"""Checking strategy files without running them, and the JSON Schema of the format.

``check_paths`` loads every file named (files or folders), collects every located problem —
including strategy names used by two files — and never stops at the first. ``json_schema``
describes the format for editors (YAML language servers read JSON Schema).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from botkit.errors import ConfigError, Location, StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.loader import load
from botkit.rules.model import Strategy
from botkit.rules.schema import StrategySpec
from botkit.rules.store import discover

__all__ = ["check_paths", "json_schema"]

SCHEMA_ID = "https://botkit.invalid/schema/strategy.json"


def check_paths(
    paths: Iterable[str | Path],
    *,
    instruments: Mapping[str, Instrument] | None = None,
    outside_links: bool = False,
) -> tuple[list[Strategy], list[ConfigError]]:
    """The strategies that load and every problem found, in file order. ``outside_links``:
    follow symlinks out of a file's folder (the ``allow_strategy_symlinks`` setting)."""
    paths = list(paths)
    files, problems = discover(paths)
    if not files and not problems:
        shown = ", ".join(str(p) for p in paths)
        problems.append(
            ConfigError(
                "no strategy files (*.yaml, *.yml) found",
                where=Location(file=shown),
                hint="add a strategy file or name one",
            )
        )
    strategies: list[Strategy] = []
    first: dict[str, Strategy] = {}
    for path in files:
        try:
            strategy = load(path, instruments=instruments, outside_links=outside_links)
        except StrategyFileError as exc:
            problems.extend(exc.problems)
            continue
        if strategy.name in first:
            problems.append(
                ConfigError(
                    f"strategy name '{strategy.name}' is already used by "
                    f"{first[strategy.name].source}",
                    where=Location(file=str(path)),
                    hint="give every strategy its own name (client order ids derive from it)",
                )
            )
            continue
        first[strategy.name] = strategy
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
