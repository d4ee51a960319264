"""Failures reach the log: the cycle line counts each outcome honestly, and rejections,
answers that settle nothing and orders left unknown are logged at WARNING, one line per reason.

The runner on the in-process simulator; the exchange refuses orders for a reason botkit does
not check locally (more initial margin than the account has), or faults are injected.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from loguru import logger

from botkit.runner.loop import status_line
from tests.runner.conftest import Rig, make_rig

FIVE_BUYS = """\
    strategy: buys
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: sell-reduce
        when: position.qty == 0
        place:
          ladder: {side: BUY, count: 5, from_px: price.mark * 0.99,
                   step_px: price.mark * 0.001, sz: 1}
"""
# five orders too large for the account's margin, alike to the tick (one reason, one line)
REFUSED = (
    FIVE_BUYS.replace("buys", "refused")
    .replace("price.mark * 0.99", "price.mark * 0.99 - 0.000001")
    .replace("price.mark * 0.001", "0.000001")
    .replace("sz: 1}", "sz: 900000}")
)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path)
    yield r
    r.client.close()
    r.journal.close()


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(str(m.record["message"])), level="WARNING")
    yield lines
    logger.remove(sink)


def test_orders_the_exchange_rejects_are_counted_as_rejected_and_logged_once_per_reason(
    rig: Rig, warnings: list[str]
) -> None:
    rig.write("r.yaml", REFUSED)
    report = rig.runner.run_cycle()
    assert status_line(report) == (
        "cycle 1: 1 strategies, orders: 0 accepted, 5 rejected, 0 unknown, 0 failed, "
        "0 refused locally; 0 cancels/changes"
    )
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "cycle 1: 5 order(s) rejected by the exchange: 400 Insufficient margin"
    )
    assert warnings[0].count(report.execution.outcomes[0].cl_ord_id) == 1  # type: ignore[union-attr]


def test_accepted_orders_are_counted_as_accepted_and_log_nothing(
    rig: Rig, warnings: list[str]
) -> None:
    rig.write("b.yaml", FIVE_BUYS)
    report = rig.runner.run_cycle()
    assert "orders: 5 accepted, 0 rejected, 0 unknown, 0 failed" in status_line(report)
    assert warnings == []


def test_a_malformed_batch_answer_is_logged_at_warning(rig: Rig, warnings: list[str]) -> None:
    rig.write("b.yaml", FIVE_BUYS)
    rig.sim.faults.add("html", method="POST", path="/v3/trade/orders", nth=1)
    report = rig.runner.run_cycle()
    assert "orders: 5 accepted" in status_line(report)  # looked up, then sent again
    assert len(warnings) == 1
    assert warnings[0].startswith("cycle 1: the answer about 5 order(s) settled nothing (")
    assert "looking them up" in warnings[0]


def test_orders_whose_fate_stays_unknown_are_counted_and_logged(
    rig: Rig, warnings: list[str]
) -> None:
    rig.write("b.yaml", FIVE_BUYS)
    rig.sim.faults.add("drop_after", method="POST", path="/v3/trade/orders", nth=1)
    # the snapshot reads open orders once; every later read (the lookups) is refused
    rig.sim.faults.add(
        "rate_limit", method="GET", path="/v3/trade/order/opens", retry_after=0,
        requests=list(range(2, 100)),
    )  # fmt: skip
    report = rig.runner.run_cycle()
    assert "orders: 0 accepted, 0 rejected, 5 unknown, 0 failed" in status_line(report)
    assert warnings[0].startswith("cycle 1: the answer about 5 order(s) settled nothing")
    assert warnings[-1].startswith(
        "cycle 1: 5 order(s) still unknown after the lookups: reconcile looks them up again ("
    )


def test_orders_that_failed_are_counted_as_failed_and_logged(rig: Rig, warnings: list[str]) -> None:
    rig.write("b.yaml", FIVE_BUYS)
    rig.sim.faults.add("rate_limit", method="POST", path="/v3/trade/orders", retry_after=0)
    report = rig.runner.run_cycle()
    assert "orders: 0 accepted, 0 rejected, 0 unknown, 5 failed" in status_line(report)
    assert len(warnings) == 1
    assert warnings[0].startswith("cycle 1: 5 order(s) failed (not placed): ")


def test_a_fired_rule_is_logged_at_info_with_its_strategy_and_rule(rig: Rig) -> None:
    """The record a sink gets: the message ``fired`` and the strategy and rule in ``extra``
    (what a bound logger gave; the text sinks and the JSON sink show them)."""
    records: list[tuple[str, str, dict[str, object]]] = []
    sink = logger.add(
        lambda m: records.append(
            (m.record["level"].name, m.record["message"], dict(m.record["extra"]))
        ),
        level="INFO",
        filter=lambda r: r["message"] == "fired",
    )
    try:
        rig.write("b.yaml", FIVE_BUYS)
        rig.runner.run_cycle()
    finally:
        logger.remove(sink)
    assert records == [("INFO", "fired", {"strategy": "buys", "rule": "sell-reduce"})]
