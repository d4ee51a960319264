"""The figures' order counts, read over the orders' fields at once (issue 20): each order
counted once by its outcome, an order filled when a fill of its id has a quantity."""

from __future__ import annotations

from decimal import Decimal

from botkit.backtest.metrics import compute_figures
from botkit.backtest.result import BacktestResult, FillRow, OrderRow

D = Decimal


def _order(cid: str, outcome: str) -> OrderRow:
    return OrderRow(1, "s", "r", cid, "S", "BUY", "LIMIT", D(10), D(1), outcome)


def _fill(cid: str, qty: str) -> FillRow:
    return FillRow(2, cid, "BUY", D(10), D(qty), D("0.01"), "maker")


def test_an_order_is_filled_once_by_a_fill_of_its_id_with_a_quantity() -> None:
    outcomes = ("accepted", "accepted", "accepted", "unsettled", "rejected", "rejected")
    orders = [_order(cid, outcome) for cid, outcome in zip("abcdef", outcomes, strict=True)]
    fills = [_fill("a", "1"), _fill("a", "2"), _fill("b", "0"), _fill("x", "1"), _fill("y", "3")]
    result = BacktestResult("S", 10, 0, 100, 10, D(1000), orders=orders, fills=fills)
    figures = compute_figures(result)
    # "a" once for its two fills; "b" had none with a quantity; "x" and "y" are no order's
    assert figures.orders_filled == 1
    assert (figures.orders_total, figures.orders_placed, figures.orders_rejected) == (6, 3, 2)
    assert (figures.orders_refused, figures.orders_failed, figures.fills) == (0, 0, 5)
