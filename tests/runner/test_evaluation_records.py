"""Which rule evaluations a cycle journals: ``all`` or only ``changes`` (Runner(evaluations=))."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from botkit.runner.cycle import Runner
from tests.runner.conftest import Rig, make_rig

SYMBOL = "BTC_USDT_PERP"
MINUTE = 60_000

WATCHER = """\
    strategy: watcher
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: never
        when: price.mark > 10000000
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}
      - name: on-spike
        when: price.mark > params.spike
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}
        cooldown: 3m
    params:
      spike: 70000
"""


def _cycles(rig: Rig, marks: list[str]) -> list[tuple[int, int]]:
    """Run one cycle a minute at each mark; (evaluations journaled, fired) per cycle."""
    for mark in marks:
        rig.sim.engine.set_mark(SYMBOL, Decimal(mark))
        report = rig.runner.run_cycle()
        assert report.ok, report.error
        rig.advance(MINUTE)
    summaries = sorted(rig.journal.cycles(), key=lambda c: c.id)
    return [(c.evaluations, c.fired) for c in summaries]


MARKS = ["60000", "60100", "71000", "71500", "60000", "72000", "72500", "72600", "60000", "60000"]


@pytest.fixture(params=["all", "changes"])
def both(request: pytest.FixtureRequest, tmp_path: Path) -> Rig:
    rig = make_rig(tmp_path, evaluations=request.param)
    rig.write("watcher.yaml", WATCHER)
    return rig


def test_all_journals_every_rule_every_cycle(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, evaluations="all")
    rig.write("watcher.yaml", WATCHER)
    rows = _cycles(rig, MARKS)
    assert [e for e, _ in rows] == [2] * len(MARKS)


def test_changes_journals_a_rule_when_its_status_changes_or_it_fires(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, evaluations="changes")
    rig.write("watcher.yaml", WATCHER)
    rows = _cycles(rig, MARKS)
    # minute 0: both rules, first seen (condition false); 1: nothing changed; 2: on-spike
    # fires; 3, 4: cooldown (one row, when it begins); 5: fires again (3 minutes on);
    # 6, 7: cooldown (one row); 8: its condition is false again; 9: still false.
    assert rows == [
        (2, 0), (0, 0), (1, 1), (1, 0), (0, 0), (1, 1), (1, 0), (0, 0), (1, 0), (0, 0)
    ]  # fmt: skip


def test_changes_keeps_the_same_fires_and_orders_as_all(both: Rig) -> None:
    fired = [f for _, f in _cycles(both, MARKS)]
    assert fired == [0, 0, 1, 0, 0, 1, 0, 0, 0, 0]  # the cooldown is read from journaled fires
    orders = both.journal.orders()
    assert [o.rule for o in orders] == ["on-spike", "on-spike"]


def test_a_reloaded_version_is_journaled_again(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, evaluations="changes")
    path = rig.write("watcher.yaml", WATCHER)
    assert _cycles(rig, ["60000", "60000"]) == [(2, 0), (0, 0)]
    path.write_text(path.read_text().replace("spike: 70000", "spike: 80000"))
    rows = _cycles(rig, ["60000"])
    assert rows[-1] == (2, 0)


def test_an_unknown_policy_is_refused(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    with pytest.raises(ValueError, match="'all' or 'changes'"):
        Runner(
            port=rig.client,
            store=rig.runner.store,
            journal=rig.journal,
            execution=rig.runner.execution,
            now_ms=rig.clock.now_ms,
            evaluations="some",  # type: ignore[arg-type]
        )
