"""The simulator's placement of a batch with what its orders share looked up once (issue 20):
the instrument, its status, its mark and book, the position mode per batch and symbol; the
book's bids and asks read as they stand; a rung that sorts last on its side appended without a
search; an amount's text found plain and on its step checked once. Each must answer as the
plain way does: a batch as its orders placed one by one, a book in price then time priority,
a text on one step not taken for on another."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import MarginMode, OrderRequest, OrderSide, OrderType, PosSide
from botkit.sim import codes
from botkit.sim.book import SimOrder
from botkit.sim.codes import SimError
from botkit.sim.orders import OrderInput, text_on_step
from botkit.sim.port import SimPort
from tests.sim.conftest import BTC, Sim, sim_config
from tests.sim.test_read_caches import reference_balance

_ORDER = st.fixed_dictionaries(
    {
        "side": st.sampled_from(["BUY", "SELL"]),
        "type": st.sampled_from(["LIMIT", "MARKET", "LIMIT_MAKER"]),
        "sz": st.sampled_from(["1", "2", "5", "40"]),
        "ticks": st.integers(-40, 40),
        "mgn": st.sampled_from(["CROSS", "CROSS", "CROSS", "ISOLATED"]),
        "reduce": st.booleans(),
        "cl": st.sampled_from(["a", "b", "c", "d", None]),
        "symbol": st.sampled_from([BTC, BTC, BTC, "NOPE_USDT_PERP"]),
    }
)


def _input(spec: dict[str, object], mark: Decimal) -> OrderInput:
    ticks = int(str(spec["ticks"]))
    px = None if spec["type"] == "MARKET" else mark + ticks * 5
    cl = spec["cl"]
    return OrderInput(
        symbol=str(spec["symbol"]),
        side=OrderSide(str(spec["side"])),
        type=OrderType(str(spec["type"])),
        sz=Decimal(str(spec["sz"])),
        px=px,
        mgn_mode=MarginMode(str(spec["mgn"])),
        pos_side=PosSide.BOTH,
        cl_ord_id=None if cl is None else str(cl),
        reduce_only=bool(spec["reduce"]),
        sz_text=str(spec["sz"]),
        px_text=None if px is None else str(px),
    )


def _state(sim: Sim) -> tuple[object, ...]:
    e = sim.engine
    b = e.balance()
    book = e.matcher.books[BTC]
    return (
        repr((b.eq, b.im, b.avail, b.upl)),
        [(p.position.qty, p.position.avg_px) for p in e.positions()],
        [o.ord_id for o in book.bids],
        [o.ord_id for o in book.asks],
        book.best_bid,
        book.best_ask,
    )


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.lists(_ORDER, min_size=1, max_size=10), min_size=1, max_size=4))
def test_a_batch_answers_as_its_orders_placed_one_by_one(
    batches: list[list[dict[str, object]]],
) -> None:
    """Duplicates within the batch, margin the earlier orders took, a position an earlier
    MARKET order opened for a later reduce-only one, an unknown symbol, a mark moved between
    batches: the batch's answers and the account after it are those of ``place`` per order."""
    together, alone = Sim(sim_config()), Sim(sim_config())
    for n, batch in enumerate(batches):
        mark = together.engine.mark(BTC)
        items = [_input(spec, mark) for spec in batch]
        got = [(r.code, r.msg, r.cl_ord_id) for r in together.engine.place_batch(items)]
        want = []
        for item in items:
            try:
                order = alone.engine.place(item)
            except SimError as exc:
                want.append((exc.code, exc.msg, item.cl_ord_id or ""))
            else:
                want.append((codes.SUCCESS, "Success", order.cl_ord_id))
        assert [g[:2] for g in got] == [w[:2] for w in want]
        assert _state(together) == _state(alone)
        moved = str(mark + 35 * (n + 1))  # the next batch meets a new mark
        together.mark(moved)
        alone.mark(moved)


def test_a_batch_meets_the_mark_of_now_not_of_the_last_batch() -> None:
    """A price inside the band only around the moved mark is accepted by the next batch."""
    sim = Sim(sim_config())
    port = SimPort(sim.engine)
    mark = sim.engine.mark(BTC)
    rung = OrderRequest(symbol=BTC, side="BUY", type="LIMIT", sz=Decimal(1), px=mark - 100)
    assert all(r.accepted for r in port.place_orders([rung]))
    moved = mark * Decimal("1.5")
    sim.mark(str(moved))
    far = OrderRequest(symbol=BTC, side="BUY", type="LIMIT", sz=Decimal(1), px=moved - 100)
    (result,) = port.place_orders([far])
    assert result.accepted, result


def test_an_other_margin_mode_resting_on_the_ask_side_refuses_a_new_order() -> None:
    """The account rules read the bids and the asks (the asks after the bids)."""
    sim = Sim(sim_config())
    mark = sim.engine.mark(BTC)
    assert (
        sim.place(side="SELL", type="LIMIT", sz="1", px=str(mark + 50), mgnMode="ISOLATED")["code"]
        == codes.SUCCESS
    )
    refused = sim.place(side="BUY", type="LIMIT", sz="1", px=str(mark - 50), mgnMode="CROSS")
    assert refused["code"] == codes.BAD_PARAM
    assert "differs from the open ISOLATED orders" in refused["msg"]


def _key(order: SimOrder) -> tuple[Decimal, int]:
    return (-order.price, order.ord_id) if order.is_buy else (order.price, order.ord_id)


@settings(max_examples=80, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["BUY", "SELL"]), st.integers(-6, 6), st.booleans()),
        min_size=1,
        max_size=30,
    )
)
def test_the_book_stays_in_price_then_time_priority(steps: list[tuple[str, int, bool]]) -> None:
    """Orders at prices above, below and equal to the last on their side, some cancelled in
    between: each side is the sorted order of its keys after every step."""
    sim = Sim(sim_config())
    mark = sim.engine.mark(BTC)
    for n, (side, ticks, cancel) in enumerate(steps):
        far = -2000 if side == "BUY" else 2000  # never crosses the mark
        px = mark + far + 5 * ticks
        answer = sim.place(side=side, type="LIMIT", sz="1", px=str(px), clOrdId=f"o{n}")
        assert answer["code"] == codes.SUCCESS, answer
        book = sim.engine.matcher.books[BTC]
        if cancel and len(book) > 1:
            victim = (book.bids or book.asks)[len(book.bids or book.asks) // 2]
            sim.engine.cancel(BTC, ord_id=str(victim.ord_id))
        assert book.bids == sorted(book.bids, key=_key)
        assert book.asks == sorted(book.asks, key=_key)
        assert book.best_bid == (book.bids[0].px if book.bids else book.best_bid)
        assert book.best_ask == (book.asks[0].px if book.asks else book.best_ask)


def test_a_text_on_one_step_is_not_taken_for_on_another() -> None:
    """The texts found on their step are kept per step: ``0.5`` on a tick of 0.1 does not make
    ``0.5`` on a lot of 1 pass, nor the other way round."""
    assert text_on_step("px", "0.5", Decimal("0.1"), "tSz") is None
    refused = text_on_step("sz", "0.5", Decimal(1), "lotSz")
    assert refused is not None
    assert "has 1 decimal(s)" in refused[1]
    assert text_on_step("px", "0.5", Decimal("0.1"), "tSz") is None  # asked again: kept
    assert text_on_step("sz", "0.5", Decimal(1), "lotSz") == refused


@given(texts=st.lists(st.text(alphabet="0123456789.", min_size=1, max_size=6), max_size=40))
@settings(max_examples=30, deadline=None)
def test_a_text_asked_again_gets_the_same_answer(texts: list[str]) -> None:
    for step in (Decimal(1), Decimal("0.01")):
        first = [text_on_step("px", t, step, "tSz") for t in texts]
        assert [text_on_step("px", t, step, "tSz") for t in texts] == first


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_equity_at_of_one_position_is_equity_after_each_mark(side: str) -> None:
    """The one leg's upl at each mark (its own mark object too, a mark twice, a mark at its
    entry): the equity a read gives after moving the mark there, value and exponent."""
    sim = Sim(sim_config())
    entry = sim.engine.mark(BTC)
    assert sim.place(side=side, type="MARKET", sz="3")["code"] == codes.SUCCESS
    sim.mark(str(entry + 7))
    sim.engine.positions()  # the leg's figures at this very mark object
    own = sim.engine.prices[BTC].mark
    marks = [own, Decimal(entry), entry - Decimal("12.5"), own, Decimal(str(entry + 7))]
    got = sim.engine.equity_at(BTC, marks)
    for mark, equity in zip(marks, got, strict=True):
        sim.mark(str(mark))
        assert repr(equity) == repr(sim.engine.equity())
        assert repr(equity) == repr(reference_balance(sim.engine).eq)
