"""Per-strategy attribution of fills by average cost."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.exchange.models import Fill, OrderSide, PosSide
from botkit.runner.pnl import Book, attribute

D = Decimal


def _fill(
    n: int, cl: str, side: str, qty: str, px: str, fee: str = "0", pos_side: str = "BOTH"
) -> Fill:
    return Fill.model_validate(
        {
            "id": str(n),
            "symbol": "BTC_USDT_PERP",
            "clOrdId": cl,
            "side": side,
            "qty": qty,
            "px": px,
            "feeAmt": fee,
            "posSide": pos_side,
            "cTime": str(1000 + n),
        }
    )


@pytest.mark.parametrize(
    ("trades", "qty", "avg", "realized"),
    [
        ([("BUY", "2", "100")], "2", "100", "0"),
        ([("BUY", "2", "100"), ("BUY", "2", "110")], "4", "105", "0"),
        ([("BUY", "4", "100"), ("SELL", "1", "120")], "3", "100", "20"),
        ([("BUY", "2", "100"), ("SELL", "2", "90")], "0", "0", "-20"),
        ([("BUY", "2", "100"), ("SELL", "3", "110")], "-1", "110", "20"),
        ([("SELL", "2", "100"), ("BUY", "1", "80")], "-1", "100", "20"),
    ],
    ids=["open", "add", "partial-close", "close-at-loss", "flip", "short-cover"],
)
def test_average_cost_book(
    trades: list[tuple[str, str, str]], qty: str, avg: str, realized: str
) -> None:
    book = Book("BTC_USDT_PERP", PosSide.BOTH, D(1))
    for side, q, px in trades:
        book.apply(OrderSide(side), D(q), D(px), D(0))
    assert (book.qty, book.avg_px, book.realized) == (D(qty), D(avg), D(realized))


def test_fills_are_attributed_to_the_strategy_of_their_client_order_id() -> None:
    fills = [
        _fill(1, "a-1", "BUY", "2", "100", fee="0.5"),
        _fill(2, "b-1", "SELL", "1", "105", fee="0.25"),
        _fill(3, "a-2", "SELL", "2", "110", fee="0.5"),
        _fill(4, "stranger", "BUY", "9", "1"),
    ]
    books = attribute(fills, {"a-1": "A", "a-2": "A", "b-1": "B"}, {"BTC_USDT_PERP": D("0.1")})
    a = books[("A", "BTC_USDT_PERP", PosSide.BOTH)]
    b = books[("B", "BTC_USDT_PERP", PosSide.BOTH)]
    assert (a.qty, a.realized, a.fees, a.fills) == (D(0), D("2.0"), D("1.0"), 2)
    assert (b.qty, b.avg_px, b.unrealized(D(100))) == (D(-1), D(105), D("0.5"))
    assert len(books) == 2
