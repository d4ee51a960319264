"""``botkit backtest compare RUN_A RUN_B [RUN_C ...]``: backtest reports side by side.

A command nested in ``botkit backtest`` (:func:`register` adds it to that parser): it prints
the runs' figures and their differences (:mod:`botkit.backtest.compare`) and, with
``--out DIR``, writes ``compare.csv``, ``compare.png`` and ``compare.html`` there. A folder that
is not a report is one line and exit 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from botkit.errors import BotkitError

__all__ = ["register"]

COMMAND = "botkit backtest compare"


def _compare(args: argparse.Namespace) -> int:
    from botkit.backtest.compare import load_runs, render_compare, write_compare
    from botkit.cli.backtest_cmd import _check_report_dir  # the same check as --report's

    if args.out is not None:
        _check_report_dir(args.out, COMMAND, "--out")
    runs = load_runs(args.runs)
    print(render_compare(runs))
    if args.out is not None:
        try:
            paths = write_compare(runs, args.out)
        except OSError as exc:
            where = exc.filename or args.out
            why = exc.strerror or exc
            raise BotkitError(f"{COMMAND}: cannot write to {where}: {why}") from None
        print(f"\nWritten    {paths[-1]} (and {', '.join(p.name for p in paths[:-1])})")
    return 0


def register(backtest: argparse.ArgumentParser) -> None:
    """Nest ``compare`` in the ``botkit backtest`` parser (a parser of botkit's own class)."""
    parser = type(backtest)(
        prog=COMMAND,
        description="Compare backtest reports: print every figure of each run side by side "
        "with each run's difference from the first (percentages in percentage points, times "
        "as times); --out DIR also writes compare.csv, compare.png and a self-contained "
        "compare.html. A run is a folder written by 'botkit backtest --report DIR' (a sweep's "
        "variants are in DIR/variants/). See docs/backtest.md.",
    )
    parser.add_argument(
        "runs", type=Path, nargs="+", metavar="RUN", help="report folders (two or more)"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="write compare.csv, .png and .html here"
    )
    parser.set_defaults(handler=_compare)
    backtest.nested["compare"] = parser  # type: ignore[attr-defined]
