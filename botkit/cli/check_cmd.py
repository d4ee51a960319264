"""``botkit check`` (validate strategy files) and ``botkit schema`` (their JSON Schema)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botkit.errors import ConfigError, Location, UsageError

if TYPE_CHECKING:  # the models are imported when instruments are loaded
    from botkit.exchange.models import Instrument

__all__ = ["load_instruments", "register"]


def register(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="check strategy files and print one line per problem",
        description="Check strategy files: file:line:column: what is wrong — what to do. "
        "Exits 1 when there is a problem.",
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="strategy files or folders (default: the strategies_dir setting, or strategies/)",
    )
    check.add_argument(
        "--instruments",
        metavar="FILE|sim|none",
        default=None,
        help="instruments for the symbol and limit checks: a JSON file (allInstruments "
        "answer), a simulator TOML file, 'sim' (the simulator's), or 'none' (default: the "
        "simulator's when exchange=sim)",
    )
    check.set_defaults(handler=run_check)
    schema = sub.add_parser(
        "schema",
        help="write the JSON Schema of strategy files",
        description="Write the JSON Schema of strategy files, for editors.",
    )
    schema.add_argument("--out", metavar="FILE", help="write to FILE instead of printing")
    schema.set_defaults(handler=run_schema)


def _settings() -> Any | None:
    try:
        module = importlib.import_module("botkit.settings")
    except ImportError:
        return None
    return module.load_settings()


def _sim_instruments(path: str | Path | None) -> dict[str, Instrument] | None:
    try:
        module = importlib.import_module("botkit.sim.config")
    except ImportError:
        return None
    config = module.load_sim_config(path)
    return _to_instruments(item.model_dump() for item in config.instruments)


def _to_instruments(items: Any) -> dict[str, Instrument]:
    from botkit.exchange.models import Instrument

    out: dict[str, Instrument] = {}
    for item in items:
        instrument = Instrument.model_validate(item)
        out[instrument.symbol] = instrument
    return out


def load_instruments(choice: str | None, settings: Any | None) -> Mapping[str, Instrument] | None:
    """The instruments ``--instruments`` names (None: unknown, skip the checks that need them)."""
    from pydantic import ValidationError

    sim_path = getattr(settings, "sim_config", None)
    if choice is None:
        if settings is not None and getattr(settings, "exchange", "") == "sim":
            path = sim_path if sim_path is not None and Path(sim_path).exists() else None
            return _sim_instruments(path)
        return None
    if choice == "none":
        return None
    if choice == "sim":
        path = sim_path if sim_path is not None and Path(sim_path).exists() else None
        return _sim_instruments(path)
    file = Path(choice)
    if file.suffix == ".toml":
        return _sim_instruments(file)
    try:
        data = json.loads(file.read_text(encoding="utf-8"), parse_float=str)
    except OSError as exc:
        raise ConfigError(
            f"cannot read instruments: {exc.strerror}",
            where=Location(file=choice),
            hint="name a JSON file, a simulator TOML file, 'sim' or 'none'",
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not JSON: {exc.msg}", where=Location(file=choice, line=exc.lineno, column=exc.colno)
        ) from None
    items = data.get("data", data) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(
            'expected a list of instruments (or {"data": [...]})', where=Location(file=choice)
        )
    try:
        return _to_instruments(items)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            f"an instrument is invalid: {'.'.join(map(str, first['loc']))}: {first['msg']}",
            where=Location(file=choice),
        ) from None


def run_check(args: argparse.Namespace) -> int:
    from botkit.rules.check import check_paths

    settings = _settings()  # strategies_dir, allow_strategy_symlinks, the instruments
    paths: list[str | Path] = list(args.paths)
    if not paths:
        paths = [getattr(settings, "strategies_dir", None) or "strategies"]
    instruments = load_instruments(args.instruments, settings)
    links = bool(getattr(settings, "allow_strategy_symlinks", False))
    strategies, problems = check_paths(paths, instruments=instruments, outside_links=links)
    for problem in problems:
        print(problem.format())
    traded = sorted({symbol for s in strategies for symbol in s.symbols})
    for symbol in traded:  # an instrument whose status botkit does not know: said once
        odd = instruments[symbol].odd_status if instruments and symbol in instruments else None
        if odd is not None:
            print(
                f"note: instrument {symbol} has status {odd!r}, which botkit does not know:"
                " no new orders are placed on it until the exchange reports it OPEN"
            )
    if problems:
        count = len(problems)
        print(f"{count} problem{'s' if count != 1 else ''}")
        return 1
    checked = "symbols and limits checked" if instruments is not None else "symbols not checked"
    print(f"ok: {len(strategies)} strateg{'ies' if len(strategies) != 1 else 'y'} ({checked})")
    return 0


def run_schema(args: argparse.Namespace) -> int:
    from botkit.rules.check import json_schema

    text = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror}") from None
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0
