"""The report's order rows made a table at a time (the cells that repeat worked out once: the
rule's index, the reason, the size, the time's text) are the rows made one order at a time."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from botkit.backtest import report, report_page
from botkit.backtest.result import OrderRow

_DECIMALS = st.sampled_from(
    [Decimal("1"), Decimal("1.0"), Decimal("1E+1"), Decimal("10"), Decimal("0.500"),
     Decimal("0E-8"), Decimal("-0"), Decimal("60088.6"), Decimal("60088.60")]
)  # fmt: skip

_ORDERS = st.lists(
    st.builds(
        OrderRow,
        time_ms=st.sampled_from([1_704_070_440_000, 1_704_070_500_000, 1_704_070_500_250]),
        strategy=st.sampled_from(["a", "b", ""]),
        rule=st.sampled_from(["r", "s", ""]),
        cl_ord_id=st.sampled_from(["id1", "id2"]),
        symbol=st.just("BTC_USDT_PERP"),
        side=st.sampled_from(["BUY", "SELL"]),
        type=st.sampled_from(["LIMIT", "MARKET"]),
        px=st.none() | _DECIMALS,
        sz=_DECIMALS,
        outcome=st.sampled_from(["accepted", "rejected", "rejected_local"]),
        code=st.sampled_from(["", "200", "10018"]),
        msg=st.sampled_from(["", "Success", "too far"]),
        reasons=st.sampled_from([(), ("max_position: 30",), ("a", "b")]),
    ),
    max_size=30,
)


@given(orders=_ORDERS)
def test_the_page_order_rows_are_each_orders_cells(orders: list[OrderRow]) -> None:
    index = {report_page._label(s, r): i for i, (s, r) in enumerate(
        sorted({(s, r) for s in ("a", "b", "") for r in ("r", "s", "")})
    )}  # fmt: skip
    expected = [report_page._order_cells(o, index) for o in orders]
    assert report_page._order_rows(orders, index) == expected


@given(orders=_ORDERS)
def test_the_csv_order_rows_are_each_orders_row(orders: list[OrderRow]) -> None:
    assert list(report._order_rows(orders)) == [report._order_row(o) for o in orders]


def test_orders_of_one_time_with_other_reasons_and_sizes_keep_their_own_cells() -> None:
    def order(sz: str, code: str, reasons: tuple[str, ...], time_ms: int) -> OrderRow:
        return OrderRow(time_ms, "a", "r", "id", "BTC_USDT_PERP", "BUY", "LIMIT", None,
                        Decimal(sz), "rejected", code, "", reasons)  # fmt: skip

    orders = [
        order("1", "10018", (), 60_000),
        order("1.5", "", ("max_position: 30",), 60_000),
        order("1.0", "200", (), 120_000),
    ]
    rows = report_page._order_rows(orders, {"a/r": 0})
    assert [(r[6], r[8]) for r in rows] == [("1", "10018"), ("1.5", "max_position: 30"),
                                             ("1", "200")]  # fmt: skip
    times = [r[0] for r in report._order_rows(orders)]
    assert times == ["1970-01-01T00:01:00Z", "1970-01-01T00:01:00Z", "1970-01-01T00:02:00Z"]
