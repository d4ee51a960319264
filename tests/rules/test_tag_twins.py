"""Two strategies whose names hash to the same client order id tag are refused, wherever
strategies are loaded: each would take the other's orders for its own (cancel them, count their
fills) — found by a review that made two such names (``grid-x-8918``, ``grid-x-55329``: tag
``7ljhhs``) and saw a backtest fail at its first cycle on the journal's unique index."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from botkit.rules import StrategyStore
from botkit.rules.ids import strategy_tag
from botkit.sources import FileSource

FIRST, SECOND = "grid-x-8918", "grid-x-55329"
STRATEGY = (
    "strategy: {name}\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n"
    "    when: price.mark > 0\n"
    "    place:\n      order: {{side: BUY, type: LIMIT, px: price.mark * 0.9, sz: 1}}\n"
)
ROOT = Path(__file__).resolve().parents[2]


def folder(tmp_path: Path, *names: str) -> Path:
    where = tmp_path / "strategies"
    where.mkdir(exist_ok=True)
    for i, name in enumerate(names):
        (where / f"{i}-{name}.yaml").write_text(STRATEGY.format(name=name), encoding="utf-8")
    return where


def botkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_two_names_share_a_tag() -> None:
    assert strategy_tag(FIRST) == strategy_tag(SECOND) == "7ljhhs"


def test_check_refuses_the_second_with_both_names(tmp_path: Path) -> None:
    where = folder(tmp_path, FIRST, SECOND)
    done = botkit("check", "--offline", str(where))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{where / f'1-{SECOND}.yaml'}: strategy name '{SECOND}' has the same client order id"
        f" tag (7ljhhs) as '{FIRST}' in {where / f'0-{FIRST}.yaml'}: their orders could not be"
        " told apart — rename one of the two strategies",
        "1 problem",
    ]


def test_check_passes_names_of_distinct_tags(tmp_path: Path) -> None:
    done = botkit("check", "--offline", str(folder(tmp_path, FIRST, "grid-x-8919")))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("ok: 2 strategies")


def test_a_backtest_refuses_them_before_it_starts(tmp_path: Path) -> None:
    where = folder(tmp_path, FIRST, SECOND)
    data = tmp_path / "c.csv"
    data.write_text(
        "time,open,high,low,close,volume\n"
        "2024-01-01T00:00:00Z,100,101,99,100,1\n2024-01-01T00:01:00Z,100,101,99,100,1\n"
    )
    done = botkit("backtest", "--data", str(data), "--strategies", str(where))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: {where / f'1-{SECOND}.yaml'}: strategy name '{SECOND}' has the same client"
        f" order id tag (7ljhhs) as '{FIRST}' in {where / f'0-{FIRST}.yaml'}: their orders could"
        " not be told apart — rename one of the two strategies"
    )


def test_the_service_keeps_the_first_and_refuses_the_second_until_renamed(
    tmp_path: Path,
) -> None:
    where = folder(tmp_path, FIRST)
    store = StrategyStore(FileSource(where))
    assert [s.name for s in store.refresh().loaded] == [FIRST]
    (where / f"1-{SECOND}.yaml").write_text(STRATEGY.format(name=SECOND), encoding="utf-8")
    report = store.refresh()
    assert sorted(store.strategies) == [FIRST]
    assert [str(e) for e in report.errors] == [
        f"{where / f'1-{SECOND}.yaml'}:1:1: strategy name '{SECOND}' has the same client order"
        f" id tag (7ljhhs) as '{FIRST}' in {where / f'0-{FIRST}.yaml'}: their orders could not"
        " be told apart — rename one of the two strategies"
    ]
    assert store.refresh().errors  # refused again at every refresh while both are there
    (where / f"1-{SECOND}.yaml").write_text(STRATEGY.format(name="grid-x-8919"), encoding="utf-8")
    report = store.refresh()
    assert [s.name for s in report.loaded] == ["grid-x-8919"]
    assert not report.errors
    assert sorted(store.strategies) == [FIRST, "grid-x-8919"]
