"""``botkit sim ...``: run the paper exchange as an HTTP server, start a fresh paper account, or
show the simulator's effective config.

``botkit sim serve --state FILE`` keeps the paper account in ``FILE`` (SQLite): every change is
saved before its answer leaves, and a restart with the same ``--state`` continues the account
(resting orders, positions, balance, history, marks). Without ``--state`` the account lives in
memory and is gone when the server stops; the start-up lines say which. ``botkit sim reset``
starts a fresh paper account in a state file (default: the one ``botkit run`` uses with
``exchange = "sim"``, ``paper.sqlite`` beside the journal), at the ``paper_balance`` setting
(else the simulator config's balance); it refuses while a process holds the file.

``botkit sim serve`` accepts the credentials given by ``--key/--secret/--passphrase``, else the
``BOTKIT_API_*`` settings, else those of the simulator's config file (the well-known defaults
``sim-key`` / ``sim-secret`` / ``sim-passphrase``). Instruments, balance, auth schemes, clock
tolerance and faults come from the simulator's TOML (``--config``, else the ``sim_config``
setting, else the built-in defaults).
"""

from __future__ import annotations

import argparse
import json
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botkit.cli.argtypes import port_or_zero
from botkit.errors import UsageError

if TYPE_CHECKING:  # the simulator is imported by the handlers, when a command runs
    from botkit.settings import Settings
    from botkit.sim.config import SimConfig

__all__ = ["register"]

DEFAULT_PORT = 8900
_DEFAULT_SIM_CONFIG = Path("configs/sim.toml")


def _config(args: argparse.Namespace) -> tuple[SimConfig, str]:
    """The simulator's config with the credentials of the flags / settings applied, and where
    it came from."""
    from botkit.settings import load_settings
    from botkit.sim.auth import effective_auth
    from botkit.sim.config import load_sim_config

    path: Path | None = args.config
    key, secret, passphrase = args.key, args.secret, args.passphrase
    if path is None or not (key or secret):
        settings = load_settings()
        if path is None:
            path = settings.sim_config
            if path == _DEFAULT_SIM_CONFIG and not path.is_file():
                path = None
        if not (key or secret):
            key = settings.api_key.get_secret_value() if settings.api_key else None
            secret = settings.api_secret.get_secret_value() if settings.api_secret else None
            if passphrase is None and settings.api_passphrase is not None:
                passphrase = settings.api_passphrase.get_secret_value()
    config = load_sim_config(path)
    auth = effective_auth(config.auth, key=key, secret=secret, passphrase=passphrase)
    updates: dict[str, Any] = {}
    if args.schemes:
        schemes = [s.strip().lower() for s in args.schemes.split(",") if s.strip()]
        bad = [s for s in schemes if s not in {"pf", "v3"}]
        if bad or not schemes:
            raise UsageError(f"--schemes: unknown scheme {bad[0] if bad else '(none)'}; use pf, v3")
        updates["schemes"] = schemes
    if args.tolerance_ms is not None:
        if args.tolerance_ms <= 0:
            raise UsageError("--tolerance-ms must be a positive number of milliseconds")
        updates["tolerance_ms"] = args.tolerance_ms
    auth = auth.model_copy(update=updates)
    changes: dict[str, Any] = {"auth": auth}
    if args.no_duplicate_check:
        changes["duplicate_check"] = False
    return config.model_copy(update=changes), str(path or "<built-in sim defaults>")


def _shown_key(key: str) -> str:
    from botkit.settings import SIM_DEFAULT_KEY

    return key if key == SIM_DEFAULT_KEY else f"{key[:3]}…"


def _settings() -> Settings:
    from botkit.settings import load_settings

    return load_settings()


def _serve(args: argparse.Namespace) -> int:
    from botkit.clock import WallClock
    from botkit.sim.faults import FaultPlan
    from botkit.sim.inprocess import make_sim, with_balance
    from botkit.sim.server import serve
    from botkit.sim.state import PaperFile

    config, source = _config(args)
    settings = _settings()
    config = with_balance(config, settings.paper_balance)
    clock = WallClock()
    plan = FaultPlan.from_config(config.faults, seed=config.seed, clock=clock, source=source)
    paper = (
        PaperFile(args.state, synchronous=settings.paper_synchronous, command="botkit sim serve")
        if args.state is not None
        else None
    )
    sim = make_sim(config, clock, faults=plan, paper=paper)
    auth = config.auth
    keys = ", ".join(_shown_key(k.key) for k in auth.keys)
    symbols = ", ".join(i.symbol for i in config.instruments)
    if sim.restored is not None:
        state = f"{args.state} ({sim.restored.describe()}; kept across restarts)"
    else:
        state = "in memory: everything is lost when it stops (--state FILE keeps it)"

    def ready(url: str) -> None:
        print(
            f"botkit sim: paper exchange listening on {url}\n"
            f"  keys: {keys}; signing: {'+'.join(auth.schemes)}; "
            f"clock tolerance: {auth.tolerance_ms} ms; "
            f"duplicate clOrdId: {'refused' if config.duplicate_check else 'placed again'}\n"
            f"  instruments: {symbols}; starting balance: {config.balance.amount} "
            f"{config.balance.currency}"
            f"\n  paper account: {state}"
            + (f"\n  faults: {sim.faults}" if sim.faults.faults or sim.faults.skew_ms else "")
            + "\n  stop with Ctrl-C (SIGINT) or SIGTERM",
            flush=True,
        )

    try:
        serve(sim.http, args.host, args.port, on_ready=ready, log_level=args.log_level)
    except OSError as exc:
        raise UsageError(f"{exc.strerror or exc} — choose another --port or --host") from None
    finally:
        sim.close()
    print(f"botkit sim: stopped after {sim.http.requests} requests", flush=True)
    return 0


def _reset(args: argparse.Namespace) -> int:
    from botkit.clock import WallClock
    from botkit.sim.inprocess import make_sim, with_balance
    from botkit.sim.state import PaperFile

    config, _ = _config(args)
    settings = _settings()
    balance = args.balance if args.balance is not None else settings.paper_balance
    path: Path | None = args.state if args.state is not None else settings.paper_state_file()
    if path is None:
        raise UsageError(
            "botkit sim reset: the paper account is kept in memory (paper_state = :memory:),"
            " so there is nothing to reset — name a file with --state FILE"
        )
    paper = PaperFile(
        path, synchronous=settings.paper_synchronous, command="botkit sim reset", fresh=True
    )
    sim = make_sim(with_balance(config, balance), WallClock(), paper=paper)
    sim.close()
    account = sim.engine.account
    print(f"botkit sim: fresh paper account in {path}: {account.wallet} {account.currency}")
    return 0


def _show_config(args: argparse.Namespace) -> int:
    from botkit.sim.faults import FaultPlan

    config, source = _config(args)
    FaultPlan.from_config(config.faults, source=source)  # a bad fault entry is reported here too
    shown = config.model_dump(mode="json")
    for key in shown["auth"]["keys"]:  # the key is a secret setting too: shown as `serve` does
        key["key"] = _shown_key(key["key"])
    json.dump(shown, sys.stdout, indent=2)
    print()
    return 0


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="simulator TOML (default: the sim_config setting, configs/sim.toml)",
    )
    parser.add_argument("--key", default=None, help="API key to accept (default: BOTKIT_API_KEY)")
    parser.add_argument(
        "--secret",
        default=None,
        help="API secret to accept (default: BOTKIT_API_SECRET; prefer the variable: "
        "arguments are visible to other users)",
    )
    parser.add_argument(
        "--passphrase", default=None, help="passphrase to accept (default: BOTKIT_API_PASSPHRASE)"
    )
    parser.add_argument(
        "--schemes", default=None, help="signing schemes accepted, e.g. v3 or pf,v3 (default: both)"
    )
    parser.add_argument(
        "--tolerance-ms", type=int, default=None, help="clock rule tolerance (default 5000)"
    )
    parser.add_argument(
        "--no-duplicate-check",
        action="store_true",
        help="place an order whose clOrdId was already used instead of refusing it (code 250);"
        " the spec does not promise the refusal",
    )


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "sim",
        help="the embedded paper exchange: serve it over HTTP, reset its paper account, show"
        " its config",
    )
    sim_sub = parser.add_subparsers(title="sim commands", metavar="SIM_COMMAND")
    serve = sim_sub.add_parser(
        "serve",
        help="serve the paper exchange on loopback HTTP",
        description="Serve the simulator as a real HTTP exchange until SIGINT / SIGTERM.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument(
        "--port",
        type=port_or_zero,
        default=DEFAULT_PORT,
        help=f"port ({DEFAULT_PORT}; 0: any free port)",
    )
    serve.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level (warning)",
    )
    serve.add_argument(
        "--state",
        type=Path,
        metavar="FILE",
        default=None,
        help="keep the paper account in FILE (SQLite) across restarts and crashes"
        " (default: in memory, lost when the server stops)",
    )
    _add_common(serve)
    serve.set_defaults(handler=_serve)
    reset = sim_sub.add_parser(
        "reset",
        help="start a fresh paper account (refused while a process holds it)",
        description="Empty a paper account's state file and start a fresh account in it, at the"
        " paper_balance setting (else the simulator config's balance). Refused while botkit run"
        " or botkit sim serve holds the file.",
    )
    reset.add_argument(
        "--state",
        type=Path,
        metavar="FILE",
        default=None,
        help="the state file (default: the one botkit run uses with exchange = sim,"
        " the paper_state setting or paper.sqlite beside the journal)",
    )
    reset.add_argument(
        "--balance",
        type=_amount,
        metavar="AMOUNT",
        default=None,
        help="starting balance (default: the paper_balance setting, else the sim config's)",
    )
    _add_common(reset)
    reset.set_defaults(handler=_reset)
    show = sim_sub.add_parser(
        "config", help="print the simulator's effective config (secrets masked) as JSON"
    )
    _add_common(show)
    show.set_defaults(handler=_show_config)
    parser.set_defaults(handler=lambda _args: _usage(parser))


def _amount(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive amount, got {text}")
    return value


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2
