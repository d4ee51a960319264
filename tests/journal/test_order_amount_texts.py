"""An order's amounts are made text once (``str``) when its rows are built: each column takes the
plain form ``format(x, "f")`` would write, its event line the text an f-string writes. Compared
with those two formulas over amounts of every shape (exponents either way, zeros, signs)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.journal import NewOrder, Outcome, writes
from tests.pipeline.helpers import intent

_COLUMNS = {"intent_px": 14, "intent_sz": 15, "px": 16, "sz": 17}

amounts = st.builds(
    Decimal,
    st.one_of(
        st.decimals(allow_nan=False, allow_infinity=False, places=None).map(str),
        st.sampled_from(["1E+2", "1e+5", "0E-7", "-0", "-0.00", "1E-7", "12.5E3", "59400.000"]),
    ),
)


def _plain(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


@settings(max_examples=300, deadline=None)
@given(
    intent_px=st.none() | amounts,
    intent_sz=amounts,
    px=st.none() | amounts,
    sz=st.none() | amounts,
    outcome=st.sampled_from([None, Outcome.REJECTED_LOCAL, Outcome.DRY_RUN]),
)
def test_each_amount_column_is_its_plain_form_and_the_line_its_text(
    intent_px: Decimal | None,
    intent_sz: Decimal,
    px: Decimal | None,
    sz: Decimal | None,
    outcome: Outcome | None,
) -> None:
    i = replace(intent(0), px=intent_px, sz=intent_sz)
    order = NewOrder(i, px, sz, reasons=("too big",), outcome=outcome)
    rows, events = writes.order_rows(7, [order], dry=False, now=1)
    (row,) = rows
    values = {"intent_px": intent_px, "intent_sz": intent_sz, "px": px, "sz": sz}
    assert {name: row[at] for name, at in _COLUMNS.items()} == {
        name: _plain(value) for name, value in values.items()
    }
    what = f"BUY {intent_sz if sz is None else sz} {i.symbol} LIMIT"
    if px is not None:
        what += f" @ {px}"
    assert what in events[0][6]


def test_an_amount_with_an_exponent_is_written_plain() -> None:
    """``str`` writes these with an exponent: the columns never do (the line keeps ``str``)."""
    i = intent(0, px="1E+2", sz="1E-7")
    rows, events = writes.order_rows(None, [NewOrder(i, i.px, i.sz)], dry=False, now=1)
    assert [rows[0][at] for at in _COLUMNS.values()] == ["100", "0.0000001", "100", "0.0000001"]
    assert events[0][6] == "intent BUY 1E-7 BTC_USDT_PERP LIMIT @ 1E+2"
