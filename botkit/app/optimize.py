"""``botkit optimize``: search a strategy's ``params:`` with Optuna, each trial a backtest per
train and test window, on one process, a process pool or a Dask cluster.

The sampler only ever sees the **in-sample** figure (the mean over the folds' train windows);
the out-of-sample figure (the mean over their test windows) is computed for every trial beside
it, and the trials are ranked by it by default — a param set that only fits the noise of the
train period shows a good in-sample and a poor out-of-sample figure side by side.

Determinism. Trials are asked in batches of ``batch`` whatever runs them (a batch's trials are
evaluated together, then told in trial order), and the sampler of trial ``n`` is a
:class:`~optuna.samplers.TPESampler` seeded with ``seed`` and ``n``: what trial ``n`` draws
depends only on the trials told before its batch, never on which worker finished first. The
same seed therefore gives the same trials and figures in one process, on a process pool and on
a cluster, and a study resumed from its storage continues exactly as if never stopped when it
stopped at a whole batch (or was killed: trials left running are evaluated again, with their
stored params, before new ones are asked). With folds, a trial whose running in-sample mean
falls below the median of the completed trials at the same fold is pruned (Optuna's
:class:`~optuna.pruners.MedianPruner`, deterministic for the same reason).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from botkit.app.backtest import _quiet_worker, run_variant
from botkit.backtest.search import Dimension, Window
from botkit.backtest.setup import BacktestOptions
from botkit.backtest.study_report import TrialRow, rank_trials
from botkit.backtest.sweep import LOWER_IS_BETTER, VariantOutcome
from botkit.errors import UsageError

__all__ = [
    "INSTALL_HINT",
    "Evaluate",
    "StudyResult",
    "StudySettings",
    "local_evaluator",
    "optimize",
    "require_optuna",
]

INSTALL_HINT = "install the optimize extra: pip install 'botkit[optimize]'"

Evaluate = Callable[[Sequence[BacktestOptions]], list[VariantOutcome]]
"""Runs backtests (one per options), outcomes in the same order."""

_SEED_STRIDE = 1_000_003


@dataclass(frozen=True, slots=True)
class StudySettings:
    base: BacktestOptions
    dims: tuple[Dimension, ...]
    objective: str
    trials: int
    seed: int
    windows: tuple[Window, ...]
    batch: int = 4
    storage: str | None = None
    study: str = "botkit"

    @property
    def maximize(self) -> bool:
        return self.objective not in LOWER_IS_BETTER

    def signature(self) -> dict[str, Any]:
        """What must not change when a stored study is resumed."""
        return {
            "space": [d.spec() for d in self.dims],
            "objective": self.objective,
            "seed": self.seed,
            "batch": self.batch,
            "windows": [[*w.train, *w.test] for w in self.windows],
            "params": {k: str(v) for k, v in sorted(self.base.params.items())},
        }


@dataclass
class StudyResult:
    settings: StudySettings
    rows: list[TrialRow]
    importances: dict[str, float] = field(default_factory=dict)
    resumed: int = 0
    """Trials the storage held before this run."""

    def ranked(self, by: str = "oos") -> list[TrialRow]:
        """:func:`~botkit.backtest.study_report.rank_trials` of the rows."""
        return rank_trials(self.rows, maximize=self.settings.maximize, by=by)


def require_optuna() -> None:
    """Raise the install hint now when Optuna is missing (before anything is loaded)."""
    _optuna()


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise UsageError(
            f"botkit optimize needs Optuna, which is not installed — {INSTALL_HINT}"
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _sampler(optuna: Any, seed: int, number: int) -> Any:
    return optuna.samplers.TPESampler(seed=seed * _SEED_STRIDE + number)


def _distribution(optuna: Any, dim: Dimension) -> Any:
    d = optuna.distributions
    if dim.integer:
        whole = int(dim.step) if dim.step is not None else 1
        return d.IntDistribution(int(dim.low), int(dim.high), step=whole)
    step = float(dim.step) if dim.step is not None else None
    return d.FloatDistribution(float(dim.low), float(dim.high), step=step)


def _open_study(optuna: Any, s: StudySettings) -> Any:
    pruner = (
        optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=0)
        if len(s.windows) > 1
        else optuna.pruners.NopPruner()
    )
    try:
        study = optuna.create_study(
            storage=s.storage,
            study_name=s.study,
            direction="maximize" if s.maximize else "minimize",
            sampler=_sampler(optuna, s.seed, 0),
            pruner=pruner,
            load_if_exists=True,
        )
    except Exception as exc:  # a storage URL Optuna cannot open, a database it cannot read
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(
            f"--storage {s.storage}: cannot open the study ({first}) — give an RDB URL such as "
            "sqlite:///study.db"
        ) from None
    wanted = s.signature()
    stored = study.user_attrs.get("botkit")
    if stored is None and not study.trials:
        study.set_user_attr("botkit", wanted)
    elif stored != wanted:
        differs = sorted(k for k in wanted if (stored or {}).get(k) != wanted[k])
        raise UsageError(
            f"--study {s.study}: the stored study was made with other settings "
            f"({', '.join(differs) or 'unknown'} differ) — resume it with the same --space, "
            "--objective, --seed, --batch, periods and --param, or name a new --study"
        )
    return study


_MEAN_PLACES = Decimal("1e-10")


def _mean(values: Sequence[str]) -> Decimal:
    """The mean of the folds' figures, to 10 decimal places (the figures have 8)."""
    mean = sum((Decimal(v) for v in values), Decimal(0)) / len(values)
    return mean.quantize(_MEAN_PLACES).normalize() if mean else Decimal(0)


class _Trials:
    """Evaluates batches of trials fold by fold, with a cache of (params, window) results."""

    def __init__(self, optuna: Any, study: Any, s: StudySettings, evaluate: Evaluate) -> None:
        self.optuna, self.study, self.s, self.evaluate = optuna, study, s, evaluate
        self.cache: dict[
            tuple[tuple[tuple[str, Decimal], ...], tuple[int, int]], VariantOutcome
        ] = {}

    def _run(
        self, jobs: Sequence[tuple[Mapping[str, Decimal], tuple[int, int]]]
    ) -> list[VariantOutcome]:
        keys = [(tuple(sorted(p.items())), w) for p, w in jobs]
        todo = list(dict.fromkeys(k for k in keys if k not in self.cache))
        options = [
            replace(
                self.s.base, params={**self.s.base.params, **dict(k)}, start_ms=w[0], end_ms=w[1]
            )
            for k, w in todo
        ]
        for key, outcome in zip(todo, self.evaluate(options) if options else [], strict=True):
            self.cache[key] = outcome
        return [self.cache[k] for k in keys]

    def run_batch(self, batch: list[tuple[Any, dict[str, Decimal]]]) -> None:
        """Evaluate ``(trial, params)`` pairs on every fold, pruning between folds, and tell
        each trial's end in trial order."""
        s, figure = self.s, self.s.objective
        folds: dict[int, list[tuple[str, str]]] = {t.number: [] for t, _ in batch}
        alive = list(batch)
        for step, window in enumerate(s.windows):
            jobs = [(p, w) for _, p in alive for w in (window.train, window.test)]
            outcomes = self._run(jobs)
            still: list[tuple[Any, dict[str, Decimal]]] = []
            for i, (trial, params) in enumerate(alive):
                train, test = outcomes[2 * i], outcomes[2 * i + 1]
                a, b = train.figures.get(figure), test.figures.get(figure)
                if a is None or b is None:
                    error = (train.error or test.error or f"no {figure} figure").splitlines()[0]
                    trial.set_user_attr("error", error)
                    self._attrs(trial, params, folds[trial.number])
                    self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
                    continue
                folds[trial.number].append((str(a), str(b)))
                in_sample = _mean([f[0] for f in folds[trial.number]])
                trial.report(float(in_sample), step)
                if step < len(s.windows) - 1 and trial.should_prune():
                    self._attrs(trial, params, folds[trial.number])
                    self.study.tell(trial, state=self.optuna.trial.TrialState.PRUNED)
                    continue
                still.append((trial, params))
            alive = still
        for trial, params in alive:
            self._attrs(trial, params, folds[trial.number])
            value = _mean([f[0] for f in folds[trial.number]])
            self.study.tell(trial, float(value))

    def _attrs(
        self, trial: Any, params: Mapping[str, Decimal], folds: list[tuple[str, str]]
    ) -> None:
        trial.set_user_attr("values", {k: str(v) for k, v in params.items()})
        trial.set_user_attr("folds", [list(f) for f in folds])


def _params_of(s: StudySettings, raw: Mapping[str, Any]) -> dict[str, Decimal]:
    return {d.key: d.value(float(raw[d.key])) for d in s.dims}


def optimize(
    s: StudySettings,
    evaluate: Evaluate,
    *,
    on_start: Callable[[int], None] | None = None,
    on_trial: Callable[[int, int], None] | None = None,
) -> StudyResult:
    """Run the study up to ``s.trials`` trials in all (those in its storage count);
    ``on_start(stored)`` once the study is open and checked, ``on_trial(done, total)`` after
    each batch."""
    optuna = _optuna()
    study = _open_study(optuna, s)
    if on_start is not None:
        on_start(len(study.trials))
    running = optuna.trial.TrialState.RUNNING
    resumed = len(study.trials)
    trials = _Trials(optuna, study, s, evaluate)
    # a killed run's trials: evaluated again with the params they were given
    for frozen in study.get_trials(deepcopy=False, states=(running,)):
        trial = optuna.trial.Trial(study, frozen._trial_id)
        trials.run_batch([(trial, _params_of(s, frozen.params))])
    distributions = {d.key: _distribution(optuna, d) for d in s.dims}
    while (done := len(study.trials)) < s.trials:
        size = min(s.batch - done % s.batch, s.trials - done)
        batch: list[tuple[Any, dict[str, Decimal]]] = []
        for n in range(done, done + size):
            study.sampler = _sampler(optuna, s.seed, n)
            trial = study.ask(distributions)
            batch.append((trial, _params_of(s, trial.params)))
        trials.run_batch(batch)
        if on_trial is not None:
            on_trial(len(study.trials), s.trials)
    return StudyResult(s, _rows(optuna, study, s), _importances(optuna, study), resumed)


def _rows(optuna: Any, study: Any, s: StudySettings) -> list[TrialRow]:
    states = {
        optuna.trial.TrialState.COMPLETE: "complete",
        optuna.trial.TrialState.PRUNED: "pruned",
        optuna.trial.TrialState.FAIL: "failed",
        optuna.trial.TrialState.RUNNING: "running",
        optuna.trial.TrialState.WAITING: "waiting",
    }
    rows: list[TrialRow] = []
    for t in study.get_trials(deepcopy=False):
        values = t.user_attrs.get("values") or {k: str(v) for k, v in t.params.items()}
        folds = tuple((a, b) for a, b in t.user_attrs.get("folds", []))
        in_sample = _mean([f[0] for f in folds]) if folds else None
        out_sample = _mean([f[1] for f in folds]) if folds else None
        rows.append(
            TrialRow(
                t.number,
                states[t.state],
                {k: Decimal(v) for k, v in values.items()},
                in_sample,
                out_sample,
                folds,
                t.user_attrs.get("error", ""),
            )
        )
    return rows


def _importances(optuna: Any, study: Any) -> dict[str, float]:
    """Each param's share of the in-sample figure's variance (Optuna's default evaluator);
    empty when there are too few complete trials to say."""
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(complete) < 2:
        return {}
    try:
        with warnings.catch_warnings():  # "importances will be equal" is what the chart shows
            warnings.simplefilter("ignore")
            found: dict[str, float] = optuna.importance.get_param_importances(study)
    except (RuntimeError, ValueError, ZeroDivisionError):
        return {}
    return dict(found)


@contextlib.contextmanager
def local_evaluator(jobs: int) -> Iterator[Evaluate]:
    """Backtests in this process (``jobs=1``) or on a pool of ``jobs`` processes kept for the
    whole study (the candles then load once per process)."""
    if jobs <= 1:
        yield lambda options: [run_variant(o, i) for i, o in enumerate(options)]
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=_quiet_worker) as pool:

        def evaluate(options: Sequence[BacktestOptions]) -> list[VariantOutcome]:
            return list(pool.map(run_variant, options, range(len(options))))

        yield evaluate
