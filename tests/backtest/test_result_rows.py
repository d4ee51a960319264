"""Report rows built from what the journal and the exchange port return."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from botkit.backtest.result import FillRow, OrderRow, PositionRow
from botkit.exchange.models import Fill, Position
from botkit.journal.records import OrderBrief, OrderRecord, OrderState, Outcome


def record(**changes: object) -> OrderRecord:
    fields: dict[str, object] = dict(
        id=1, cycle_id=1, ts_ms=1_704_067_200_000, dry=False, strategy="grid", rule="buy_dip",
        slot=3, leg=0, cl_ord_id="gridbuy3", symbol="BTC_USDT_PERP", side="BUY", type="LIMIT",
        pos_side="BOTH", mgn_mode="CROSS", reduce_only=False, intent_px="60000.04",
        intent_sz="0.0105", px="60000.0", sz="0.010", notes=(), inputs={}, request=None,
        state=OrderState.FINAL, outcome=Outcome.ACCEPTED, ord_id="1", code=None, msg="",
        reasons=(), error="", resolved=False, attempts=1, sent_ms=None, outcome_ms=None,
    )  # fmt: skip
    fields.update(changes)
    return OrderRecord(**fields)  # type: ignore[arg-type]


def test_order_row_takes_the_price_and_size_that_were_sent() -> None:
    row = OrderRow.from_journal(record())
    expected = OrderRow(1_704_067_200_000, "grid", "buy_dip", "gridbuy3", "BTC_USDT_PERP", "BUY",
                        "LIMIT", Decimal("60000.0"), Decimal("0.010"), "accepted")  # fmt: skip
    assert row == expected


def test_refused_order_row_keeps_the_intended_values_and_reasons() -> None:
    row = OrderRow.from_journal(record(px=None, sz=None, outcome=Outcome.REJECTED_LOCAL,
                                       reasons=("size below minSz 0.01",)))  # fmt: skip
    assert (row.px, row.sz) == (Decimal("60000.04"), Decimal("0.0105"))
    assert row.outcome == "rejected_local"
    assert row.reasons == ("size below minSz 0.01",)


def test_rejected_order_row_has_code_and_message() -> None:
    row = OrderRow.from_journal(record(outcome=Outcome.REJECTED, code=10014, msg="price limit"))
    assert (row.outcome, row.code, row.msg) == ("rejected", "10014", "price limit")
    market = OrderRow.from_journal(record(type="MARKET", px=None, intent_px=None, outcome=None))
    assert (market.px, market.outcome) == (None, "unsettled")


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


def test_an_order_brief_makes_the_row_its_record_makes() -> None:
    """The backtest's result reads briefs (issue 20): the same rows as from full records."""
    names = [f.name for f in dataclasses.fields(OrderBrief)]
    for full in (
        record(),
        record(px=None, sz=None, outcome=Outcome.REJECTED_LOCAL, reasons=("too small",)),
        record(outcome=Outcome.REJECTED, code=10014, msg="", error="band"),
        record(type="MARKET", px=None, intent_px=None, outcome=None),
    ):
        brief = OrderBrief(**{n: getattr(full, n) for n in names})
        assert OrderRow.from_journal(brief) == OrderRow.from_journal(full)
