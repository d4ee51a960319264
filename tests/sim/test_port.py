"""SimPort: the in-process ExchangePort gives the same answers as the wire, with typed models."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.errors import ExchangeRejected, NotFoundError, RequestValidationError
from botkit.exchange.models import (
    Balance,
    MarginMode,
    Order,
    OrderHistoryState,
    OrderRequest,
    OrderSide,
    OrderType,
    PlaceResult,
    Position,
    PositionMode,
    PosSide,
)
from botkit.exchange.port import ExchangePort
from botkit.exchange.queries import FillQuery, OrderQuery, PositionQuery
from botkit.sim.port import SimPort, _order_input
from tests.sim.conftest import BTC, Sim


def req(side: str = "BUY", type: str = "MARKET", sz: str = "1", **kw: object) -> OrderRequest:
    return OrderRequest.model_validate({"symbol": BTC, "side": side, "type": type, "sz": sz, **kw})


@pytest.fixture
def port(sim: Sim) -> SimPort:
    return SimPort(sim.engine)


def test_sim_port_is_an_exchange_port(port: SimPort) -> None:
    assert isinstance(port, ExchangePort)


def test_port_models_equal_the_wire_answers_validated(sim: Sim, port: SimPort) -> None:
    port.place_orders([req(clOrdId="m1"), req("SELL", "LIMIT", px="60500", clOrdId="l1")])
    sim.clock.advance(60_000)
    sim.mark("60600")
    assert port.balance() == Balance.model_validate(sim.balance())
    assert port.open_positions() == [Position.model_validate(p) for p in sim.positions()]
    wire_orders = sim.get("/v3/trade/order/history")
    assert port.order_history() == [Order.model_validate(o) for o in wire_orders]
    assert port.order_history()[0].state is OrderHistoryState.FILLED
    assert [f.id for f in port.fills()] == [f["id"] for f in sim.get("/v3/trade/order/trades")]
    assert port.tickers(BTC)[0].mPx == Decimal("60600")
    assert port.instruments(BTC)[0].tSz == Decimal("0.1")
    assert port.limit_price(BTC).buyLmt == Decimal("63630.0")
    assert [c.close for c in port.candles(BTC, "MINUTE_1")] == [Decimal(60000), Decimal(60600)]
    assert port.server_time() == sim.clock.now_ms()


def test_placement_results_equal_the_wire_answers_validated(sim: Sim, port: SimPort) -> None:
    """Each result is the model the wire's answer validates to: every field, of its type, set
    (accepted, refused by a rule, a duplicate id)."""
    wire = Sim(sim.engine.config)
    orders = [
        req(clOrdId="a1"),
        req("SELL", "LIMIT", px="60500", clOrdId="a2"),
        req("BUY", "LIMIT", px="1", clOrdId="a3"),  # outside the band: refused
        req(clOrdId="a1"),  # the same id again: refused
    ]
    got = port.place_orders(orders)
    answers = wire.post("/v3/trade/orders", [o.to_wire() for o in orders])
    want = [PlaceResult.model_validate(a) for a in answers]
    assert [r.code for r in got] == [200, 200, want[2].code, want[3].code]
    assert want[2].code != 200
    assert want[3].code != 200
    for mine, theirs in zip(got, want, strict=True):
        assert type(mine) is PlaceResult
        assert mine.model_dump() == theirs.model_dump() | {"ordId": mine.ordId}
        assert mine.model_fields_set == {"clOrdId", "ordId", "code", "msg"}
        assert [type(v) for v in mine.model_dump().values()] == [str, str, int, str]


def test_port_place_cancel_and_open_orders(port: SimPort) -> None:
    results = port.place_orders(
        [req("BUY", "LIMIT", px="59000", clOrdId="a"), req("BUY", "LIMIT", px="70000")]
    )
    assert [(r.clOrdId, r.code) for r in results] == [("a", 200), ("", 10014)]
    (opened,) = port.open_orders(BTC)
    assert (opened.clOrdId, opened.state, opened.px) == ("a", "NEW", Decimal(59000))
    assert port.open_orders(BTC, side=OrderSide.SELL) == []
    cancelled = port.cancel_order(BTC, cl_ord_id="a")
    assert (cancelled.ordId, cancelled.code) == (opened.ordId, 200)
    assert port.open_orders() == []
    with pytest.raises(NotFoundError) as info:
        port.cancel_order(BTC, cl_ord_id="zzz")
    assert info.value.code == 11008
    assert "clOrdId zzz" in str(info.value)
    with pytest.raises(ExchangeRejected) as rejected:
        port.cancel_order(BTC, cl_ord_id="a")
    assert rejected.value.code == 11004


def test_port_batch_cancel_and_cancel_all(port: SimPort) -> None:
    port.place_orders([req("BUY", "LIMIT", px="59000", clOrdId=f"c{i}") for i in range(4)])
    results = port.cancel_orders(BTC, cl_ord_ids=["c0", "nope"])
    assert [r.code for r in results] == [200, 11008]
    assert len(port.cancel_all(BTC, OrderSide.BUY)) == 3
    assert port.open_orders() == []


def test_port_refuses_caller_mistakes_before_sending(port: SimPort) -> None:
    with pytest.raises(RequestValidationError):
        port.place_orders([req()] * 11)
    with pytest.raises(RequestValidationError):
        port.place_orders([])
    with pytest.raises(RequestValidationError, match="limit must be between 1 and 100"):
        port.order_history(OrderQuery(limit=101))
    with pytest.raises(RequestValidationError, match="after"):
        port.fills(FillQuery(start=2, end=1))
    with pytest.raises(RequestValidationError):
        port.cancel_orders(BTC, cl_ord_ids=[str(i) for i in range(11)])


def test_port_position_mode_and_leverage(port: SimPort) -> None:
    assert port.position_mode() is PositionMode.ONE_WAY
    port.set_position_mode(PositionMode.HEDGE)
    assert port.position_mode() is PositionMode.HEDGE
    port.set_leverage(BTC, 5, mgn_mode=MarginMode.CROSS, pos_side=PosSide.LONG)
    results = port.place_orders([req(mgnMode="CROSS", posSide="LONG")])
    assert results[0].code == 200
    (pos,) = port.open_positions(BTC)
    assert (pos.lever, pos.im) == (Decimal(5), Decimal("12.00000000"))
    with pytest.raises(ExchangeRejected):
        port.set_position_mode(PositionMode.ONE_WAY)
    with pytest.raises(ExchangeRejected, match="lever must be a whole number"):
        port.set_leverage(BTC, 500, mgn_mode=MarginMode.CROSS, pos_side=PosSide.LONG)


def test_port_history_paging_and_position_history(sim: Sim, port: SimPort) -> None:
    for i in range(6):
        port.place_orders([req("BUY" if i % 2 == 0 else "SELL", clOrdId=f"p{i}")])
        sim.clock.advance(1000)
    page = port.order_history(OrderQuery(limit=4))
    rest = port.order_history(OrderQuery(limit=4, from_id=page[-1].ordId))
    assert [o.clOrdId for o in page + rest] == [f"p{i}" for i in range(5, -1, -1)]
    assert len(port.position_history(PositionQuery(mgn_mode=MarginMode.CROSS))) == 3
    assert port.order_history(OrderQuery(type=OrderType.LIMIT)) == []


def test_port_unknown_symbol_is_rejected(port: SimPort) -> None:
    with pytest.raises(ExchangeRejected) as info:
        port.tickers("NOPE_USDT_PERP")
    assert info.value.code == 10001
    (result,) = port.place_orders([req(symbol="NOPE_USDT_PERP")])
    assert result.code == 10001


@pytest.mark.parametrize(
    ("sz", "px"),
    [("1", "60000"), ("0.50", "59999.90"), ("1E+1", "6E+4"), ("2.000", None), ("3", "0.1E+5")],
)
def test_placed_orders_reach_the_engine_with_the_texts_the_wire_sends(
    sim: Sim, sz: str, px: str | None
) -> None:
    """The port hands the engine the size and price texts ``OrderRequest.to_wire`` sends (the
    strict-text checks read them), without building the wire body a second time (issue 20)."""
    port = SimPort(sim.engine)
    seen: list[Any] = []
    place_batch = sim.engine.place_batch

    def spy(items: Any) -> Any:
        seen.extend(items)
        return place_batch(items)

    sim.engine.place_batch = spy  # type: ignore[method-assign]
    fields = {"type": "LIMIT", "px": px} if px is not None else {"type": "MARKET"}
    request = OrderRequest.model_validate({"symbol": BTC, "side": "BUY", "sz": sz, **fields})
    port.place_orders([request])
    wire = request.to_wire()
    assert [(i.sz_text, i.px_text) for i in seen] == [(wire["sz"], wire.get("px"))]


@settings(max_examples=80, deadline=None)
@given(
    sz=st.decimals(min_value=Decimal("0.001"), max_value=Decimal("1e6"), places=3),
    px=st.none() | st.decimals(min_value=Decimal("0.1"), max_value=Decimal("1e7"), places=2),
    built=st.booleans(),
)
def test_the_engine_is_handed_the_amounts_texts_the_client_would_send(
    sz: Decimal, px: Decimal | None, built: bool
) -> None:
    """The port hands the engine the texts of the order's wire body: ``sz_text`` and
    ``px_text``, whether the body was built before (the executor's row) or not."""
    order = req("BUY", "MARKET" if px is None else "LIMIT", sz=str(sz), px=px, clOrdId="t1")
    if built:
        order.to_wire()
    (item,) = [_order_input(order)]
    assert (item.sz_text, item.px_text) == (order.sz_text, order.px_text)
    assert (item.sz, item.px, item.cl_ord_id) == (order.sz, order.px, order.clOrdId)
    assert (item.side, item.type, item.mgn_mode, item.pos_side) == (
        order.side, order.type, order.mgnMode, order.posSide,
    )  # fmt: skip
    assert (item.reduce_only, item.tif, item.stp) == (
        order.reduceOnly, order.timeInForce, order.stpMode,
    )  # fmt: skip
