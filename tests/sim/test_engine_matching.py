"""Matching: MARKET at the mark, resting LIMIT orders filled when the mark crosses, TIF rules."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from botkit.sim import load_sim_config
from tests.sim.conftest import TST, Sim, tst_instrument


def fills_of(sim: Sim, ord_id: str) -> list[tuple[str, str, str]]:
    rows = sim.get("/v3/trade/order/trades", ordId=ord_id, limit="100")
    return [(f["px"], f["qty"], f["role"]) for f in reversed(rows)]


def test_market_order_fills_at_once_at_the_mark_as_taker(tst: Sim) -> None:
    tst.mark("101.5", TST)
    placed = tst.place(symbol=TST, side="BUY", type="MARKET", sz="4")
    order = tst.order(placed["ordId"])
    assert (order["state"], order["avgPx"], order["execQty"]) == ("FILLED", "101.50000000", "4")
    assert fills_of(tst, placed["ordId"]) == [("101.5", "4", "TAKER")]
    # taker fee 0.0006 of 4 × 1 × 101.5 = 406
    assert order["feeAmt"] == "0.24360000"


@pytest.mark.parametrize(
    ("side", "px", "marks", "filled_at"),
    [
        ("BUY", "95", ["96", "95.5"], None),  # not reached
        ("BUY", "95", ["96", "95"], "95"),  # touches: fills at its price
        ("BUY", "95", ["96", "93"], "95"),  # gaps through: still at its price (maker)
        ("SELL", "105", ["104", "104.5"], None),
        ("SELL", "105", ["104", "105"], "105"),
        ("SELL", "105", ["104", "108"], "105"),
    ],
)
def test_resting_limit_fills_when_the_mark_crosses(
    tst: Sim, side: str, px: str, marks: list[str], filled_at: str | None
) -> None:
    placed = tst.place(symbol=TST, side=side, type="LIMIT", px=px, sz="4")
    assert tst.order(placed["ordId"])["state"] == "NEW"
    for mark in marks:
        tst.mark(mark, TST)
    order = tst.order(placed["ordId"])
    if filled_at is None:
        assert order["state"] == "NEW"
        assert fills_of(tst, placed["ordId"]) == []
    else:
        assert order["state"] == "FILLED"
        assert fills_of(tst, placed["ordId"]) == [(filled_at, "4", "MAKER")]
        # maker fee 0.0002 of 4 × px
        assert Decimal(order["feeAmt"]) == Decimal(4) * Decimal(px) * Decimal("0.0002")


def test_limit_crossing_on_arrival_fills_at_the_mark_as_taker(tst: Sim) -> None:
    placed = tst.place(symbol=TST, side="BUY", type="LIMIT", px="105", sz="4")
    assert fills_of(tst, placed["ordId"]) == [("100", "4", "TAKER")]
    assert tst.order(placed["ordId"])["state"] == "FILLED"


def test_limit_maker_that_would_take_is_accepted_then_cancelled(tst: Sim) -> None:
    placed = tst.place(symbol=TST, side="SELL", type="LIMIT_MAKER", px="99", sz="4")
    assert placed["code"] == 200
    order = tst.order(placed["ordId"])
    assert (order["state"], order["cancelReason"]) == (
        "CANCELED",
        "LIMIT_MAKER_ORDER_INCORRECT_PRICE_CONDITION",
    )
    (hist,) = tst.get("/v3/trade/order/history")
    assert hist["ordId"] == placed["ordId"]
    assert tst.positions() == []


def test_limit_maker_that_rests_fills_as_maker(tst: Sim) -> None:
    placed = tst.place(symbol=TST, side="SELL", type="LIMIT_MAKER", px="101", sz="4")
    tst.mark("101", TST)
    assert fills_of(tst, placed["ordId"]) == [("101", "4", "MAKER")]


@pytest.mark.parametrize(
    ("tif", "px", "state", "reason", "filled"),
    [
        ("IOC", "105", "FILLED", "", "4"),
        ("IOC", "95", "CANCELED", "LIMIT_MATCH_IOC_OR_FOK_ORDER_PRICE_CANNOT_MATCH", "0"),
        ("FOK", "105", "FILLED", "", "4"),
        ("FOK", "95", "CANCELED", "LIMIT_MATCH_IOC_OR_FOK_ORDER_PRICE_CANNOT_MATCH", "0"),
        ("GTC", "95", "NEW", "", "0"),
    ],
)
def test_time_in_force_on_arrival(
    tst: Sim, tif: str, px: str, state: str, reason: str, filled: str
) -> None:
    placed = tst.place(symbol=TST, side="BUY", type="LIMIT", px=px, sz="4", timeInForce=tif)
    order = tst.order(placed["ordId"])
    assert (order["state"], order["cancelReason"], order["execQty"]) == (state, reason, filled)
    opens = [o["ordId"] for o in tst.get("/v3/trade/order/opens")]
    assert (placed["ordId"] in opens) is (state == "NEW")


def depth_sim(make_sim: Callable[..., Sim], depth: str) -> Sim:
    base = load_sim_config(None)
    return make_sim(
        instruments=[base.instruments[0], tst_instrument()],
        prices__depth_per_fill=Decimal(depth),
    )


def test_depth_gives_partial_fills_per_price_event(make_sim: Callable[..., Sim]) -> None:
    sim = depth_sim(make_sim, "4")
    placed = sim.place(symbol=TST, side="BUY", type="LIMIT", px="95", sz="10")
    sim.mark("95", TST)
    (opened,) = sim.get("/v3/trade/order/opens")
    assert (opened["state"], opened["execQty"]) == ("PARTIALLY_FILLED", "4")
    sim.mark("94.5", TST)
    sim.mark("96", TST)  # not crossing: nothing
    sim.mark("95", TST)
    assert sim.order(placed["ordId"])["state"] == "FILLED"
    assert fills_of(sim, placed["ordId"]) == [
        ("95", "4", "MAKER"),
        ("95", "4", "MAKER"),
        ("95", "2", "MAKER"),
    ]


def test_depth_cancels_the_rest_of_market_ioc_and_fok(make_sim: Callable[..., Sim]) -> None:
    sim = depth_sim(make_sim, "4")
    market = sim.order(sim.place(symbol=TST, side="BUY", type="MARKET", sz="10")["ordId"])
    assert (market["state"], market["execQty"], market["cancelReason"]) == (
        "PARTIALLY_CANCELED",
        "4",
        "MARKET_ORDER_NO_OTHER_SIDE_ORDER",
    )
    ioc = sim.order(
        sim.place(symbol=TST, side="BUY", type="LIMIT", px="101", sz="10", timeInForce="IOC")[
            "ordId"
        ]
    )
    assert (ioc["state"], ioc["execQty"], ioc["cancelReason"]) == (
        "PARTIALLY_CANCELED",
        "4",
        "LIMIT_MATCH_IOC_ORDER_CANNOT_FILLED",
    )
    fok = sim.order(
        sim.place(symbol=TST, side="BUY", type="LIMIT", px="101", sz="10", timeInForce="FOK")[
            "ordId"
        ]
    )
    assert (fok["state"], fok["execQty"], fok["cancelReason"]) == (
        "CANCELED",
        "0",
        "LIMIT_MATCH_FOK_ORDER_MAKER_INSUFFICIENT_AVAILABLE_QUANTITY",
    )
    (hist_states) = {o["state"] for o in sim.get("/v3/trade/order/history")}
    assert hist_states == {"PARTIALLY_CANCELED", "CANCELED"}


def test_gtc_limit_crossing_with_depth_rests_its_remainder(make_sim: Callable[..., Sim]) -> None:
    sim = depth_sim(make_sim, "4")
    placed = sim.place(symbol=TST, side="BUY", type="LIMIT", px="101", sz="6")
    order = sim.order(placed["ordId"])
    assert (order["state"], order["execQty"]) == ("PARTIALLY_FILLED", "4")
    sim.mark("100.5", TST)
    assert sim.order(placed["ordId"])["state"] == "FILLED"
    assert fills_of(sim, placed["ordId"]) == [("100", "4", "TAKER"), ("101", "2", "MAKER")]


def test_reduce_only_fill_is_capped_at_the_position(tst: Sim) -> None:
    tst.place(symbol=TST, side="BUY", type="MARKET", sz="4")
    placed = tst.place(symbol=TST, side="SELL", type="MARKET", sz="8", reduceOnly=True)
    order = tst.order(placed["ordId"])
    assert (order["state"], order["execQty"], order["cancelReason"]) == (
        "PARTIALLY_CANCELED",
        "4",
        "NO_MARGIN_QUANTITY_GREAT_THAN_POSITION",
    )
    assert tst.positions() == []


def test_resting_reduce_only_orders_never_open_a_position(tst: Sim) -> None:
    tst.place(symbol=TST, side="BUY", type="MARKET", sz="6")
    first = tst.place(symbol=TST, side="SELL", type="LIMIT", px="102", sz="4", reduceOnly=True)
    second = tst.place(symbol=TST, side="SELL", type="LIMIT", px="103", sz="4", reduceOnly=True)
    tst.mark("104", TST)
    assert tst.order(first["ordId"])["state"] == "FILLED"
    late = tst.order(second["ordId"])
    assert (late["state"], late["execQty"]) == ("PARTIALLY_CANCELED", "2")
    assert tst.positions() == []


def test_reduce_only_resting_order_is_cancelled_when_the_position_is_gone(tst: Sim) -> None:
    tst.place(symbol=TST, side="BUY", type="MARKET", sz="4")
    resting = tst.place(symbol=TST, side="SELL", type="LIMIT", px="105", sz="4", reduceOnly=True)
    tst.place(symbol=TST, side="SELL", type="MARKET", sz="4")
    tst.mark("106", TST)
    order = tst.order(resting["ordId"])
    assert (order["state"], order["cancelReason"]) == (
        "CANCELED",
        "NO_MARGIN_QUANTITY_GREAT_THAN_POSITION",
    )


def test_fills_go_in_price_then_time_priority(tst: Sim) -> None:
    ids = [
        tst.place(symbol=TST, side="BUY", type="LIMIT", px=px, sz="4", clOrdId=cl)["ordId"]
        for px, cl in (("97", "far"), ("99", "near-1"), ("99", "near-2"), ("96", "out"))
    ]
    tst.mark("97", TST)
    trades = tst.get("/v3/trade/order/trades", limit="100")
    assert [t["clOrdId"] for t in reversed(trades)] == ["near-1", "near-2", "far"]
    assert tst.order(ids[3])["state"] == "NEW"


def test_stp_mode_is_accepted_and_recorded(tst: Sim) -> None:
    placed = tst.place(
        symbol=TST, side="BUY", type="LIMIT", px="95", sz="4", stpMode="expire_taker"
    )
    assert tst.order(placed["ordId"])["stpMode"] == "EXPIRE_TAKER"


def test_cancel_answers_11008_unknown_and_11004_when_closed(tst: Sim) -> None:
    from botkit.sim import SimError

    done = tst.place(symbol=TST, side="BUY", type="MARKET", sz="4")
    with pytest.raises(SimError) as info:
        tst.delete("/v3/trade/order", {"symbol": TST, "ordId": done["ordId"]})
    assert info.value.code == 11004
    with pytest.raises(SimError) as info:
        tst.delete("/v3/trade/order", {"symbol": TST, "clOrdId": "never"})
    assert info.value.code == 11008


def test_batch_cancel_answers_per_item_and_refuses_eleven(tst: Sim) -> None:
    from botkit.sim import SimError

    live = tst.place(symbol=TST, side="BUY", type="LIMIT", px="95", sz="4", clOrdId="live")
    results: list[dict[str, Any]] = tst.delete(
        "/v3/trade/batchOrders", {"symbol": TST, "ordIds": [live["ordId"]], "clOrdIds": ["nope"]}
    )
    assert [(r["code"], r["clOrdId"]) for r in results] == [(200, "live"), (11008, "nope")]
    with pytest.raises(SimError) as info:
        tst.delete(
            "/v3/trade/batchOrders", {"symbol": TST, "clOrdIds": [str(i) for i in range(11)]}
        )
    assert info.value.code == 10017


def test_cancel_all_by_symbol_and_side(tst: Sim) -> None:
    for side, px in (("BUY", "95"), ("BUY", "96"), ("SELL", "105")):
        tst.place(symbol=TST, side=side, type="LIMIT", px=px, sz="4")
    tst.place(side="BUY", type="LIMIT", px="59000", sz="1")  # BTC
    cancelled = tst.delete("/v3/trade/allOrders", {"symbol": TST, "side": "buy"})
    assert [r["code"] for r in cancelled] == [200, 200]
    left = sorted(o["symbol"] + ":" + o["side"] for o in tst.get("/v3/trade/order/opens"))
    assert left == ["BTC_USDT_PERP:BUY", "TST_USDT_PERP:SELL"]
    tst.delete("/v3/trade/allOrders", {})
    assert tst.get("/v3/trade/order/opens") == []
