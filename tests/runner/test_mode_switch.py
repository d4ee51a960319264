"""A position-mode switch and the orders of the same cycle, through the runner on the simulator:
the orders are planned against the mode the account has once the switch went out."""

from __future__ import annotations

from pathlib import Path

from botkit.exchange.models import PositionMode
from botkit.journal import OrderFilter, Outcome
from botkit.runner.reader import SnapshotReader
from botkit.sim.faults import FaultKind
from tests.runner.conftest import ONE_ORDER, Rig, make_rig

HEDGE = """\
    strategy: hedge-legs
    symbol: ETH_USDT_PERP
    every: 1m
    margin: {mode: CROSS, position_mode: HEDGE}
    rules:
      - name: to-hedge
        when: rule.fires('30d') == 0
        set_position_mode: HEDGE
      - name: open-long
        pos_side: LONG
        when: position.qty == 0
        place: {order: {side: BUY, px: price.bid * 0.998, sz: 10}}
        keep_open: true
"""


def _outcomes(rig: Rig) -> dict[str, tuple[Outcome | None, tuple[str, ...]]]:
    return {r.strategy: (r.outcome, r.reasons) for r in rig.journal.orders(OrderFilter())}


def test_orders_beside_a_switch_to_hedge_are_planned_in_hedge_mode(rig: Rig) -> None:
    assert rig.client.position_mode() is PositionMode.ONE_WAY
    rig.write("hedge.yaml", HEDGE)
    rig.write("one.yaml", ONE_ORDER)  # a one-way strategy: posSide BOTH
    report = rig.runner.run_cycle()
    assert report.ok
    assert rig.client.position_mode() is PositionMode.HEDGE
    outcomes = _outcomes(rig)
    # the hedge strategy's own LONG entry went out and rests
    assert outcomes["hedge-legs"][0] is Outcome.ACCEPTED
    (resting,) = rig.client.open_orders()
    assert (resting.symbol, resting.posSide and resting.posSide.value) == ("ETH_USDT_PERP", "LONG")
    # the one-way order would be refused by a hedge account: refused here, with the reason
    outcome, reasons = outcomes["one-order"]
    assert outcome is Outcome.REJECTED_LOCAL
    assert reasons[0].startswith("pos_side_hedge:")
    # nothing the exchange refused
    assert not [o for o in rig.journal.orders(OrderFilter()) if o.outcome is Outcome.REJECTED]


def test_a_dry_run_plans_against_the_mode_the_switch_would_set(dry_rig: Rig) -> None:
    dry_rig.write("hedge.yaml", HEDGE)
    report = dry_rig.runner.run_cycle()
    assert dry_rig.client.position_mode() is PositionMode.ONE_WAY  # nothing sent
    assert report.plan is not None
    assert [o.intent.strategy for o in report.plan.accepted] == ["hedge-legs"]


def test_a_refused_switch_leaves_the_orders_planned_in_the_mode_read_again(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()  # a resting order: the simulator refuses a switch now
    rig.write("hedge.yaml", HEDGE)
    rig.clock.advance(60_000)
    report = rig.runner.run_cycle()
    assert rig.client.position_mode() is PositionMode.ONE_WAY
    assert [(e.action, e.ok) for e in report.effects] == [("configure", False)]
    outcome, reasons = _outcomes(rig)["hedge-legs"]
    assert outcome is Outcome.REJECTED_LOCAL
    assert reasons[0].startswith("pos_side_one_way:")


def test_orders_wait_for_the_next_cycle_when_the_mode_cannot_be_read_after_a_failed_switch(
    tmp_path: Path,
) -> None:
    rig = make_rig(tmp_path)
    try:
        rig.write("one.yaml", ONE_ORDER)
        rig.runner.run_cycle()
        rig.write("hedge.yaml", HEDGE)
        rig.clock.advance(60_000)
        rig.runner.reader = SnapshotReader(rig.client, sleep=lambda _s: None)
        # the switch is refused (a resting order) and every read of the mode after it fails
        rig.sim.faults.add(
            FaultKind.HTTP_500,
            path="/v3/position/mode",
            method="GET",
            requests=frozenset(range(2, 10)),
        )
        report = rig.runner.run_cycle()
        assert report.plan is not None
        assert report.plan.hold is not None
        outcome, reasons = _outcomes(rig)["hedge-legs"]
        assert outcome is Outcome.REJECTED_LOCAL
        assert reasons[0].startswith("position_mode_unknown:")
        assert [t.guard for t in rig.journal.trips()] == ["position_mode_unknown"]
    finally:
        rig.client.close()
        rig.journal.close()
