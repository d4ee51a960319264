"""Two strategies whose names hash to the same client order id tag are refused, wherever
strategies are loaded: each would take the other's orders for its own (cancel them, count their
fills) — found by a review that made two such names (``grid-x-8918``, ``grid-x-55329``: tag
``7ljhhs``) and saw a backtest fail at its first cycle on the journal's unique index. So is a
new strategy with the tag of one that ran before (the journal knows it, its file is gone: its
orders may still rest and fill) — the end-to-end run: tests/e2e/test_tag_twin_ran_before.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from botkit.journal import Journal
from botkit.ports.journal import StrategyRecord
from botkit.rules import StrategyStore
from botkit.rules.ids import strategy_tag
from botkit.rules.store import ran_in
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


def botkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=ROOT,
        env=env,
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
        f"{where / f'1-{SECOND}.yaml'}:1:1: strategy name '{SECOND}' has the same client order id"
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
        f"error: {where / f'1-{SECOND}.yaml'}:1:1: strategy name '{SECOND}' has the same client"
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


# --- a strategy that ran before (the journal knows it; its file is gone) ---------------------


def ran_journal(tmp_path: Path, *names: str) -> Path:
    """A journal that knows ``names`` (they ran; their files are gone)."""
    path = tmp_path / "journal.sqlite"
    with Journal(path, clock=lambda: 1_000) as journal:
        journal.record_strategies(
            [StrategyRecord(n, strategy_tag(n), "v1", f"{n}.yaml", "keep", 0) for n in names]
        )
        journal.mark_strategies_removed(list(names))
    return path


def ran_line(where: str, name: str, twin: str, journal: Path) -> str:
    return (
        f"{where}: strategy name '{name}' has the same client order id tag (7ljhhs) as '{twin}'"
        f" in the journal {journal}: their orders could not be told apart — rename '{name}':"
        f" '{twin}' ran before and its orders (open ones, fills to come) carry that tag"
    )


def test_the_service_refuses_a_new_strategy_with_the_tag_of_one_that_ran_until_renamed(
    tmp_path: Path,
) -> None:
    path = ran_journal(tmp_path, FIRST)
    where = folder(tmp_path, "other")
    with Journal(path, clock=lambda: 2_000) as journal:
        store = StrategyStore(FileSource(where), ran=ran_in(journal, f"the journal {path}"))
        assert [s.name for s in store.refresh().loaded] == ["other"]
        (where / f"1-{SECOND}.yaml").write_text(STRATEGY.format(name=SECOND), encoding="utf-8")
        report = store.refresh()
        assert sorted(store.strategies) == ["other"]  # the rest keep running
        assert [str(e) for e in report.errors] == [
            ran_line(f"{where / f'1-{SECOND}.yaml'}:1:1", SECOND, FIRST, path)
        ]
        assert store.refresh().errors  # refused again at every refresh while it is there
        (where / f"1-{SECOND}.yaml").write_text(
            STRATEGY.format(name="grid-x-8919"), encoding="utf-8"
        )
        report = store.refresh()
        assert [s.name for s in report.loaded] == ["grid-x-8919"]
        assert not report.errors


def test_the_service_runs_the_strategy_that_ran_under_its_own_name(tmp_path: Path) -> None:
    """A name the journal knows, loaded under that very name, is that strategy: no clash."""
    path = ran_journal(tmp_path, FIRST)
    with Journal(path, clock=lambda: 2_000) as journal:
        store = StrategyStore(
            FileSource(folder(tmp_path, FIRST)), ran=ran_in(journal, f"the journal {path}")
        )
        report = store.refresh()
    assert [s.name for s in report.loaded] == [FIRST]
    assert not report.errors


def test_a_renamed_strategy_may_not_take_the_tag_of_its_old_name(tmp_path: Path) -> None:
    """A file whose strategy is renamed to a name of its old name's tag: the old one's orders
    are still out there (the old version keeps running)."""
    where = folder(tmp_path, FIRST)
    path = tmp_path / "journal.sqlite"
    with Journal(path, clock=lambda: 2_000) as journal:
        store = StrategyStore(FileSource(where), ran=ran_in(journal, "the journal"))
        assert [s.name for s in store.refresh().loaded] == [FIRST]
        journal.record_strategies(
            [StrategyRecord(FIRST, strategy_tag(FIRST), "v1", "f.yaml", "keep", 0)]
        )  # as the service records what it loads
        (where / f"0-{FIRST}.yaml").write_text(STRATEGY.format(name=SECOND), encoding="utf-8")
        report = store.refresh()
    assert sorted(store.strategies) == [FIRST]
    assert [s.name for s in report.kept] == [FIRST]
    assert "as 'grid-x-8918' in the journal:" in str(report.errors[0])


def check_env(tmp_path: Path, journal: Path) -> dict[str, str]:
    (tmp_path / "botkit.toml").write_text(f'journal = "{journal}"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("BOTKIT_")}
    return {**env, "BOTKIT_CONFIG": str(tmp_path / "botkit.toml")}


def test_check_refuses_a_strategy_with_the_tag_of_one_the_settings_journal_knows(
    tmp_path: Path,
) -> None:
    path = ran_journal(tmp_path, FIRST)
    where = folder(tmp_path, SECOND, FIRST)  # the same name as one that ran: no clash
    done = botkit("check", "--offline", str(where), env=check_env(tmp_path, path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        ran_line(f"{where / f'0-{SECOND}.yaml'}:1:1", SECOND, FIRST, path),
        "1 problem",
    ]


def test_check_reads_the_journal_it_is_given(tmp_path: Path) -> None:
    path = ran_journal(tmp_path, FIRST)
    twin = folder(tmp_path, SECOND)
    env = check_env(tmp_path, tmp_path / "none.sqlite")  # the settings' journal: none yet
    alone = botkit("check", "--offline", str(twin), env=env)
    assert alone.returncode == 0, alone.stdout
    assert alone.stdout == (  # the settings' journal is not there: the line says so
        "ok: 1 strategy (symbols and limits checked; id tags not checked against a journal:"
        f" none at {tmp_path / 'none.sqlite'} — pass --journal FILE)\n"
    )
    assert not (tmp_path / "none.sqlite").exists()  # a check creates no journal

    given = botkit("check", "--offline", "--journal", str(path), str(twin), env=env)
    assert given.returncode == 1
    assert given.stdout.splitlines() == [
        ran_line(f"{twin / f'0-{SECOND}.yaml'}:1:1", SECOND, FIRST, path),
        "1 problem",
    ]

    other = tmp_path / "other.yaml"
    other.write_text(STRATEGY.format(name="grid-x-8919"), encoding="utf-8")
    ok = botkit("check", "--offline", "--journal", str(path), str(other), env=env)
    assert ok.returncode == 0, ok.stdout
    assert ok.stdout == (
        f"ok: 1 strategy (symbols and limits checked; id tags checked against the journal {path})\n"
    )

    missing = tmp_path / "no.sqlite"
    refused = botkit("check", "--journal", str(missing), str(other), env=env)
    assert refused.returncode != 0
    assert f"--journal {missing} does not exist" in refused.stderr
    assert not missing.exists()


def test_a_backtest_starts_with_a_new_journal_so_none_ran_before(tmp_path: Path) -> None:
    """A backtest's journal is new (``--journal`` must name a new file): no strategy ran in it,
    so a name of a tag another journal knows is no clash there. A guard against refusing too
    much (a backtest asking the service's journal, say): it held before the refusal too."""
    path = ran_journal(tmp_path, FIRST)
    data = tmp_path / "c.csv"
    data.write_text(
        "time,open,high,low,close,volume\n"
        "2024-01-01T00:00:00Z,100,101,99,100,1\n2024-01-01T00:01:00Z,100,101,99,100,1\n"
    )
    where = folder(tmp_path, SECOND)
    done = botkit(
        "backtest", "--data", str(data), "--strategies", str(where), "--journal", str(path)
    )
    assert done.returncode != 0
    assert f"--journal {path} already exists" in done.stderr
    fresh = tmp_path / "fresh.sqlite"
    done = botkit(
        "backtest", "--data", str(data), "--strategies", str(where), "--journal", str(fresh)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with Journal(fresh, clock=lambda: 0) as journal:
        assert [r.name for r in journal.strategies(strategy_tag)] == [SECOND]
