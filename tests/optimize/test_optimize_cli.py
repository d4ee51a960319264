"""``botkit optimize`` on the shipped week: it finds the optimum a grid sweep establishes on the
train window, reports in-sample and out-of-sample figures, writes the best params and the
study report, and a fixed seed gives the same trials in one process, after a resume from its
storage and on a local Dask cluster. Bad input is one line with a did-you-mean."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = str(ROOT / "data" / "btc-synth-7d.csv")
LADDER = str(ROOT / "strategies" / "btc-dip-ladder.yaml")
PERIOD = ["--data", DATA, "--strategies", LADDER, "--end", "2024-01-01T06:00:00Z"]
STUDY = ["optimize", *PERIOD, "--space", "dip=0.002..0.008:0.002", "--train", "4h",
         "--test", "2h", "--seed", "0", "--batch", "4"]  # fmt: skip


def _table(out: str) -> list[list[str]]:
    """The rows of the ranked table (after its two heading lines, up to the blank line)."""
    lines = out.split("\n\n")[0].splitlines()
    return [line.split() for line in lines[2:] if not line.startswith("trial ")]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    report = tmp_path_factory.mktemp("study") / "report"
    with pytest.MonkeyPatch.context() as mp:
        out = _run(mp, [*STUDY, "--trials", "8", "--jobs", "1", "--rank", "is",
                        "--report", str(report)])  # fmt: skip
    return out, report


def _run(mp: pytest.MonkeyPatch, argv: list[str]) -> str:
    import io

    out = io.StringIO()
    mp.setattr(sys, "stdout", out)
    code = main(argv)
    mp.undo()
    assert code == 0, argv
    return out.getvalue()


def test_the_study_finds_the_best_train_value_a_grid_sweep_finds(
    one_process: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    grid = _run(monkeypatch, ["backtest", *PERIOD[:-1], "2024-01-01T04:00:00Z", "--sweep",
                              "dip=0.002,0.004,0.006,0.008", "--jobs", "1"])  # fmt: skip
    grid_best = _table(grid)[0][1]  # "#  dip  return ...": the dip of the best return
    out, _ = one_process
    rows = _table(out)
    assert rows[0][2] == grid_best  # ranked in-sample: "#  trial  dip  in-sample ..."
    assert len(rows) == 8
    assert all(r[-1] == "complete" for r in rows)
    assert all(r[3].endswith("%") and r[4].endswith("%") for r in rows)  # both figures shown


def test_the_best_params_are_a_ready_block_and_the_report_is_written_offline(
    one_process: tuple[str, Path],
) -> None:
    out, report = one_process
    best_dip = _table(out)[0][2]
    block = (report / "best-params.yaml").read_text()
    assert block in out
    params = YAML(typ="safe").load(block)["params"]
    assert Decimal(str(params["dip"])) == Decimal(best_dip)
    assert {"first", "step", "rungs"} <= set(params)  # the whole block, ready to paste
    for name in ("trials.csv", "history.png", "importance.png", "index.html"):
        assert (report / name).stat().st_size > 0
    page = (report / "index.html").read_text()
    assert "http" not in page
    assert "<script" not in page
    assert (
        (report / "trials.csv")
        .read_text()
        .startswith("rank,trial,state,dip,in_sample,out_of_sample,fold0_train,fold0_test,error\n")
    )


def test_a_fixed_seed_gives_the_same_trials_after_a_resume_and_on_a_local_cluster(
    one_process: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected, _ = one_process
    storage = ["--storage", f"sqlite:///{tmp_path / 'study.db'}", "--study", "week"]
    args = [*STUDY, *storage, "--jobs", "1", "--rank", "is"]
    first = _run(monkeypatch, [*args, "--trials", "4"])
    assert len(_table(first)) == 4
    resumed = _run(monkeypatch, [*args, "--trials", "8"])
    assert resumed == expected.split("Report")[0]

    done = subprocess.run(
        [str(Path(sys.executable).with_name("botkit")), *STUDY, "--trials", "8", "--rank", "is",
         "--cluster", "local:2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected.split("Report")[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--space", "dipp=0.002..0.008"], "--space dipp: no strategy defines this param — did "
         "you mean 'dip'?"),
        (["--space", "dip=0.002-0.008"], "write KEY=LOW..HIGH or KEY=LOW..HIGH:STEP"),
        (["--space", "dip=0.002..0.008:0.004"], "is not a whole number of steps of 0.004"),
        (["--space", "dip=0.008..0.002"], "LOW must be below HIGH"),
        (["--space", "rungs=1.5..3"], "--space low ends rungs=1.5: "),
        (["--space", "dip=0.002..0.008", "--objective", "retrun"], "--objective retrun: not a "
         "figure — did you mean 'return'?"),
        (["--space", "dip=0.002..0.008", "--train", "4h"], "give --train and --test together"),
        (["--space", "dip=0.002..0.008", "--folds", "400"], "too few to split"),
        (["--space", "dip=0.002..0.008", "--report", LADDER], f"botkit optimize: --report "
         f"{LADDER} is a file — name a folder"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["optimize", *PERIOD, "--trials", "2", "--jobs", "1", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert message in err[0]


def test_the_process_pool_is_no_larger_than_a_batch_can_use(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A batch runs two backtests a trial at a time (train and test): ``--jobs`` beyond that
    (a typo of a huge number included) starts no more processes."""
    argv = [*STUDY, "--trials", "1", "--batch", "1", "--jobs", str(10**30)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert " on 2 process(es), 1 fold(s)" in err, err


def test_resuming_with_other_settings_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = ["--storage", f"sqlite:///{tmp_path / 's.db'}", "--study", "s"]
    base = ["optimize", *PERIOD, "--train", "4h", "--test", "2h", "--trials", "1", "--jobs", "1"]
    _run(monkeypatch, [*base, *storage, "--space", "dip=0.002..0.008:0.002"])
    capsys.readouterr()
    assert main([*base, *storage, "--space", "dip=0.002..0.006:0.002"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: --study s: the stored study was made with other settings (space differ) — "
        "resume it with the same --space, --objective, --seed, --batch, periods and --param, "
        "or name a new --study"
    ]


def test_without_optuna_the_command_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)
    argv = ["optimize", *PERIOD, "--space", "dip=0.002..0.008", "--trials", "1", "--jobs", "1"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: botkit optimize needs Optuna, which is not installed — install the optimize "
        "extra: pip install 'botkit[optimize]'"
    ]


def test_a_portfolio_study_finds_the_best_train_value_its_grid_sweep_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several ``--data SYMBOL=FILE``: every trial is a portfolio backtest on one account
    (the ETH strategy competes with the BTC ladder for margin), ranked by the account's
    figure, as a portfolio sweep ranks its variants."""
    eth = tmp_path / "eth.csv"
    assert main(["data", "synth", "--symbol", "ETH_USDT_PERP", "--start", "2024-01-01",
                 "--candles", "360", "--seed", "8", "--out", str(eth)]) == 0  # fmt: skip
    follows = str(ROOT / "strategies" / "portfolio" / "eth-follows-btc.yaml")
    data = ["--data", f"BTC_USDT_PERP={DATA}", "--data", f"ETH_USDT_PERP={eth}",
            "--strategies", LADDER, follows]  # fmt: skip
    grid = _run(monkeypatch, ["backtest", *data, "--end", "2024-01-01T04:00:00Z", "--sweep",
                              "dip=0.002,0.004,0.006,0.008", "--jobs", "1"])  # fmt: skip
    report = tmp_path / "report"
    out = _run(monkeypatch, ["optimize", *data, "--end", "2024-01-01T06:00:00Z", "--space",
                             "dip=0.002..0.008:0.002", "--train", "4h", "--test", "2h",
                             "--trials", "8", "--jobs", "1", "--rank", "is",
                             "--report", str(report)])  # fmt: skip
    assert _table(out)[0][2] == _table(grid)[0][1]
    page = (report / "index.html").read_text()
    assert f"BTC_USDT_PERP={DATA}, ETH_USDT_PERP={eth}" in page
