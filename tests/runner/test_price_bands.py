"""The price band (``/v3/market/limitPrice``) is read only when a cycle has orders to check,
or before evaluation when an expression reads it."""

from __future__ import annotations

from decimal import Decimal

from botkit.journal import Outcome
from botkit.runner.reader import SnapshotReader
from botkit.sim.faults import FaultKind
from tests.runner.conftest import ONE_ORDER, Rig

BAND = ("GET", "/v3/market/limitPrice")
MINUTE = 60_000

QUIET = """\
    strategy: quiet
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: never
        when: price.mark > 10000000
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.99, sz: 1}
"""

READS_BAND = """\
    strategy: at-the-band
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: at-buy-limit
        when: price.buy_limit > price.mark
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.99, sz: 1}
        keep_open: true
"""


def test_a_quiet_cycle_does_not_read_the_band(rig: Rig) -> None:
    rig.write("quiet.yaml", QUIET)
    for _ in range(3):
        assert rig.runner.run_cycle().ok
        rig.advance(MINUTE)
    assert rig.transport.calls[BAND] == 0


def test_a_cycle_with_orders_reads_the_band_for_the_plan_and_again_before_the_batch_leaves(
    rig: Rig,
) -> None:
    rig.write("one.yaml", ONE_ORDER)
    report = rig.runner.run_cycle()
    assert rig.transport.calls[BAND] == 2
    assert report.plan is not None
    assert len(report.plan.accepted) == 1
    assert [o.outcome for o in rig.journal.orders()] == [Outcome.ACCEPTED]


def test_an_expression_reading_the_band_gets_it_before_evaluation(rig: Rig) -> None:
    rig.write("band.yaml", READS_BAND)
    report = rig.runner.run_cycle()
    (evaluation,) = report.evaluations
    assert evaluation.results[0].fired
    # read once before evaluation (and the plan), once more just before the batch leaves
    assert rig.transport.calls[BAND] == 2


def test_a_failed_band_read_falls_back_to_the_instruments_band(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    rig.sim.faults.add(FaultKind.HTTP_500, path="/v3/market/limitPrice")
    waits: list[float] = []
    rig.runner.reader = SnapshotReader(rig.client, sleep=waits.append)
    report = rig.runner.run_cycle()
    assert report.ok
    # retried like every read; the re-check before sending tries once and falls back to the mark
    assert rig.transport.calls[BAND] == len(waits) + 2 >= 3
    assert report.plan is not None
    assert len(report.plan.accepted) == 1
    (order,) = rig.journal.orders()
    assert order.outcome is Outcome.ACCEPTED
    assert order.px is not None
    assert Decimal(order.px) < rig.sim.engine.mark("BTC_USDT_PERP")
