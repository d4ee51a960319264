"""Report rows built from what the journal and the exchange port return."""

from __future__ import annotations

from decimal import Decimal

from botkit.backtest.result import FillRow, PositionRow
from botkit.exchange.models import Fill, Position


def test_fill_row_from_an_execution() -> None:
    fill = Fill.model_validate(
        {
            "id": "9",
            "symbol": "BTC_USDT_PERP",
            "clOrdId": "gridbuy3",
            "side": "BUY",
            "role": "MAKER",
            "px": "60000.0",
            "qty": "0.010",
            "feeAmt": "0.12",
            "cTime": "1704067215000",
        }
    )
    expected = FillRow(1_704_067_215_000, "gridbuy3", "BUY", Decimal("60000.0"),
                       Decimal("0.010"), Decimal("0.12"), "maker", "BTC_USDT_PERP")  # fmt: skip
    assert FillRow.from_fill(fill) == expected


def test_position_row_from_an_open_position() -> None:
    position = Position.model_validate(
        {
            "symbol": "BTC_USDT_PERP",
            "posSide": "BOTH",
            "qty": "-0.02",
            "openAvgPx": "61000",
            "upl": "-3.5",
        }
    )
    assert PositionRow.from_position(position) == PositionRow(
        "BTC_USDT_PERP", "BOTH", Decimal("-0.02"), Decimal(61000), Decimal("-3.5")
    )
