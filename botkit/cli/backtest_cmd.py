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
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botkit.backtest.progress import Progress
from botkit.cli import compare_cmd
from botkit.cli.argtypes import TimeArg, interval_arg, positive_int, time_arg
from botkit.clock import wall_ms
from botkit.errors import BotkitError, UsageError

if TYPE_CHECKING:  # the backtest itself is imported when the command runs
    from botkit.backtest.report_page import ChartData
    from botkit.backtest.setup import BacktestOptions, Prepared
    from botkit.backtest.sweep import Variant, VariantOutcome
    from botkit.service.repeats import Repeats

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


MAX_BALANCE = Decimal("1e15")


def _balance(text: str) -> Decimal:
    value = _number(text, "balance", positive=True)
    if value > MAX_BALANCE:
        raise argparse.ArgumentTypeError(
            f"balance {text!r} is more than 1e15 — give a starting wallet up to 1e15"
        )
    return value


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


def _rank_figure(text: str) -> str:
    from botkit.backtest.sweep import RANKABLE
    from botkit.rules.hints import did_you_mean

    if text not in RANKABLE:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a figure to rank by — {did_you_mean(text, list(RANKABLE))}"
        )
    return text


def _check_report_dir(path: Path, command: str, option: str = "--report") -> None:
    """Refuse a ``--report`` folder (or ``option``'s) that could not be written, before
    anything is loaded: a file, or a missing folder whose nearest existing parent is a file or
    not writable. ``command`` (``botkit backtest``, ``botkit optimize``) starts the message."""
    if path.exists() and not path.is_dir():
        raise UsageError(
            f"{command}: {option} {path} is a file — name a folder (it is created if missing)"
        )
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(
            f"{command}: {option} {path}: cannot create the folder: {parent} is a file"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{command}: {option} {path}: {parent} is not writable")


def _make_dir(path: Path, option: str, *, new: bool = False) -> None:
    """Create the ``--report`` folder (or a sweep's ``--journal`` folder: ``new``, it must not
    exist) once everything else is checked, before the run."""
    try:
        path.mkdir(parents=True, exist_ok=not new)
    except OSError as exc:
        raise UsageError(
            f"botkit backtest: {option} {path}: cannot create the folder: {exc.strerror or exc}"
        ) from None


def _write_failed(path: Path, exc: OSError) -> BotkitError:
    where = exc.filename or path
    return BotkitError(
        f"botkit backtest: cannot write the report to {where}: {exc.strerror or exc}"
    )


def _warn(lines: Sequence[str]) -> None:
    for line in lines:
        print(f"warning: {line}", file=sys.stderr)


def _options(args: argparse.Namespace) -> BacktestOptions:
    from botkit.backtest.legs import parse_data
    from botkit.backtest.setup import BacktestOptions

    now = wall_ms()
    start, end = TimeArg.resolve(args.start, now), TimeArg.resolve(args.end, now)
    if start is not None and end is not None and end <= start:
        raise UsageError("botkit backtest: --end must be after --start")
    params = dict(args.param or [])
    data, legs = parse_data(args.data)
    return BacktestOptions(
        data=data,
        legs=legs,
        strategies=tuple(args.strategies),
        start_ms=start,
        end_ms=end,
        interval_ms=args.interval,
        allow_gaps=args.allow_gaps,
        balance=args.balance,
        fees=args.fees,
        seed=args.seed,
        sim_config=args.sim_config,
        symbol=args.symbol,
        params=params,
    )


def _charts(prepared: Prepared) -> list[ChartData]:
    """What each symbol's report.html draws: its candles and the strategies' indicators."""
    from botkit.backtest.report_indicators import indicator_lines
    from botkit.backtest.report_page import ChartData

    out = []
    legs = prepared.legs or ((prepared.symbol, prepared.series),)
    pages = [name for name, _ in prepared.legs]
    for symbol, series in legs:
        lines, notes = indicator_lines(
            prepared.strategies, series.bars, series.interval_ms, symbol, pages
        )
        out.append(ChartData(symbol, series.interval_ms, series.bars, lines, notes))
    return out


def _single(args: argparse.Namespace, prepared: Prepared, repeats: Repeats) -> int:
    from botkit.app.backtest import backtest_journal, execute
    from botkit.backtest.driver import frozen_heap
    from botkit.backtest.metrics import compute_figures, result_trades
    from botkit.backtest.portfolio_report import render_parts, write_portfolio_report
    from botkit.backtest.report import render_summary, write_report
    from botkit.clock import ManualClock

    clock = ManualClock(prepared.series.start_ms)
    journal = None
    if args.journal is not None and args.journal.exists():
        raise UsageError(
            f"botkit backtest: --journal {args.journal} already exists — remove it or name a "
            "new file (each backtest starts with an empty journal)"
        )
    if args.report is not None:
        _make_dir(args.report, "--report")
    _warn(prepared.warnings)
    if args.journal is not None:
        journal = backtest_journal(args.journal, clock)
    try:
        with Progress(len(prepared.series), sys.stderr, label="backtest") as progress:
            run = execute(
                prepared,
                journal=journal,
                clock=clock,
                on_candles=progress.update,
                evaluations=args.evaluations,
            )
    finally:
        if journal is not None:
            journal.close()
    _repeated(repeats)
    with frozen_heap():  # the run's objects live on: full collections would scan them again
        trades = result_trades(run.result)
        figures = compute_figures(run.result, trades)
        print(render_summary(run.result, figures, trades))
        if run.problems:
            print(
                f"Problems   {sum(run.problems.values()):,} in {run.cycles:,} cycles (logged above)"
            )
            for line in run.problem_lines():
                print(f"           {line}")
        if args.journal is not None:
            print(f"Journal    {args.journal}")
        parts = getattr(run, "parts", None)
        if parts:
            print(render_parts(run.result, parts, figures))
        if args.report is not None:
            try:
                charts = _charts(prepared)
                if parts:
                    write_portfolio_report(run.result, parts, args.report, figures, trades, charts)
                else:
                    write_report(run.result, args.report, figures, trades, chart=charts[0])
            except OSError as exc:
                raise _write_failed(args.report, exc) from None
            print(f"Report     {args.report / 'index.html'} · {args.report / 'report.html'}")
    return 0


def _sweep(args: argparse.Namespace, base: BacktestOptions) -> int:
    from botkit.app.backtest import run_sweep
    from botkit.backtest.setup import prepare
    from botkit.backtest.sweep import check_variants, grid, parse_sweep

    if args.journal is not None and args.cluster is not None:
        raise UsageError(
            "botkit backtest: --journal with --cluster: the journals would stay on the workers"
            " — sweep on this machine (--jobs N) to keep them"
        )
    if args.journal is not None and args.journal.exists():
        raise UsageError(
            f"botkit backtest: --journal {args.journal} already exists — remove it or name a "
            "new folder (a sweep keeps a new journal per variant in it)"
        )
    axes = parse_sweep(args.sweep)
    variants = grid(axes)
    figure = args.rank or "return"
    # check everything once here (one located line, exit 2) before starting the processes:
    # every variant's values against the strategies (cheap: no candles), then the first
    # variant whole (the data, the symbol, the simulator settings: the same for all)
    check_variants(base, variants)
    first = prepare(dataclasses.replace(base, params={**base.params, **variants[0]}))
    if args.report is not None:
        _make_dir(args.report, "--report")
    if args.journal is not None:
        _make_dir(args.journal, "--journal", new=True)
    _warn(first.warnings)
    if args.cluster is not None:
        return _on_cluster(args, base, variants, [k for k, _ in axes], figure)
    jobs = args.jobs or os.cpu_count() or 1
    print(
        f"sweep: {len(variants)} variants on {min(jobs, len(variants))} process(es)",
        file=sys.stderr,
    )
    with Progress(len(variants), sys.stderr, label="sweep") as progress:
        outcomes = run_sweep(
            base,
            variants,
            jobs=jobs,
            on_done=lambda _o: progress.update(),
            report=args.report,
            journals=args.journal,
        )
    return _print_sweep(args, outcomes, [k for k, _ in axes], figure)


def _print_sweep(
    args: argparse.Namespace, outcomes: Sequence[VariantOutcome], keys: list[str], figure: str
) -> int:
    from botkit.backtest.sweep import rank, render_table, write_sweep
    from botkit.backtest.sweep_page import write_sweep_page

    ranked = rank(outcomes, figure)
    print(render_table(ranked, keys, figure))
    if args.report is not None:
        try:
            path = write_sweep(ranked, keys, figure, args.report)
            page = write_sweep_page(ranked, keys, figure, len(outcomes), args.report)
        except OSError as exc:
            raise _write_failed(args.report, exc) from None
        print(f"Table      {path}")
        print(f"Report     {page}")
    if args.journal is not None:
        print(f"Journals   {args.journal} (one per variant, named by its values)")
    return 0 if any(not o.error for o in outcomes) else 1


def _on_cluster(
    args: argparse.Namespace,
    base: BacktestOptions,
    variants: Sequence[Variant],
    keys: list[str],
    figure: str,
) -> int:
    """The checked sweep on a Dask cluster (botkit.app.cluster): the files travel with it."""
    from botkit.app.cluster import ClusterProgress, cluster_client, run_on_cluster

    with cluster_client(args.cluster) as client:
        workers = len(client.scheduler_info().get("workers", {}))
        print(
            f"sweep: {len(variants)} variants on {args.cluster} ({workers} worker(s))",
            file=sys.stderr,
        )
        progress = ClusterProgress(len(variants), sys.stderr)
        outcomes = run_on_cluster(client, base, variants, on_done=progress.update)
        progress.close()
    return _print_sweep(args, outcomes, keys, figure)


def _cluster(text: str) -> str:
    from botkit.app.cluster import parse_cluster

    try:
        return parse_cluster(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--cluster {text}: ")) from None


def _run(args: argparse.Namespace) -> int:
    from botkit.service.logs import configure_logging
    from botkit.service.repeats import Repeats

    repeats = Repeats()  # a rule failing on every candle: one line, and its count at the end
    configure_logging(level="WARNING", fmt="text", repeats=repeats)
    try:
        return _backtest(args, repeats)
    finally:
        _repeated(repeats)  # what is left (a run that stopped early)


def _repeated(repeats: Repeats) -> None:
    """The count of each warning written once but raised more often, then forget them."""
    for line in repeats.summary():
        print(f"repeated: {line}", file=sys.stderr)
    repeats.clear()


def _backtest(args: argparse.Namespace, repeats: Repeats) -> int:
    from botkit.backtest.setup import prepare

    base = _options(args)
    if args.rank is not None and not args.sweep:
        raise UsageError(
            f"botkit backtest: --rank {args.rank} ranks the variants of a --sweep — add "
            "--sweep KEY=V1,V2,... or leave --rank out"
        )
    if args.cluster is not None and not args.sweep:
        raise UsageError(
            f"botkit backtest: --cluster {args.cluster} runs the variants of a --sweep — add "
            "--sweep KEY=V1,V2,... or leave --cluster out"
        )
    if args.cluster is not None and args.jobs is not None:
        raise UsageError(
            "botkit backtest: --jobs sizes the local process pool; with --cluster the workers "
            "run the variants (local:N for N local workers) — leave --jobs out"
        )
    if args.report is not None:
        _check_report_dir(args.report, "botkit backtest")
    if args.sweep:
        return _sweep(args, base)
    return _single(args, prepare(base), repeats)


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "backtest",
        help="replay candles through the simulator with the live pipeline; sweeps",
        description="Replay a candle file through the embedded simulator on simulated time, "
        "running the strategies through the same rules, validation, batching and journal as "
        "live. Prints a summary; --report DIR writes summary.json, orders.csv, fills.csv, "
        "trades.csv, report.html (interactive charts and tables) and index.html. "
        "'botkit backtest compare RUN_A RUN_B' compares reports (see its --help). "
        "See docs/backtest.md.",
    )
    parser.add_argument(
        "--data",
        required=True,
        action="append",
        metavar="FILE|SYMBOL=FILE",
        help="candle file (CSV or JSON lines; docs/backtest.md); a portfolio of several "
        "symbols on one account: one SYMBOL=FILE per symbol, repeated",
    )
    parser.add_argument(
        "--strategies",
        type=Path,
        required=True,
        nargs="+",
        metavar="PATH",
        help="strategy files or folders (of one symbol, or see --symbol)",
    )
    parser.add_argument(
        "--start", type=time_arg, metavar="TIME",
        help="first candle: Unix ms, ISO-8601 with a zone, a date, an age (7d) or now "
        "(docs/times.md)",
    )  # fmt: skip
    parser.add_argument("--end", type=time_arg, metavar="TIME", help="end, exclusive; same forms")
    parser.add_argument("--interval", type=interval_arg, help="candle interval (default: inferred)")
    parser.add_argument(
        "--allow-gaps",
        action="store_true",
        help="replay across missing candles instead of refusing (they are listed in the "
        "summary's notes)",
    )
    parser.add_argument(
        "--symbol",
        help="the data's symbol: only the strategies of this symbol run (default: the "
        "strategies' one symbol)",
    )
    parser.add_argument(
        "--balance",
        type=_balance,
        help="starting balance, more than 0 and at most 1e15 (default: sim config)",
    )
    parser.add_argument(
        "--fees",
        type=_fees,
        metavar="MAKER,TAKER",
        help="fee rates, e.g. 0.0002,0.0006 (default: sim config); a negative maker fee (a "
        "rebate) is written with '=': --fees=-0.0001,0.0006",
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
        help="keep the journal in this new file (default: a temporary one, deleted at the end);"
        " with --sweep a new folder holding each variant's journal, named by its values",
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
        type=_rank_figure,
        metavar="FIGURE",
        help="figure to rank a --sweep by (default return; any figure of summary.json but the"
        " starting balance and the drawdown's instants)",
    )
    parser.add_argument(
        "--jobs",
        type=positive_int,
        metavar="N",
        help="processes for a sweep (default: one per core)",
    )
    parser.add_argument(
        "--cluster",
        type=_cluster,
        metavar="ADDRESS|local:N",
        help="run a --sweep on a Dask scheduler (tcp://HOST:8786) or on N local worker "
        "processes (local:N); needs the cluster extra: pip install 'botkit[cluster]'",
    )
    parser.set_defaults(handler=_run)
    compare_cmd.register(parser)
