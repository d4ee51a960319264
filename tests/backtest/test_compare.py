"""``botkit backtest compare``: two or more report folders side by side (figures, differences,
times as times, the plot and the page), one line for a folder that is not a report; and a
sweep's report page linking every variant's own report."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.backtest.compare import difference
from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
EXITS = ROOT / "strategies" / "btc-exits.yaml"
RUN = ["--data", str(DATA), "--strategies", str(LADDER), str(EXITS),
       "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T06:00:00Z"]  # fmt: skip


def botkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two reports of the same six hours: the ladder with a 0.2 % and a 0.3 % dip."""
    root = tmp_path_factory.mktemp("runs")
    for name, dip in (("tight", "0.002"), ("wide", "0.003")):
        argv = ["backtest", *RUN, "--param", f"dip={dip}", "--report", str(root / name)]
        assert main(argv) == 0
    return root / "tight", root / "wide"


def figures(folder: Path) -> dict[str, str | int | None]:
    found: dict[str, str | int | None] = json.loads((folder / "summary.json").read_text())[
        "figures"
    ]
    return found


def row(out: str, name: str) -> list[str]:
    """The cells of figure ``name``'s row of the printed table (split on 2+ spaces)."""
    (line,) = [x for x in out.splitlines() if x.startswith(f"{name} ")]
    return re.split(r"\s{2,}", line.strip())


def test_compare_prints_the_figures_side_by_side_with_their_differences(
    reports: tuple[Path, Path], tmp_path: Path
) -> None:
    tight, wide = reports
    a, b = figures(tight), figures(wide)
    assert a["orders_placed"] != b["orders_placed"]  # the runs differ: the differences show it
    done = botkit("backtest", "compare", str(tight), str(wide), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "params dip=0.002" in out
    assert "params dip=0.003" in out
    header = next(x for x in out.splitlines() if x.startswith("figure "))
    assert re.split(r"\s{2,}", header) == ["figure", "tight", "wide", "wide − tight"]
    placed = row(out, "orders_placed")
    assert placed[1:3] == [f"{a['orders_placed']:,}", f"{b['orders_placed']:,}"]
    assert placed[3] == f"{int(str(b['orders_placed'])) - int(str(a['orders_placed'])):+,}"
    # times as times: instants as ISO times, durations as durations, fractions in percent
    peak = row(out, "max_drawdown_peak_ms")
    assert all(re.fullmatch(r"2024-01-01T\d\d:\d\d:\d\dZ", c) for c in peak[1:3])
    assert re.fullmatch(r"[+-]?(\d+[dhms] ?)+(\d\d[ms])?|0", peak[3])
    assert re.fullmatch(r"(\d+h )?\d+m( \d\ds)?|\d+s", row(out, "max_drawdown_duration_ms")[1])
    exposure = row(out, "exposure_time")
    assert exposure[1].endswith(" %")
    assert exposure[3].endswith(" pp")
    delta = (Decimal(str(b["exposure_time"])) - Decimal(str(a["exposure_time"]))) * 100
    assert Decimal(exposure[3].removesuffix(" pp")) == delta.quantize(Decimal("0.01"))
    assert "1704067200000" not in out  # no raw epoch milliseconds
    assert "Written" in out


def test_compare_writes_the_csv_the_plot_and_a_self_contained_page_the_same_each_time(
    reports: tuple[Path, Path], tmp_path: Path
) -> None:
    tight, wide = reports
    out = tmp_path / "cmp"
    assert main(["backtest", "compare", str(tight), str(wide), "--out", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(first) == {"compare.csv", "compare.png", "compare.html"}
    assert first["compare.png"].startswith(b"\x89PNG\r\n\x1a\n")
    page = first["compare.html"].decode()
    assert "data:image/png;base64," in page  # the plot is inside the page
    assert not re.search(r"<script|<link|src=\"http|url\(", page)  # nothing from outside
    assert 'href="../../runs0/tight/index.html"' in page or "tight/index.html" in page
    with (out / "compare.csv").open() as f:
        rows = {r["figure"]: r for r in csv.DictReader(f)}
    a, b = figures(tight), figures(wide)
    for name in a:
        if a[name] is not None and b[name] is not None:
            got = Decimal(rows[name]["wide − tight"])
            assert got == Decimal(str(b[name])) - Decimal(str(a[name])), name
    assert main(["backtest", "compare", str(tight), str(wide), "--out", str(out)]) == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first


def test_compare_takes_three_runs_each_against_the_first(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tight, wide = reports
    assert main(["backtest", "compare", str(wide), str(tight), str(wide / "summary.json")]) == 0
    header = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("figure "))
    # the same folder name twice: the labels are the paths as given
    assert re.split(r"\s{2,}", header)[1:4] == [str(wide), str(tight), str(wide / "summary.json")]


def _not_json(folder: Path) -> Path:
    folder.mkdir()
    (folder / "summary.json").write_text("{not json")
    return folder


def _no_figures(folder: Path) -> Path:
    folder.mkdir()
    (folder / "summary.json").write_text('{"symbol": "BTC_USDT_PERP"}')
    return folder


def _empty(folder: Path) -> Path:
    folder.mkdir()
    return folder


def _a_file(folder: Path) -> Path:
    folder.write_text("x")
    return folder


def _a_sweep(folder: Path) -> Path:
    folder.mkdir()
    (folder / "sweep.csv").write_text("rank\n")
    return folder


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_empty, "is not a backtest report (no summary.json) — give report folders written by"),
        (lambda p: p, "no such folder — give report folders written by"),
        (_a_file, "is a file, not a report folder"),
        (_not_json, "summary.json is not JSON"),
        (_no_figures, "summary.json holds no figures"),
        (_a_sweep, "is a sweep's report, not one run's — compare its variants"),
    ],
    ids=["empty", "missing", "file", "not-json", "no-figures", "sweep"],
)
def test_a_folder_that_is_not_a_report_is_one_line_and_exit_2(
    reports: tuple[Path, Path], tmp_path: Path, make: object, message: str
) -> None:
    assert callable(make)
    bad = make(tmp_path / "bad")
    done = botkit("backtest", "compare", str(reports[0]), str(bad))
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: botkit backtest compare: {bad}")
    assert message in line


def test_one_run_is_not_a_comparison(reports: tuple[Path, Path]) -> None:
    done = botkit("backtest", "compare", str(reports[0]))
    assert done.returncode == 2
    assert done.stderr == (
        "error: botkit backtest compare: give at least two report folders to compare\n"
    )


@pytest.mark.parametrize(
    ("name", "first", "other", "shown"),
    [
        ("return", "0.0125", "0.0100", "-0.25 pp"),
        ("return", "0.00001", "0.00002", "+0.001 pp"),
        ("net_pnl", "10.5", "7.25", "-3.25"),
        ("net_pnl", "1", "1.00", "0"),
        ("fills", 10, 12, "+2"),
        ("sharpe", None, "1.2", "-"),
        ("max_drawdown_peak_ms", 1_704_067_200_000, 1_704_067_200_000 + 7_500_000, "+2h 05m"),
        ("avg_holding_ms", 90_000, 30_000, "-1m 00s"),
        ("longest_holding_ms", 5_000, 5_000, "0"),
    ],
)
def test_a_difference_is_written_for_a_person(
    name: str, first: str | int | None, other: str | int | None, shown: str
) -> None:
    assert difference(name, first, other) == shown


def test_a_sweep_report_links_every_variant_report_with_its_figures(tmp_path: Path) -> None:
    argv = ["backtest", *RUN, "--sweep", "dip=0.5,0.002,0.003", "--jobs", "1",
            "--report", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    page = (tmp_path / "index.html").read_text()
    with (tmp_path / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["report"] for r in rows) == ["variants/001", "variants/002", "variants/003"]
    for r in rows:
        folder = tmp_path / r["report"]
        assert f'href="{r["report"]}/index.html"' in page
        assert (folder / "index.html").is_file()
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["run"]["params"] == f"dip={r['dip']}"
        got = summary["figures"]
        for name in ("return", "fills", "final_equity", "max_drawdown"):
            assert str(got[name]) == r[name], (r["report"], name)
    # the page shows each variant's figures in ranked order, as the printed table does
    ranked = [r["dip"] for r in rows]
    cells = re.findall(r"<tr><td>(\d+)</td><td>([0-9.]+)</td>", page)
    assert cells == [(str(i), dip) for i, dip in enumerate(ranked, 1)]
    # and two variants compare like any two reports
    done = botkit("backtest", "compare", str(tmp_path / "variants/002"),
                  str(tmp_path / "variants/003"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "params dip=0.002" in done.stdout


def test_an_out_that_is_a_file_is_refused_before_anything_is_read(
    reports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("x")
    assert main(["backtest", "compare", *map(str, reports), "--out", str(taken)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"error: botkit backtest compare: --out {taken} is a file — name a folder (it is created"
        " if missing)\n"
    )


def test_a_portfolio_sweep_writes_each_variants_account_and_symbol_reports(
    tmp_path: Path,
) -> None:
    eth = tmp_path / "eth.csv"
    synth = ["data", "synth", "--symbol", "ETH_USDT_PERP", "--start", "2024-01-01",
             "--candles", "360", "--seed", "8", "--out", str(eth)]  # fmt: skip
    assert main(synth) == 0
    follows = ROOT / "strategies" / "portfolio" / "eth-follows-btc.yaml"
    argv = ["backtest", "--data", f"BTC_USDT_PERP={DATA}", "--data", f"ETH_USDT_PERP={eth}",
            "--strategies", str(LADDER), str(EXITS), str(follows), "--end",
            "2024-01-01T06:00:00Z", "--sweep", "dip=0.002,0.003", "--jobs", "1",
            "--report", str(tmp_path / "rep")]  # fmt: skip
    assert main(argv) == 0
    page = (tmp_path / "rep" / "index.html").read_text()
    for variant in ("variants/001", "variants/002"):
        folder = tmp_path / "rep" / variant
        assert f'href="{variant}/index.html"' in page
        account = json.loads((folder / "summary.json").read_text())
        assert account["symbol"] == "BTC_USDT_PERP+ETH_USDT_PERP"
        for symbol in ("BTC_USDT_PERP", "ETH_USDT_PERP"):
            assert (folder / symbol / "summary.json").is_file()
            assert account["symbols"][symbol]["report"] == f"{symbol}/index.html"
