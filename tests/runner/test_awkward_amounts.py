"""Awkward amounts through the runner on the simulator, whose strict text check (on by default)
refuses an ``sz`` / ``px`` written with more decimals than ``lotSz`` / ``tSz`` allow: every order
botkit sends is written with exactly the decimals of its step, so none is refused for it.

BTC_USDT_PERP: tSz 0.1, lotSz 1, mark 60000.
"""

from __future__ import annotations

from botkit.journal import Outcome
from tests.runner.conftest import Rig

AWKWARD = """\
    strategy: awkward
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: decimals-written
        when: position.qty == 0
        place:
          order: {side: BUY, type: LIMIT, px: 59000.00, sz: 2.0}
      - name: computed
        when: position.qty == 0
        place:
          ladder: {side: BUY, count: 3, from_px: price.mark * 0.9900, step_px: 10.50,
                   sz: 1 + i * 0.5}
      - name: four
        when: position.qty == 0
        place:
          order: {side: BUY, type: MARKET, sz: 4.00}
"""

CLOSE_HALF = """\
    strategy: halves
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: close-half
        when: position.qty > 0
        close: {sz: position.qty * 0.5}
"""


def test_sizes_and_prices_written_with_decimals_leave_on_their_step(rig: Rig) -> None:
    rig.write("awkward.yaml", AWKWARD)
    report = rig.runner.run_cycle()
    assert report.ok, report.error
    orders = rig.journal.orders()
    assert len(orders) == 5
    refused = [(o.cl_ord_id, o.code, o.msg) for o in orders if o.outcome is not Outcome.ACCEPTED]
    assert refused == []
    texts = [o.request or {} for o in orders]
    assert {t["sz"] for t in texts} == {"2", "1", "4"}
    assert all(len(t["px"].split(".")[1]) == 1 for t in texts if "px" in t)  # tSz 0.1
    assert "59000.0" in {t.get("px") for t in texts}

    rig.write("halves.yaml", CLOSE_HALF)
    rig.advance(60_000)
    report = rig.runner.run_cycle()
    assert report.ok, report.error
    closes = [o for o in rig.journal.orders() if o.strategy == "halves"]
    assert [(o.outcome, (o.request or {})["sz"]) for o in closes] == [(Outcome.ACCEPTED, "2")]
