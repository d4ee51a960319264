"""``botkit optimize``: search the strategies' ``params:`` with Optuna on train / test windows
of a candle file (botkit.app.optimize), locally or on a Dask cluster; print the trials ranked
by the out-of-sample figure and the best params as a ``params:`` block, and with ``--report
DIR`` write the study report. Every mistake is one line and exit 2."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botkit.backtest.metrics import FIGURE_NAMES
from botkit.cli.argtypes import TimeArg, interval_arg, positive_int, time_arg
from botkit.cli.backtest_cmd import _balance, _check_report_dir, _cluster, _fees, _param
from botkit.clock import wall_ms
from botkit.errors import UsageError

if TYPE_CHECKING:
    from botkit.app.optimize import Evaluate
    from botkit.backtest.setup import BacktestOptions

__all__ = ["register"]


def _span(text: str) -> int:
    from botkit.rules.durations import DurationError, parse_duration

    try:
        return parse_duration(text.strip())
    except DurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _options(args: argparse.Namespace) -> BacktestOptions:
    from botkit.backtest.legs import parse_data
    from botkit.backtest.setup import BacktestOptions

    now = wall_ms()
    start, end = TimeArg.resolve(args.start, now), TimeArg.resolve(args.end, now)
    if start is not None and end is not None and end <= start:
        raise UsageError("botkit optimize: --end must be after --start")
    data, legs = parse_data(args.data)
    return BacktestOptions(
        data=data, legs=legs, strategies=tuple(args.strategies), start_ms=start, end_ms=end,
        interval_ms=args.interval, allow_gaps=args.allow_gaps, balance=args.balance,
        fees=args.fees, sim_config=args.sim_config, symbol=args.symbol,
        params=dict(args.param or []),
    )  # fmt: skip


@contextlib.contextmanager
def _engine(args: argparse.Namespace) -> Iterator[tuple[Evaluate, str]]:
    from botkit.app.optimize import local_evaluator

    if args.cluster is not None:
        from botkit.app.cluster import cluster_client, run_options

        with cluster_client(args.cluster) as client:
            workers = len(client.scheduler_info().get("workers", {}))
            yield (
                (lambda options: run_options(client, options)),
                (f"{args.cluster} ({workers} worker(s))"),
            )
        return
    # a batch runs at most two backtests a trial at a time (a fold's train and test windows):
    # more processes would only be started to wait
    jobs = min(args.jobs or os.cpu_count() or 1, 2 * min(args.batch, args.trials))
    with local_evaluator(jobs) as evaluate:
        yield evaluate, f"{jobs} process(es)"


def _run(args: argparse.Namespace) -> int:
    from botkit.service.logs import configure_logging

    configure_logging(level="WARNING", fmt="text")
    return _optimize(args)


def _optimize(args: argparse.Namespace) -> int:
    from botkit.app.optimize import StudySettings, optimize, require_optuna
    from botkit.backtest.search import check_objective, check_space, parse_space, windows
    from botkit.backtest.setup import prepare, strategy_files
    from botkit.backtest.study_report import (
        Study,
        best_params_yaml,
        render_trials,
        write_study_report,
    )
    from botkit.backtest.sweep import check_variants

    require_optuna()
    if args.cluster is not None and args.jobs is not None:
        raise UsageError(
            "botkit optimize: --jobs sizes the local process pool; with --cluster the workers "
            "run the backtests — leave --jobs out"
        )
    if (args.storage is None) != (args.study is None) and args.storage is None:
        raise UsageError(
            f"botkit optimize: --study {args.study} names a stored study — add --storage "
            "sqlite:///study.db (or leave --study out)"
        )
    base = _options(args)
    dims = parse_space(args.space)
    objective = check_objective(args.objective)
    if args.report is not None:
        _check_report_dir(args.report, "botkit optimize")
    files = strategy_files(base)
    check_space(dims, files.load(base.params))
    for bound in ("low", "high"):  # the strategies accept the ends of every range
        try:
            check_variants(base, [{d.key: getattr(d, bound) for d in dims}])
        except UsageError as exc:
            what = str(exc).removeprefix("--sweep variant ")
            raise UsageError(f"--space {bound} ends {what}") from None
    prepared = prepare(base)
    series = prepared.series
    folds = windows(
        series.start_ms, series.end_ms, series.interval_ms,
        train=args.train, test=args.test, folds=args.folds,
    )  # fmt: skip
    settings = StudySettings(
        base=base, dims=tuple(dims), objective=objective, trials=args.trials, seed=args.seed,
        windows=tuple(folds), batch=args.batch, storage=args.storage,
        study=args.study or "botkit",
    )  # fmt: skip
    with _engine(args) as (evaluate, where):

        def started(stored: int) -> None:
            print(
                f"optimize: {args.trials} trials of {', '.join(d.spec() for d in dims)} on "
                f"{where}, {len(folds)} fold(s), TPE seed {args.seed}"
                + (f", {stored} in the storage already" if stored else ""),
                file=sys.stderr,
            )
            for window in folds:
                print(f"  {window.describe()}", file=sys.stderr)

        result = optimize(settings, evaluate, on_start=started)
    keys = [d.key for d in dims]
    ranked = result.ranked(args.rank)
    counts = {s: sum(1 for r in result.rows if r.state == s) for s in ("complete", "pruned")}
    failed = len(result.rows) - counts["complete"] - counts["pruned"]
    resumed = f"; {result.resumed} from the storage" if result.resumed else ""
    print(
        f"optimize: {len(result.rows)} trials ({counts['complete']} complete, "
        f"{counts['pruned']} pruned, {failed} failed{resumed})",
        file=sys.stderr,
    )
    print(render_trials(ranked, keys, objective, maximize=settings.maximize, by=args.rank))
    best = ranked[0] if ranked and ranked[0].state == "complete" else None
    if best is None:
        print("no trial completed — see the errors above")
        return 1
    which = "out-of-sample" if args.rank == "oos" else "in-sample"
    header = (
        f"botkit optimize: best of {len(result.rows)} trials by {which} {objective} "
        f"(trial {best.number}; in-sample {best.in_sample}, out-of-sample {best.out_of_sample})"
    )
    yaml_text = best_params_yaml(best, files.load({**base.params, **best.params}), header)
    print()
    print(yaml_text, end="")
    if args.report is not None:
        description = [
            f"data {prepared.meta['data']}, strategies {', '.join(map(str, base.strategies))}",
            f"space {', '.join(d.spec() for d in dims)}; objective {objective}; "
            f"{args.trials} trials, TPE seed {args.seed}, batches of {args.batch}",
            *(w.describe() for w in folds),
        ]
        try:
            study = Study(
                ranked, keys, objective, maximize=settings.maximize, by=args.rank,
                importances=result.importances, best_yaml=yaml_text, description=description,
            )  # fmt: skip
            paths = write_study_report(args.report, study)
        except OSError as exc:
            raise UsageError(
                f"botkit optimize: cannot write the report to {args.report}: {exc.strerror or exc}"
            ) from None
        print(f"Report     {paths[-1]}")
    return 0


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "optimize",
        help="search strategy params with Optuna on train/test windows (locally or on Dask)",
        description="Search the strategies' params: with Optuna's TPE sampler: each trial is "
        "backtested on train and test windows of the data; the sampler sees the in-sample "
        "figure, the trials are ranked by the out-of-sample one. See docs/backtest.md.",
    )
    parser.add_argument("--data", required=True, action="append", metavar="FILE|SYMBOL=FILE",
                        help="candle file; a portfolio on one account: one SYMBOL=FILE per "
                        "symbol, repeated")  # fmt: skip
    parser.add_argument("--strategies", type=Path, required=True, nargs="+", metavar="PATH",
                        help="strategy files or folders")  # fmt: skip
    parser.add_argument("--start", type=time_arg, metavar="TIME", help="first candle")
    parser.add_argument("--end", type=time_arg, metavar="TIME", help="end, exclusive")
    parser.add_argument("--interval", type=interval_arg, help="candle interval")
    parser.add_argument("--allow-gaps", action="store_true", help="replay across gaps")
    parser.add_argument("--symbol", help="the data's symbol")
    parser.add_argument("--balance", type=_balance, help="starting balance")
    parser.add_argument("--fees", type=_fees, metavar="MAKER,TAKER", help="fee rates")
    parser.add_argument("--sim-config", type=Path, metavar="FILE", help="simulator TOML")
    parser.add_argument("--param", type=_param, action="append", metavar="KEY=VALUE",
                        help="fix a strategy param for every trial")  # fmt: skip
    parser.add_argument("--space", action="append", required=True,
                        metavar="KEY=LOW..HIGH[:STEP]",
                        help="a param to search (NAME or STRATEGY.NAME); repeatable")  # fmt: skip
    parser.add_argument("--objective", default="return", metavar="FIGURE",
                        help=f"the figure to optimise (default return): one of "
                        f"{', '.join(FIGURE_NAMES)}")  # fmt: skip
    parser.add_argument("--trials", type=positive_int, required=True, metavar="N",
                        help="trials in the study in all (stored ones count)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="the sampler's seed (default 0)")
    parser.add_argument("--batch", type=positive_int, default=4, metavar="B",
                        help="trials asked at a time, whatever runs them (default 4)")  # fmt: skip
    parser.add_argument("--storage", metavar="URL",
                        help="Optuna RDB storage to keep and resume the study, e.g. "
                        "sqlite:///study.db")  # fmt: skip
    parser.add_argument("--study", metavar="NAME", help="the study's name in --storage")
    parser.add_argument("--train", type=_span, metavar="PERIOD", help="train window, e.g. 5d")
    parser.add_argument("--test", type=_span, metavar="PERIOD", help="test window, e.g. 2d")
    parser.add_argument("--folds", type=positive_int, metavar="K",
                        help="walk-forward folds (default: one train/test split)")  # fmt: skip
    parser.add_argument("--rank", choices=("oos", "is"), default="oos",
                        help="rank by the out-of-sample (default) or in-sample figure")  # fmt: skip
    parser.add_argument("--jobs", type=positive_int, metavar="N",
                        help="local processes (default: one per core; at most two a trial of a"
                        " batch)")  # fmt: skip
    parser.add_argument("--cluster", type=_cluster, metavar="ADDRESS|local:N",
                        help="run the backtests on a Dask cluster (botkit[cluster])")  # fmt: skip
    parser.add_argument("--report", type=Path, metavar="DIR", help="write the study report here")
    parser.set_defaults(handler=_run)
