"""The ``botkit`` command line.

Each command group lives in its own module of this package and exposes
``register(subparsers) -> None``; it sets ``handler`` (``Callable[[argparse.Namespace], int]``)
as the parser default. :func:`main` turns every :class:`~botkit.errors.BotkitError` into one line
on stderr and an exit code, so no traceback reaches an operator for a mistake they made.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import botkit
from botkit.errors import BotkitError, ConfigError, UsageError, printable

__all__ = ["COMMAND_MODULES", "EXIT_CLOSED_PIPE", "build_parser", "main"]

# One module per command group, in the order ``botkit --help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "botkit.cli.run_cmd",
    "botkit.cli.serve_cmd",
    "botkit.cli.manual_cmd",
    "botkit.cli.demo_cmd",
    "botkit.cli.exchange_cmd",
    "botkit.cli.sim_cmd",
    "botkit.cli.journal_cmd",
    "botkit.cli.check_cmd",
    "botkit.cli.data_cmd",
    "botkit.cli.backtest_cmd",
    "botkit.cli.optimize_cmd",
)

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_CLOSED_PIPE = 141
"""The reader of the output went away (``botkit ... | head``): 128 + SIGPIPE, what any Unix tool
killed by a closed pipe reports, so ``set -o pipefail`` scripts see it as usual."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake raises :class:`UsageError` instead of exiting mid-flight.

    A command may hold nested commands (:attr:`nested`, e.g. ``botkit backtest compare``):
    when the command's first argument names one, that parser reads the rest instead (the
    command's own required options do not apply to it)."""

    nested: dict[str, argparse.ArgumentParser]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.nested = {}

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {printable(message)} (see '{self.prog} --help')")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if args and args[0] in self.nested:
            return self.nested[args[0]].parse_known_args(list(args[1:]), namespace)
        return super().parse_known_args(args, namespace)


class _Version(argparse.Action):
    """``--version``, as argparse's version action prints it (on stdout, then exit 0), the
    version read only when asked for (:data:`botkit.__version__` comes from the package
    metadata on first use)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS,
            help="show program's version number and exit",
        )  # fmt: skip

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(f"botkit {botkit.__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="botkit",
        description="Rule-driven order executor for the futures v3 API, with an embedded "
        "paper exchange. Run 'botkit COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code. Output cut short by its reader (``| head``) ends the
    command quietly with :data:`EXIT_CLOSED_PIPE`."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, not at interpreter exit, so a closed pipe is caught
    except BrokenPipeError:
        return _closed_pipe()
    return code


def _closed_pipe() -> int:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again (and print
    "Exception ignored ..."), and say nothing: the reader is gone on purpose."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (an embedding caller): nothing to flush
        pass
    return EXIT_CLOSED_PIPE


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return EXIT_USAGE
        code: int = handler(args)
        return code
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BotkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise  # the reader went away: main ends quietly
    except Exception as exc:  # a bug: still one line, secrets redacted, never a traceback
        print(f"error: {_internal(exc)}", file=sys.stderr)
        return EXIT_FAILURE


def _internal(exc: Exception) -> str:
    """One line for an unexpected exception, with any configured credential redacted."""
    from botkit.redaction import redact

    secrets = [v for k, v in os.environ.items() if k.upper().startswith("BOTKIT_API_")]
    text = redact(" ".join(str(exc).split())[:300], secrets)
    return (
        f"internal error ({type(exc).__name__}: {text}) — this is a bug in botkit"
        f" {botkit.__version__}; please report it with the command that caused it"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
