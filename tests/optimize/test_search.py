"""The optimisation's pure parts (the space, the windows) and the study driver on a synthetic
objective: a fake evaluator scores a param set by a known function, so the optimum is known
exactly, and pruning and the seed can be checked without running backtests."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.app.optimize import StudySettings, optimize
from botkit.backtest.search import Dimension, Window, parse_space, windows
from botkit.backtest.setup import BacktestOptions
from botkit.backtest.study_report import TrialRow, render_trials
from botkit.backtest.sweep import VariantOutcome
from botkit.errors import UsageError

D = Decimal
H = 3_600_000
OPTIMUM = D("0.0061")


def test_spaces_parse_into_dimensions_and_draws_become_exact_decimals() -> None:
    dip, rungs, take = parse_space(["dip=0.002..0.008:0.002", "rungs=4..16", "take=0.01..0.2"])
    assert dip == Dimension("dip", D("0.002"), D("0.008"), D("0.002"))
    assert not dip.integer
    assert dip.value(0.006000000000000001) == D("0.006")
    assert rungs.integer
    assert rungs.value(7) == D(7)
    assert take.value(0.123456789123) == D("0.12345679")
    assert take.value(0.5) == D("0.2")  # inside the bounds


def test_windows_split_train_test_and_walk_forward() -> None:
    assert windows(0, 9 * H, H) == [Window((0, 6 * H), (6 * H, 9 * H))]
    assert windows(0, 8 * H, H, folds=3) == [
        Window((0, 2 * H), (2 * H, 4 * H)),
        Window((2 * H, 4 * H), (4 * H, 6 * H)),
        Window((4 * H, 6 * H), (6 * H, 8 * H)),
    ]
    assert windows(0, 10 * H, H, train=4 * H, test=2 * H, folds=2) == [
        Window((0, 4 * H), (4 * H, 6 * H)),
        Window((2 * H, 6 * H), (6 * H, 8 * H)),
    ]
    with pytest.raises(UsageError, match="need 12 candles; the data has 10"):
        windows(0, 10 * H, H, train=4 * H, test=2 * H, folds=4)


def _synthetic(options: Sequence[BacktestOptions]) -> list[VariantOutcome]:
    """``return`` = 1 − ((dip − 0.0061) / 0.01)², a little lower out of sample; the test
    windows start after the train ones, the folds after each other."""
    out = []
    for i, o in enumerate(options):
        dip = o.params["dip"]
        value = 1 - ((dip - OPTIMUM) / D("0.01")) ** 2
        if (o.start_ms or 0) % (2 * H):  # a test window in the folds below
            value -= D("0.01")
        out.append(VariantOutcome(i, dict(o.params), {"return": str(value.quantize(D("1e-8")))}))
    return out


def _settings(**kw: object) -> StudySettings:
    base = BacktestOptions(data=Path("x.csv"), strategies=(Path("s.yaml"),))
    fields: dict[str, object] = {
        "base": base, "dims": (Dimension("dip", D("0"), D("0.02")),), "objective": "return",
        "trials": 30, "seed": 5, "windows": (Window((0, 2 * H), (3 * H, 4 * H)),),
    }  # fmt: skip
    fields.update(kw)
    return StudySettings(**fields)  # type: ignore[arg-type]


def test_the_study_finds_the_optimum_of_a_synthetic_objective() -> None:
    result = optimize(_settings(), _synthetic)
    best = result.ranked("is")[0]
    assert abs(best.params["dip"] - OPTIMUM) < D("0.0005")
    assert best.in_sample is not None
    assert best.out_of_sample == best.in_sample - D("0.01")  # reported side by side


def test_a_seed_gives_the_same_trials_whatever_the_evaluator_and_another_seed_others() -> None:
    def backwards(options: Sequence[BacktestOptions]) -> list[VariantOutcome]:
        return _synthetic(list(options)[::-1])[::-1]  # another order of running: same results

    first = optimize(_settings(trials=12), _synthetic).rows
    again = optimize(_settings(trials=12), backwards).rows
    other = optimize(_settings(trials=12, seed=6), _synthetic).rows
    assert [(r.params, r.in_sample) for r in first] == [(r.params, r.in_sample) for r in again]
    assert [r.params for r in first] != [r.params for r in other]


def test_with_folds_trials_below_the_median_are_pruned_after_a_fold() -> None:
    folds = tuple(Window((2 * i * H, (2 * i + 1) * H), ((2 * i + 1) * H, (2 * i + 2) * H))
                  for i in range(3))  # fmt: skip
    result = optimize(_settings(trials=16, windows=folds), _synthetic)
    pruned = [r for r in result.rows if r.state == "pruned"]
    assert pruned
    assert all(len(r.folds) < 3 for r in pruned)
    assert all(len(r.folds) == 3 for r in result.rows if r.state == "complete")
    assert result.ranked()[0].state == "complete"


def test_the_trials_table_shows_every_fraction_figure_in_percent() -> None:
    row = TrialRow(1, "complete", {"dip": Decimal("0.004")}, Decimal("0.5"), Decimal("0.25"))
    for figure in ("return", "win_rate", "annualised_return"):
        table = render_trials([row], ["dip"], figure, maximize=True, by="oos")
        assert table.splitlines()[-1].split() == ["1", "1", "0.004", "50.0000%", "25.0000%",
                                                  "complete"]  # fmt: skip
