"""The backtest's result reads its orders as the journal's plain rows (``iter_order_cells``,
issue 20): the same :class:`OrderRow` of each order as from its full record."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from botkit.backtest.result import OrderRow, order_rows
from botkit.exchange.models import OrderType
from botkit.journal import Journal, NewOrder, OrderFilter, OrderOutcome, Outcome
from botkit.journal.records import OrderRecord
from tests.pipeline.helpers import ManualClock, intent


def _row_of(record: OrderRecord) -> OrderRow:
    """The row of a full journal record, written out plainly (the model the query's rows are
    checked against): the price and size sent, else the intended ones; the message, else the
    error."""
    px = record.px if record.px is not None else record.intent_px
    sz = record.sz if record.sz is not None else record.intent_sz
    return OrderRow(
        record.ts_ms, record.strategy, record.rule, record.cl_ord_id, record.symbol,
        record.side, record.type, Decimal(px) if px else None, Decimal(sz),
        record.outcome.value if record.outcome is not None else "unsettled",
        "" if record.code is None else str(record.code), record.msg or record.error,
        record.reasons,
    )  # fmt: skip


def _new(
    n: int,
    *,
    rule: str = "r1",
    type: OrderType = OrderType.LIMIT,
    px: str | None = "100",
    sent: tuple[Decimal | None, Decimal | None] | None = None,
    reasons: tuple[str, ...] = (),
    outcome: Outcome | None = None,
) -> NewOrder:
    i = intent(n, rule=rule, type=type, px=px)
    sent_px, sent_sz = sent if sent is not None else (i.px, i.sz)
    return NewOrder(i, sent_px, sent_sz, wire={"clOrdId": i.cl_ord_id}, reasons=reasons,
                    outcome=outcome)  # fmt: skip


@pytest.fixture
def journal() -> Iterator[Journal]:
    clock = ManualClock(1_000_000)
    with Journal("", clock=clock) as j:
        orders = [
            _new(0),
            _new(1, rule="r2", sent=(Decimal("101.50"), Decimal("2.000"))),
            _new(2, reasons=("px_missing: none", "sz 0"), outcome=Outcome.REJECTED_LOCAL),
            _new(3, type=OrderType.MARKET, px=None, sent=(None, None)),
            _new(4, rule="r2"),
            _new(5),
            _new(6, sent=(None, Decimal("3"))),
        ]
        for order in orders:
            j.add_orders(None, [order], dry=False)
            clock.advance(60_000)
        j.settle([OrderOutcome("s1-r1-0", Outcome.ACCEPTED, ord_id="7")])
        j.settle([OrderOutcome("s1-r2-1", Outcome.REJECTED, code=10014, msg="band", error="e")])
        j.settle([OrderOutcome("s1-r2-4", Outcome.REJECTED, code=10015, msg="", error="gone")])
        j.settle([OrderOutcome("s1-r1-5", Outcome.FAILED, error="timeout")])
        yield j


@pytest.mark.parametrize(
    "flt",
    [
        OrderFilter(include_dry=False),
        OrderFilter(),
        OrderFilter(rule="r2"),
        OrderFilter(limit=3),
        OrderFilter(outcome="unsettled"),
    ],
)
def test_the_rows_of_the_plain_rows_are_the_records_rows(
    journal: Journal, flt: OrderFilter
) -> None:
    expected = [_row_of(r) for r in journal.orders(flt)]
    assert list(order_rows(journal.iter_order_cells(flt))) == expected
    assert expected


def test_the_rows_hold_what_was_sent_else_what_was_meant(journal: Journal) -> None:
    rows = {r.cl_ord_id: r for r in order_rows(journal.iter_order_cells())}
    assert len(rows) == 7
    assert (str(rows["s1-r2-1"].px), str(rows["s1-r2-1"].sz)) == ("101.50", "2.000")
    assert (rows["s1-r2-1"].outcome, rows["s1-r2-1"].code, rows["s1-r2-1"].msg) == (
        "rejected", "10014", "band"
    )  # fmt: skip
    assert (rows["s1-r2-4"].code, rows["s1-r2-4"].msg) == ("10015", "gone")  # no message: error
    assert rows["s1-r1-2"].reasons == ("px_missing: none", "sz 0")
    assert rows["s1-r1-2"].outcome == "rejected_local"
    assert rows["s1-r1-3"].px is None
    assert rows["s1-r1-3"].outcome == "unsettled"
    assert (str(rows["s1-r1-6"].px), str(rows["s1-r1-6"].sz)) == ("100", "3")  # px as meant
    assert rows["s1-r1-0"].reasons == ()
    assert rows["s1-r1-0"].code == ""
