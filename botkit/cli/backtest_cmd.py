"""``botkit backtest``: replay a candle file through the simulator with the live pipeline.

One run prints the summary (and writes the report with ``--report DIR``); with ``--sweep
KEY=V1,V2,...`` it runs the grid of the strategies' ``params:`` values in parallel processes
and prints them ranked by ``--rank FIGURE``. Every mistake is one located line and exit 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from botkit.backtest.metrics import FIGURE_NAMES
from botkit.backtest.progress import Progress
from botkit.backtest.setup import BacktestOptions, Prepared, execute, prepare
from botkit.cli.argtypes import interval_arg, time_arg
from botkit.errors import UsageError

__all__ = ["register"]


def _number(text: str, what: str, *, positive: bool = False) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or (positive and value <= 0):
        kind = "a positive number" if positive else "a number"
        raise argparse.ArgumentTypeError(f"{what} {text!r} is not {kind}")
    return value


def _balance(text: str) -> Decimal:
    return _number(text, "balance", positive=True)


def _fees(text: str) -> tuple[Decimal, Decimal]:
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"{text!r}: write MAKER,TAKER rates, e.g. 0.0002,0.0006")
    maker, taker = (_number(p, "fee rate") for p in parts)
    if not (Decimal("-0.01") <= maker <= 1 and 0 <= taker <= 1):
        raise argparse.ArgumentTypeError(
            f"{text!r}: rates are fractions (0.0002 = 2 bp): maker from -0.01 to 1, taker 0 to 1"
        )
    return maker, taker


def _param(text: str) -> tuple[str, Decimal]:
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: write KEY=VALUE, e.g. dip=0.005")
    return key.strip(), _number(value, key.strip())


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number of at least 1")
    return value


def _options(args: argparse.Namespace) -> BacktestOptions:
    if args.start is not None and args.end is not None and args.end <= args.start:
        raise UsageError("botkit backtest: --end must be after --start")
    params = dict(args.param or [])
    return BacktestOptions(
        data=args.data,
        strategies=tuple(args.strategies),
        start_ms=args.start,
        end_ms=args.end,
        interval_ms=args.interval,
        allow_gaps=args.allow_gaps,
        balance=args.balance,
        fees=args.fees,
        seed=args.seed,
        sim_config=args.sim_config,
        symbol=args.symbol,
        params=params,
    )


def _single(args: argparse.Namespace, prepared: Prepared) -> int:
    from botkit.backtest.driver import backtest_journal
    from botkit.backtest.report import render_summary, write_report
    from botkit.sim.clock import ManualClock

    clock = ManualClock(prepared.series.start_ms)
    journal = None
    if args.journal is not None:
        if args.journal.exists():
            raise UsageError(
                f"botkit backtest: --journal {args.journal} already exists — remove it or name a "
                "new file (each backtest starts with an empty journal)"
            )
        journal = backtest_journal(args.journal, clock)
    try:
        with Progress(len(prepared.series), sys.stderr, label="backtest") as progress:
            run = execute(
                prepared,
                journal=journal,
                clock=clock,
                on_candle=progress.update,
                evaluations=args.evaluations,
            )
    finally:
        if journal is not None:
            journal.close()
    print(render_summary(run.result))
    if run.problems:
        print(f"Problems   {sum(run.problems.values()):,} in {run.cycles:,} cycles (logged above)")
        for line in run.problem_lines():
            print(f"           {line}")
    if args.journal is not None:
        print(f"Journal    {args.journal}")
    if args.report is not None:
        write_report(run.result, args.report)
        print(f"Report     {args.report / 'index.html'}")
    return 0


def _sweep(args: argparse.Namespace, base: BacktestOptions) -> int:
    from botkit.backtest.sweep import (
        grid,
        parse_sweep,
        rank,
        render_table,
        run_sweep,
        write_sweep,
    )

    if args.journal is not None:
        raise UsageError("botkit backtest: --journal is for a single run, not a --sweep")
    axes = parse_sweep(args.sweep)
    variants = grid(axes)
    # check everything once here (one located line, exit 2) before starting the processes:
    # the first variant stands for all (same files; only the params' values differ)
    prepare(dataclasses.replace(base, params={**base.params, **variants[0]}))
    jobs = args.jobs or os.cpu_count() or 1
    print(
        f"sweep: {len(variants)} variants on {min(jobs, len(variants))} process(es)",
        file=sys.stderr,
    )
    with Progress(len(variants), sys.stderr, label="sweep") as progress:
        outcomes = run_sweep(base, variants, jobs=jobs, on_done=lambda _o: progress.update())
    ranked = rank(outcomes, args.rank)
    print(render_table(ranked, [k for k, _ in axes], args.rank))
    if args.report is not None:
        path = write_sweep(ranked, [k for k, _ in axes], args.rank, args.report)
        print(f"Table      {path}")
    return 0 if any(not o.error for o in outcomes) else 1


def _run(args: argparse.Namespace) -> int:
    from botkit.service.logs import configure_logging

    configure_logging(level="WARNING", fmt="text")
    base = _options(args)
    if args.sweep:
        return _sweep(args, base)
    return _single(args, prepare(base))


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "backtest",
        help="replay candles through the simulator with the live pipeline; sweeps",
        description="Replay a candle file through the embedded simulator on simulated time, "
        "running the strategies through the same rules, validation, batching and journal as "
        "live. Prints a summary; --report DIR writes summary.json, orders.csv, fills.csv, "
        "charts and index.html. See docs/backtest.md.",
    )
    parser.add_argument(
        "--data",
        type=Path,
        required=True,
        metavar="FILE",
        help="candle file (CSV or JSON lines; docs/backtest.md)",
    )
    parser.add_argument(
        "--strategies",
        type=Path,
        required=True,
        nargs="+",
        metavar="PATH",
        help="strategy files or folders (one symbol)",
    )
    parser.add_argument("--start", type=time_arg, help="first candle (ISO-8601 UTC or Unix ms)")
    parser.add_argument("--end", type=time_arg, help="end, exclusive (ISO-8601 UTC or Unix ms)")
    parser.add_argument("--interval", type=interval_arg, help="candle interval (default: inferred)")
    parser.add_argument(
        "--allow-gaps",
        action="store_true",
        help="replay across missing candles instead of refusing",
    )
    parser.add_argument("--symbol", help="the data's symbol (default: the strategies')")
    parser.add_argument("--balance", type=_balance, help="starting balance (default: sim config)")
    parser.add_argument(
        "--fees",
        type=_fees,
        metavar="MAKER,TAKER",
        help="fee rates, e.g. 0.0002,0.0006 (default: sim config)",
    )
    parser.add_argument("--seed", type=int, help="simulator seed (default: sim config)")
    parser.add_argument(
        "--sim-config",
        type=Path,
        metavar="FILE",
        help="simulator TOML (default: built-in defaults)",
    )
    parser.add_argument(
        "--param",
        type=_param,
        action="append",
        metavar="KEY=VALUE",
        help="override a strategy param (NAME or STRATEGY.NAME)",
    )
    parser.add_argument("--report", type=Path, metavar="DIR", help="write the report here")
    parser.add_argument(
        "--journal",
        type=Path,
        metavar="FILE",
        help="keep the journal in this new file (default: memory)",
    )
    parser.add_argument(
        "--evaluations",
        choices=("all", "changes"),
        default="changes",
        help="rule evaluations journaled: every rule every cycle, or only when a rule's status"
        " changes (default %(default)s; fires, orders and outcomes are journaled either way)",
    )
    parser.add_argument(
        "--sweep",
        action="append",
        metavar="KEY=V1,V2,...",
        help="run the grid of these param values; repeatable",
    )
    parser.add_argument(
        "--rank",
        choices=FIGURE_NAMES,
        default="return",
        metavar="FIGURE",
        help="figure to rank a sweep by (default %(default)s)",
    )
    parser.add_argument(
        "--jobs", type=_jobs, metavar="N", help="processes for a sweep (default: one per core)"
    )
    parser.set_defaults(handler=_run)
