"""``botkit cancel`` and ``botkit flatten``: an operator's hands on the account.

Each shows what it will do and asks for confirmation on a terminal (``--yes`` for scripts; with
neither a terminal nor ``--yes`` it refuses, having read nothing). Both run through the service's
own parts (:func:`~botkit.app.service.assemble`: the same journal opening as ``botkit run``, the
same execution adapter, planner and executor), so every cancel and close is journaled like the
service's own. The halt stops them (one line, nothing sent); the kill switch does not: they only
reduce risk. ``dry_run = true`` in the settings makes them journal what they would do and send
nothing, as it does for the service.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from botkit.cli.run_cmd import add_settings_options, secrets_of, settings_of
from botkit.errors import BotkitError, UsageError

if TYPE_CHECKING:
    from botkit.app.service import Assembly
    from botkit.runner.manual import Preview, Result, Selection

__all__ = ["register"]

EXIT_REFUSED = 2


class _Refused(BotkitError):
    """The command will not act (halt engaged, confirmation not given): one line, exit 2."""


def _selection(args: argparse.Namespace, parts: Assembly, *, positions: bool) -> Selection:
    """The selection of the arguments, checked against the exchange and the strategy files."""
    from botkit.app.control import selection_of

    return selection_of(
        parts, args.command_name, strategy=args.strategy, symbol=args.symbol, positions=positions
    )


def _confirm(args: argparse.Namespace) -> bool:
    """Whether to go ahead: ``--yes``, else the operator's answer on the terminal."""
    if args.yes:
        return True
    try:
        answer = input("proceed? [y/N] ")
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def _print_result(command: str, result: Result, dry: bool) -> None:
    from botkit.app.control import result_lines

    for line in result_lines(command, result, dry):
        print(line)


def _handle(args: argparse.Namespace) -> int:
    from botkit.app.control import unknown_strategy
    from botkit.app.service import assemble
    from botkit.pipeline import GuardSettings
    from botkit.runner.killswitch import controls
    from botkit.service.logs import configure_logging

    command: str = args.command_name
    flatten = command == "flatten"
    if not args.yes and not sys.stdin.isatty():
        raise _Refused(
            f"botkit {command}: not confirmed — stdin is not a terminal; add --yes to"
            f" {command} without asking"
        )
    settings = settings_of(args)
    halt = controls(GuardSettings.from_settings(settings)).halt
    if halt is not None:
        raise _Refused(f"botkit {command}: nothing sent — {halt}")
    configure_logging(level="WARNING", fmt="text", secrets=secrets_of(settings))
    with assemble(settings, command=f"botkit {command}") as parts:  # holds the journal
        parts.client.clock.maybe_resync()
        manual = parts.manual()
        selection = _selection(args, parts, positions=flatten)
        preview: Preview = manual.preview(selection, positions=flatten)
        if preview.empty:
            what = "open order or position" if flatten else "open order"
            if args.strategy is not None and (unknown := unknown_strategy(args.strategy, parts)):
                raise UsageError(f"botkit {command}: no {what} for {selection}; {unknown}")
            print(f"botkit {command}: no {what} for {selection} — nothing to do")
            return 0
        print(f"botkit {command} ({selection}) will:")
        for line in preview.lines():
            print(line)
        if not _confirm(args):
            print(f"botkit {command}: not confirmed — nothing sent")
            return 1
        result = (
            manual.flatten(selection, preview) if flatten else manual.cancel(selection, preview)
        )
        _print_result(command, result, parts.dry)
        return 0 if result.ok or parts.dry else 1


def _run(args: argparse.Namespace) -> int:
    try:
        return _handle(args)
    except _Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_REFUSED


def _control(args: argparse.Namespace) -> int:
    """``botkit control kill-switch|halt engage|release``: the stop control's file, written
    with who asked (``--by``, else the user's login name); the service journals the change
    at its next cycle. ``botkit serve``'s control endpoints run the same code."""
    import getpass

    from botkit.app.control import Control, ControlRefused, state, switch

    settings = settings_of(args)
    which: Control = "kill_switch" if args.control == "kill-switch" else "halt"
    if args.action == "show":
        reason = state(settings)[which]
        print(f"{args.control}: {'ENGAGED — ' + reason if reason else 'off'}")
        return 0
    by = args.by or f"cli:{getpass.getuser()}"
    try:
        print(switch(settings, which, engage=args.action == "engage", by=by))
    except ControlRefused as exc:
        print(f"error: botkit control: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    return 0


def _parser(sub: Any, name: str, help_text: str, description: str) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=description)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--strategy", metavar="NAME", help="the orders of this strategy")
    which.add_argument("--symbol", metavar="SYMBOL", help="everything on this symbol")
    which.add_argument("--all", action="store_true", help="everything on the account")
    parser.add_argument(
        "--yes", action="store_true", help="do not ask for confirmation (for scripts)"
    )
    add_settings_options(parser)
    parser.set_defaults(handler=_run, command_name=name)


def register(sub: Any) -> None:
    control = sub.add_parser(
        "control",
        help="engage or release the kill switch or the halt (their files)",
        description="Write or remove kill_switch_file / halt_file (the settings name them) with"
        " who asked; the service applies and journals the change at its next cycle. A control"
        " held on by its setting (kill_switch = true) is released only by the setting.",
    )
    control.add_argument("control", choices=["kill-switch", "halt"])
    control.add_argument("action", choices=["engage", "release", "show"])
    control.add_argument("--by", metavar="NAME", help="who asks (default: cli:LOGIN)")
    add_settings_options(control)
    control.set_defaults(handler=_control)
    _parser(
        sub,
        "cancel",
        "cancel open orders: a strategy's, a symbol's or all (asks first; --yes)",
        "Cancel open orders — those a strategy placed (--strategy, found by their client order"
        " ids), those on a symbol (--symbol) or every one (--all). Shows them and asks before"
        " sending; journaled like the service's own cancels. Refused under the halt; allowed"
        " under the kill switch.",
    )
    _parser(
        sub,
        "flatten",
        "cancel open orders, then close positions reduce-only at market (asks first; --yes)",
        "Cancel the open orders of the selection, then close its positions with reduce-only"
        " MARKET orders (sizes per lot, split at marketMaxQty), journaled like any order: intent"
        " before sending, outcomes, unknown outcomes looked up. --strategy closes the positions"
        " of the symbols that strategy trades (a position is per symbol, shared by every"
        " strategy on it). Refused under the halt; allowed under the kill switch.",
    )
