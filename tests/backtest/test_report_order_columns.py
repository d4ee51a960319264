"""The order tables made a column at a time (the page's, packed; the CSV's rows) are the ones
made one order at a time (``report_page._order_rows`` and ``report._order_rows``, themselves
compared with each order's cells in ``test_report_order_rows.py``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from botkit.backtest import report, report_page
from botkit.backtest.result import OrderRow

_DECIMALS = st.sampled_from(
    [Decimal("1"), Decimal("1.0"), Decimal("1E+1"), Decimal("10"), Decimal("0.500"),
     Decimal("0E-8"), Decimal("-0"), Decimal("60088.6"), Decimal("60088.60"), Decimal("NaN")]
)  # fmt: skip

_ORDERS = st.lists(
    st.builds(
        OrderRow,
        time_ms=st.sampled_from([1_704_070_440_000, 1_704_070_500_000, 1_704_070_500_250, 0]),
        strategy=st.sampled_from(["a", "b", ""]),
        rule=st.sampled_from(["r", "s", ""]),
        cl_ord_id=st.sampled_from(["id1", "id2", "id3"]),
        symbol=st.just("BTC_USDT_PERP"),
        side=st.sampled_from(["BUY", "SELL"]),
        type=st.sampled_from(["LIMIT", "MARKET", "POST_ONLY"]),
        px=st.none() | _DECIMALS,
        sz=_DECIMALS,
        outcome=st.sampled_from(["accepted", "rejected", "rejected_local", "unsettled"]),
        code=st.sampled_from(["", "200", "10018"]),
        msg=st.sampled_from(["", "Success", "too far"]),
        reasons=st.sampled_from([(), ("max_position: 30",), ("a", "b")]),
    ),
    max_size=40,
)
_INDEX = {
    report_page._label(s, r): i
    for i, (s, r) in enumerate(sorted({(s, r) for s in ("a", "b", "") for r in ("r", "s", "")}))
}


@given(orders=_ORDERS)
def test_the_order_columns_are_the_packed_rows(orders: list[OrderRow]) -> None:
    packed = report_page._pack(report_page._order_rows(orders, _INDEX), "tvvkkvkkk")
    assert report_page._order_columns(report_page.order_fields(orders), _INDEX) == packed


def test_the_columns_keep_each_orders_own_cells() -> None:
    def order(time_ms: int, rule: str, sz: str, code: str, reasons: tuple[str, ...]) -> OrderRow:
        px = Decimal("60088.60")
        return OrderRow(time_ms, "a", rule, f"id{time_ms}", "BTC_USDT_PERP", "BUY", "LIMIT", px,
                        Decimal(sz), "rejected", code, "", reasons)  # fmt: skip

    orders = [
        order(60_000, "s", "1.0", "10018", ()),
        order(60_000, "r", "1.5", "", ("max_position: 30",)),
        order(180_000, "s", "1", "200", ()),
    ]
    fields = report_page.order_fields(orders)
    columns = report_page._order_columns(fields, {"a/r": 0, "a/s": 1})["c"]
    assert columns[0] == [60_000, 0, 120_000]  # each time's step from the one before
    assert columns[1] == [1, 0, 1]
    assert columns[2] == ["id60000", "id60000", "id180000"]
    assert columns[5] == ["60088.6"] * 3
    assert columns[6] == {"d": ["1", "1.5"], "i": [0, 1, 0]}  # equal sizes print alike
    assert columns[8] == {"d": ["10018", "200", "max_position: 30"], "i": [0, 2, 1]}


def _written(table: Sequence[Sequence[object]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(table)
    return out.getvalue()


@given(orders=_ORDERS)
def test_the_csv_order_table_writes_each_orders_row(orders: list[OrderRow]) -> None:
    table = list(report._order_table(report_page.order_fields(orders)))
    assert _written(table) == _written(list(report._order_rows(orders)))
    assert all(type(cell) is str for row in table for cell in row)  # each as the writer writes it


_CELLS = st.text(alphabet=st.sampled_from(["a", "1", ",", '"', "\n", "\r", " ", "é"]), max_size=4)


@given(
    table=st.integers(min_value=1, max_value=4).flatmap(
        lambda width: st.lists(
            st.lists(_CELLS | st.none() | st.integers(), min_size=width, max_size=width),
            max_size=5,
        )
    )
)
def test_a_joined_csv_is_what_the_writer_writes_or_none(table: list[list[object]]) -> None:
    text = report._plain_csv(table)
    assert text is None or text == _written(table)


def test_a_plain_table_is_joined_and_one_that_needs_quotes_is_left_to_the_writer() -> None:
    plain = [("time", "msg"), ("1", "Success"), ("2", "")]
    assert report._plain_csv(plain) == "time,msg\n1,Success\n2,\n"
    for cell in ("a,b", 'say "x"', "two\nlines", "a\rb"):
        assert report._plain_csv([("time", "msg"), ("1", cell)]) is None
    assert report._plain_csv([("a",), ("",)]) is None  # a lone empty cell is quoted
    assert report._plain_csv([("a", "b"), ("c",)]) is None
    assert report._plain_csv([("a", "b"), (1, "c")]) is None


def test_the_csv_sizes_keep_their_own_texts() -> None:
    """Sizes of equal value with other exponents are other texts in the CSV (exact text)."""

    def order(sz: Decimal, time_ms: int) -> OrderRow:
        return OrderRow(time_ms, "a", "r", "id", "BTC_USDT_PERP", "BUY", "LIMIT", None, sz,
                        "accepted", "", "", ())  # fmt: skip

    one = Decimal("1")
    orders = [order(one, 60_000), order(Decimal("1.00"), 60_000), order(one, 120_000)]
    rows = list(report._order_table(report_page.order_fields(orders)))
    assert [(r[0], r[9]) for r in rows] == [
        ("1970-01-01T00:01:00Z", "1"), ("1970-01-01T00:01:00Z", "1.00"),
        ("1970-01-01T00:02:00Z", "1"),
    ]  # fmt: skip


@given(values=st.lists(st.none() | st.decimals(allow_nan=True, allow_infinity=True)))
def test_the_plain_texts_from_the_exact_texts_are_each_values_plain_text(
    values: list[Decimal | None],
) -> None:
    texts = ["" if v is None else format(v, "f") for v in values]
    assert report_page._plain_texts(texts) == [report_page._dec(v) for v in values]


def test_the_plain_texts_of_zeros_and_exponents() -> None:
    values = [Decimal("-0.00"), Decimal("0E+2"), Decimal("1.50E+3"), Decimal("60088.60")]
    texts = [format(v, "f") for v in values]
    assert report_page._plain_texts([*texts, ""]) == ["0", "0", "1500", "60088.6", ""]
