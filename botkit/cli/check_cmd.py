"""``botkit check`` (validate strategy files) and ``botkit schema`` (their JSON Schema).

The symbols and instrument limits are checked against the instruments ``run`` would use: the
embedded simulator's under ``exchange = "sim"``, the live exchange's (one read of
``allInstruments`` through the normal client) under ``exchange = "live"``. A live exchange that
cannot be read is a failure (exit 1) — a check that passes must mean ``run`` accepts the files —
unless ``--offline`` says to check without it, and the result line then says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botkit.errors import BotkitError, ConfigError, Location, UsageError

if TYPE_CHECKING:  # the models are imported when instruments are loaded
    from botkit.exchange.models import Instrument
    from botkit.settings import Settings

__all__ = ["LiveUnavailable", "load_instruments", "register"]


class LiveUnavailable(BotkitError):
    """The live exchange's instruments could not be read, so symbols cannot be checked."""


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
        "simulator's when exchange=sim, the live exchange's when exchange=live)",
    )
    check.add_argument(
        "--journal",
        metavar="FILE",
        type=Path,
        default=None,
        help="the journal whose strategies (those that ran, their files since removed too) a"
        " new strategy's client order id tag must not share (default: the journal setting's,"
        " when it exists)",
    )
    check.add_argument(
        "--offline",
        action="store_true",
        help="under exchange=live, do not read the exchange: symbols and limits are not checked",
    )
    check.set_defaults(handler=run_check)
    schema = sub.add_parser(
        "schema",
        help="write the JSON Schema of strategy files",
        description="Write the JSON Schema of strategy files, for editors.",
    )
    schema.add_argument("--out", metavar="FILE", help="write to FILE instead of printing")
    schema.set_defaults(handler=run_schema)


def _settings() -> Settings:
    from botkit.settings import load_settings

    return load_settings()


def _sim_instruments(path: str | Path | None) -> dict[str, Instrument]:
    from botkit.sim.config import load_sim_config

    config = load_sim_config(path)
    return _to_instruments(item.model_dump() for item in config.instruments)


def _to_instruments(items: Any) -> dict[str, Instrument]:
    from botkit.exchange.models import Instrument

    out: dict[str, Instrument] = {}
    for item in items:
        instrument = Instrument.model_validate(item)
        out[instrument.symbol] = instrument
    return out


def _live_instruments(settings: Any) -> dict[str, Instrument]:
    """One read of the live exchange's instruments, through the client ``run`` uses."""
    from botkit.app.clients import make_client

    try:
        with make_client(settings, paper="read") as client:
            return {i.symbol: i for i in client.instruments()}
    except (BotkitError, OSError) as exc:
        raise LiveUnavailable(
            f"symbols not checked: cannot read the instruments of {settings.base_url} ({exc})"
            " — check the network and the exchange, or pass --offline to check without them"
        ) from None


def load_instruments(
    choice: str | None, settings: Any | None, *, offline: bool = False
) -> Mapping[str, Instrument] | None:
    """The instruments ``--instruments`` names (None: unknown, skip the checks that need them).
    Without ``--instruments``: the settings' exchange's (the live one's unless ``offline``);
    :class:`LiveUnavailable` when the live exchange cannot be read."""
    from pydantic import ValidationError

    sim_path = getattr(settings, "sim_config", None)
    if choice is None:
        exchange = getattr(settings, "exchange", "") if settings is not None else ""
        if exchange == "sim":
            path = sim_path if sim_path is not None and Path(sim_path).exists() else None
            return _sim_instruments(path)
        if exchange == "live" and not offline:
            return _live_instruments(settings)
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


def _journal_ran(choice: Path | None, settings: Any) -> tuple[Mapping[str, str] | None, str]:
    """The strategies the journal knows (name → how the journal is named) and what the result
    line says of it: ``--journal``'s (it must exist), else the settings' when it exists (None:
    no journal read, and the line says why). Read only: the file is left as it is."""
    from botkit.journal.reader import read_strategies
    from botkit.rules.ids import strategy_tag

    path = choice if choice is not None else getattr(settings, "journal", None)
    if choice is not None and not choice.exists():
        raise UsageError(f"botkit check: --journal {choice} does not exist — name a journal")
    if path is None or str(path) == ":memory:" or not Path(path).exists():
        where = (
            "no journal setting"
            if path is None
            else "the journal setting is :memory:"
            if str(path) == ":memory:"
            else f"none at {path}"
        )
        return None, f"id tags not checked against a journal: {where} — pass --journal FILE"
    where = f"the journal {path}"
    known = {record.name: where for record in read_strategies(Path(path), strategy_tag)}
    return known, f"id tags checked against {where}"


def run_check(args: argparse.Namespace) -> int:
    from botkit.sources import check_paths

    settings = _settings()  # strategies_dir, allow_strategy_symlinks, the instruments
    paths: list[str | Path] = list(args.paths)
    if not paths:
        paths = [getattr(settings, "strategies_dir", None) or "strategies"]
    unavailable: LiveUnavailable | None = None
    try:
        instruments = load_instruments(args.instruments, settings, offline=args.offline)
    except LiveUnavailable as exc:  # still check everything else, then fail
        instruments, unavailable = None, exc
    links = bool(getattr(settings, "allow_strategy_symlinks", False))
    ran, journal = _journal_ran(args.journal, settings)
    strategies, problems = check_paths(paths, instruments=instruments, outside_links=links, ran=ran)
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
    count = len(problems) + (unavailable is not None)
    if unavailable is not None:
        print(f"error: {unavailable}")
    if count:
        print(f"{count} problem{'s' if count != 1 else ''}")
        return 1
    if instruments is not None:
        live = args.instruments is None and getattr(settings, "exchange", "") == "live"
        checked = "symbols and limits checked" + (" against the live exchange" if live else "")
    elif args.offline:
        checked = "symbols not checked: --offline"
    else:
        checked = "symbols not checked"
    checked += f"; {journal}"
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
