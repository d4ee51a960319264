"""keep: rules on the simulator: the runner keeps the declared orders resting, and only them."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from decimal import Decimal

from botkit.journal import OrderFilter, Outcome
from botkit.pipeline.desired import Action
from botkit.rules.ids import parse_client_order_id
from tests.runner.conftest import Rig, open_orders

MINUTE = 60_000
SYMBOL = "BTC_USDT_PERP"
PLACE = ("POST", "/v3/trade/orders")

GRID = """\
    strategy: grid
    symbol: BTC_USDT_PERP
    every: 1m
    params: {{step: {step}, levels: {levels}}}
    rules:
      - name: grid
        when: price.mark > {floor}
        keep:
          grid:
            center: price.mark
            step_px: price.mark * params.step
            levels: params.levels
            sz: 1
          tolerance: 10 bps
"""

TWO = """\
    strategy: two
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: pair
        keep:
          orders:
            - {side: BUY, px: price.mark * 0.99, sz: 1}
            - {side: BUY, px: 59000, sz: 1}
"""

FIXED = """\
    strategy: fixed
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: bid
        keep:
          order: {{side: BUY, px: 59000, sz: 1}}
          refill: {refill}
"""


def grid(step: str = "0.002", levels: int = 3, floor: int = 0) -> str:
    return GRID.format(step=step, levels=levels, floor=floor)


def cycle(rig: Rig, mark: str | None = None) -> None:
    if mark is not None:
        rig.sim.set_mark(SYMBOL, mark)
    report = rig.runner.run_cycle()
    assert report.ok, report.error
    rig.advance(MINUTE)


def resting(rig: Rig) -> dict[str, Decimal]:
    return {o.clOrdId: o.px for o in open_orders(rig) if o.px is not None}


def test_a_kept_grid_is_sent_once_then_nothing_for_100_cycles_at_a_still_mark(rig: Rig) -> None:
    rig.write("grid.yaml", grid())
    cycle(rig)
    first = resting(rig)
    assert len(first) == 6
    sent = rig.transport.calls[PLACE]
    for _ in range(100):
        cycle(rig)
    assert rig.transport.calls[PLACE] == sent
    assert rig.transport.calls[("DELETE", "/v3/trade/batchOrders")] == 0
    assert resting(rig) == first


def test_a_move_inside_the_tolerance_replaces_nothing(rig: Rig) -> None:
    rig.write("grid.yaml", grid())
    cycle(rig)
    first = resting(rig)
    cycle(rig, "60030")  # 5 bps
    assert resting(rig) == first


def test_beyond_the_tolerance_only_the_drifted_rungs_are_replaced(rig: Rig) -> None:
    rig.write("two.yaml", TWO)
    cycle(rig)
    before = resting(rig)
    assert sorted(before.values()) == [Decimal("59000.0"), Decimal("59400.0")]
    rig.sim.set_mark(SYMBOL, "61000")
    report = rig.runner.run_cycle()
    after = resting(rig)
    fixed = next(k for k, v in before.items() if v == Decimal("59000.0"))
    assert fixed in after  # rung 1 did not move: kept, same order
    assert sorted(after.values()) == [Decimal("59000.0"), Decimal("60390.0")]
    (diff,) = report.desired
    assert [(d.action, d.rung) for d in diff.changes] == [(Action.REPLACE, 0)]
    assert "price drifted 1.67 % > tolerance 0.10 %" in diff.changes[0].reason
    new = next(k for k in after if k != fixed)
    old = next(k for k in before if k != fixed)
    assert parse_client_order_id(new).slot > parse_client_order_id(old).slot  # type: ignore[union-attr]


def test_an_edit_of_the_file_converges_in_one_cycle(rig: Rig) -> None:
    rig.write("grid.yaml", grid())
    cycle(rig)
    rig.write("grid.yaml", grid(step="0.005", levels=2))
    cycle(rig)
    assert sorted(resting(rig).values()) == [
        Decimal("59400.0"), Decimal("59700.0"), Decimal("60300.0"), Decimal("60600.0")
    ]  # fmt: skip


def test_deleting_the_file_cancels_its_orders(rig: Rig) -> None:
    path = rig.write("grid.yaml", grid())
    cycle(rig)
    assert len(resting(rig)) == 6
    path.unlink()
    cycle(rig)
    assert resting(rig) == {}


def test_a_false_condition_empties_the_declared_set_and_the_journal_says_why(rig: Rig) -> None:
    rig.write("grid.yaml", grid(floor=59000))
    cycle(rig)
    gone = sorted(resting(rig))
    cycle(rig, "58000")  # the BUY rungs fill on the way down; the condition turns false
    assert resting(rig) == {}
    out = subprocess.run(
        [sys.executable, "-m", "botkit", "journal", "show", "--id", gone[-1],
         "--journal", str(rig.journal.path)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "no longer declared (the condition is false)" in out


def test_a_replaced_order_shows_why_in_journal_show(rig: Rig) -> None:
    rig.write("two.yaml", TWO)
    cycle(rig)
    old = next(k for k, v in resting(rig).items() if v == Decimal("59400.0"))
    cycle(rig, "61000")
    out = subprocess.run(
        [sys.executable, "-m", "botkit", "journal", "show", "--id", old,
         "--journal", str(rig.journal.path)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "[desired]" in out
    assert "kept order: rung 0, generation" in out
    assert "replace rung 0" in out
    assert "price drifted 1.67 % > tolerance 0.10 %" in out


def test_refill_at_once_places_a_filled_order_again_under_a_new_id(rig: Rig) -> None:
    rig.write("fixed.yaml", FIXED.format(refill="at once"))
    cycle(rig)
    (first,) = resting(rig)
    rig.sim.set_mark(SYMBOL, "58900")  # fills it
    rig.sim.set_mark(SYMBOL, "60000")
    assert resting(rig) == {}
    cycle(rig)
    (second,) = resting(rig)
    assert second != first


def test_refill_after_a_delay_waits_for_it(rig: Rig) -> None:
    rig.write("fixed.yaml", FIXED.format(refill="after 3m"))
    cycle(rig)
    rig.sim.set_mark(SYMBOL, "58900")
    rig.sim.set_mark(SYMBOL, "60000")
    for _ in range(3):  # 0, 1 and 2 minutes after the fill
        cycle(rig)
    assert resting(rig) == {}
    cycle(rig)  # 3 minutes after the fill
    assert len(resting(rig)) == 1


def test_refill_never_leaves_a_filled_order_filled(rig: Rig) -> None:
    rig.write("fixed.yaml", FIXED.format(refill="never"))
    cycle(rig)
    rig.sim.set_mark(SYMBOL, "58900")
    rig.sim.set_mark(SYMBOL, "60000")
    for _ in range(5):
        cycle(rig)
    assert resting(rig) == {}


def test_a_replacement_waits_while_the_cancel_of_its_order_fails(rig: Rig) -> None:
    rig.write("two.yaml", TWO)
    cycle(rig)
    rig.sim.faults.add("http_500", method="DELETE", path="/v3/trade/batchOrders", nth=1)
    cycle(rig, "61000")
    assert sorted(resting(rig).values()) == [Decimal("59000.0"), Decimal("59400.0")]
    cycle(rig)
    assert sorted(resting(rig).values()) == [Decimal("59000.0"), Decimal("60390.0")]


def test_min_rest_and_max_replacements_hold_replacements_back(rig: Rig) -> None:
    rig.write(
        "churn.yaml",
        """\
        strategy: churn
        symbol: BTC_USDT_PERP
        every: 1m
        rules:
          - name: ladder
            keep:
              ladder: {side: BUY, count: 3, from_px: price.mark * 0.99, step_px: 100, sz: 1}
              min_rest: 2m
              max_replacements: 2
        """,
    )
    cycle(rig)
    cycle(rig, "61000")  # the orders rested 1 minute: kept
    assert sorted(resting(rig).values()) == [
        Decimal("59200.0"), Decimal("59300.0"), Decimal("59400.0")
    ]  # fmt: skip
    report = rig.runner.run_cycle()  # 2 minutes: 2 of 3 replaced, the third waits
    assert [d.action for d in report.desired[0].changes] == [Action.REPLACE, Action.REPLACE]
    assert "max_replacements 2" in report.desired[0].decisions[-1].reason
    rig.advance(MINUTE)
    cycle(rig)
    assert sorted(resting(rig).values()) == [
        Decimal("60190.0"), Decimal("60290.0"), Decimal("60390.0")
    ]  # fmt: skip


def test_no_client_order_id_is_sent_twice_over_many_fills(rig: Rig) -> None:
    rig.write("grid.yaml", grid(step="0.001"))
    for mark in ["60000", "60100", "59900", "60150", "59800", "60000"] * 5:
        cycle(rig, mark)
    rows = rig.journal.orders(OrderFilter())
    ids = Counter(r.cl_ord_id for r in rows)
    assert max(ids.values()) == 1
    assert all(r.outcome is Outcome.ACCEPTED for r in rows)


def test_a_keep_rule_removed_from_the_file_has_its_orders_cancelled(rig: Rig) -> None:
    rig.write("two.yaml", TWO)
    cycle(rig)
    assert len(resting(rig)) == 2
    header = TWO.split("      - name: pair")[0]
    rig.write("two.yaml", header + "      - name: exit\n        close: {}\n")
    report = rig.runner.run_cycle()
    assert resting(rig) == {}
    removed = [d for d in report.desired if d.rule == "(removed rule)"]
    assert [d.reason for d in removed[0].decisions] == [
        "its keep: rule is no longer in the strategy"
    ] * 2


def test_strategies_keeping_orders_on_one_symbol_each_reconcile_only_their_own(rig: Rig) -> None:
    """The open orders are grouped by strategy once per cycle: each strategy's reconcile sees
    its own orders only, and a strategy whose keep: rule was edited away cancels its own kept
    orders and no one else's. Fails if a strategy is handed another's orders (they would be
    cancelled as not declared) or misses its own (they would be placed again)."""
    rig.write("grid.yaml", grid())
    rig.write("two.yaml", TWO)
    rig.write("fixed.yaml", FIXED.format(refill="at once"))
    cycle(rig)
    first = resting(rig)
    assert len(first) == 6 + 2 + 1
    sent = rig.transport.calls[PLACE]
    for _ in range(5):
        cycle(rig)
    assert rig.transport.calls[PLACE] == sent
    assert rig.transport.calls[("DELETE", "/v3/trade/batchOrders")] == 0
    assert resting(rig) == first
    header = TWO.split("      - name: pair")[0]
    rig.write("two.yaml", header + "      - name: exit\n        close: {}\n")
    report = rig.runner.run_cycle()
    (removed,) = [d for d in report.desired if d.rule == "(removed rule)"]
    assert removed.strategy == "two"
    assert len(removed.decisions) == 2
    assert len(resting(rig)) == 6 + 1
    assert set(resting(rig)) <= set(first)
