"""Per-order rules of POST /v3/trade/orders, each order judged on its own (envelope stays 200)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from botkit.exchange.models import PositionMode
from botkit.sim import SimError, load_sim_config
from tests.sim.conftest import TST, Sim, tst_instrument


def place_tst(sim: Sim, **fields: Any) -> dict[str, Any]:
    return sim.place(symbol=TST, **fields)


LIMIT_BUY = {"side": "BUY", "type": "LIMIT", "px": "100", "sz": "4"}
LIMIT_SELL = {"side": "SELL", "type": "LIMIT", "px": "100", "sz": "4"}


@pytest.mark.parametrize(
    ("mark", "fields", "code", "words"),
    [
        # tick size 0.5
        (None, {**LIMIT_BUY, "px": "99.5"}, 200, "Success"),
        (None, {**LIMIT_BUY, "px": "99.3"}, 400, "not a multiple of tSz 0.5"),
        (None, {**LIMIT_SELL, "px": "100.5"}, 200, "Success"),
        (None, {**LIMIT_SELL, "px": "100.7"}, 400, "not a multiple of tSz 0.5"),
        # lot size 2
        (None, {**LIMIT_BUY, "sz": "6"}, 200, "Success"),
        (None, {**LIMIT_BUY, "sz": "5"}, 400, "not a multiple of lotSz 2"),
        (None, {**LIMIT_SELL, "sz": "4.5"}, 400, "not a multiple of lotSz 2"),
        # minimum size 4
        (None, {**LIMIT_BUY, "sz": "4"}, 200, "Success"),
        (None, {**LIMIT_BUY, "sz": "2"}, 400, "below minSz 4"),
        (None, {**LIMIT_SELL, "sz": "2"}, 400, "below minSz 4"),
        (None, {**LIMIT_SELL, "sz": "0"}, 400, "sz must be a positive number"),
        (None, {**LIMIT_SELL, "sz": "-4"}, 400, "sz must be a positive number"),
        # maximum size by order type: limit 40, market 20
        (None, {**LIMIT_BUY, "px": "95", "sz": "40"}, 200, "Success"),
        (None, {**LIMIT_BUY, "px": "95", "sz": "42"}, 400, "exceeds limitMaxQty 40"),
        (None, {**LIMIT_SELL, "px": "105", "sz": "42"}, 400, "exceeds limitMaxQty 40"),
        (None, {"side": "BUY", "type": "MARKET", "sz": "20"}, 200, "Success"),
        (None, {"side": "BUY", "type": "MARKET", "sz": "22"}, 400, "exceeds marketMaxQty 20"),
        (None, {"side": "SELL", "type": "MARKET", "sz": "40"}, 400, "exceeds marketMaxQty 20"),
        # minPx 10 / maxPx 200 (marks chosen so the band reaches past them)
        ("10.5", {**LIMIT_BUY, "px": "10"}, 200, "Success"),
        ("10.5", {**LIMIT_BUY, "px": "9.5"}, 10002, "outside [minPx 10, maxPx 200]"),
        ("195", {**LIMIT_SELL, "px": "200"}, 200, "Success"),
        ("195", {**LIMIT_SELL, "px": "200.5"}, 10002, "outside [minPx 10, maxPx 200]"),
        # the band around the mark: ordPxRange 0.1 -> [90, 110] at mark 100
        (None, {**LIMIT_BUY, "px": "110"}, 200, "Success"),
        (
            None,
            {**LIMIT_BUY, "px": "110.5"},
            10014,
            "highest price is 110.0, the lowest price is 90.0",
        ),
        (
            None,
            {**LIMIT_BUY, "px": "89.5"},
            10014,
            "highest price is 110.0, the lowest price is 90.0",
        ),
        (None, {**LIMIT_SELL, "px": "90"}, 200, "Success"),
        (None, {**LIMIT_SELL, "px": "89.5"}, 10014, "the lowest price is 90.0"),
        (None, {**LIMIT_SELL, "px": "110.5"}, 10014, "the highest price is 110.0"),
        # price presence by type
        (None, {"side": "BUY", "type": "LIMIT", "sz": "4"}, 400, "px is required for a LIMIT"),
        (None, {"side": "SELL", "type": "LIMIT_MAKER", "sz": "4"}, 400, "px is required"),
        (
            None,
            {"side": "BUY", "type": "MARKET", "px": "100", "sz": "4"},
            400,
            "px must be left blank",
        ),
        # words
        (None, {**LIMIT_BUY, "side": "HOLD"}, 400, "side must be one of BUY, SELL"),
        (None, {**LIMIT_BUY, "type": "STOP"}, 400, "type must be one of MARKET, LIMIT"),
        (None, {**LIMIT_BUY, "timeInForce": "DAY"}, 400, "timeInForce must be one of"),
        (None, {**LIMIT_BUY, "px": "abc"}, 400, "px must be a decimal number"),
        (None, {**LIMIT_BUY, "sz": None}, 400, "sz is required"),
        (None, {**LIMIT_BUY, "clOrdId": "has space"}, 400, "clOrdId 'has space' must be"),
        (None, {**LIMIT_BUY, "colour": "red"}, 400, "unknown order field 'colour'"),
    ],
)
def test_order_rule_per_instrument(
    tst: Sim, mark: str | None, fields: dict[str, Any], code: int, words: str
) -> None:
    if mark is not None:
        tst.mark(mark, TST)
    result = place_tst(tst, **fields)
    assert (result["code"], words in result["msg"]) == (code, True), result
    assert (result["ordId"] != "") is (code == 200)


def test_unknown_symbol_is_10001(sim: Sim) -> None:
    result = sim.place(symbol="NOPE_USDT_PERP", side="BUY", type="MARKET", sz="1")
    assert (result["code"], result["msg"]) == (10001, "Symbol does not exist: NOPE_USDT_PERP")


@pytest.mark.parametrize(
    ("status", "reduce_only", "code"),
    [
        ("OPEN", False, 200),
        ("PAUSED", False, 10005),
        ("PAUSED", True, 10005),
        ("CANCEL_ONLY", False, 10006),
        ("CANCEL_ONLY", True, 10006),
        ("CLOSED", False, 10000),
        ("CANCEL_CLOSE_ONLY", False, 10015),
        ("CANCEL_CLOSE_ONLY", True, 200),
    ],
)
def test_instrument_status_decides_what_is_accepted(
    tst: Sim, status: str, reduce_only: bool, code: int
) -> None:
    assert place_tst(tst, side="BUY", type="MARKET", sz="4")["code"] == 200  # a long to reduce
    tst.engine.set_status(TST, status)
    result = place_tst(tst, side="SELL", type="MARKET", sz="4", reduceOnly=reduce_only)
    assert result["code"] == code, result


def test_status_does_not_stop_cancels(tst: Sim) -> None:
    placed = place_tst(tst, **{**LIMIT_BUY, "px": "95"})
    tst.engine.set_status(TST, "PAUSED")
    cancelled = tst.delete("/v3/trade/order", {"symbol": TST, "ordId": placed["ordId"]})
    assert cancelled["ordId"] == placed["ordId"]


@pytest.mark.parametrize(
    ("mgn_mode", "pos_side", "code", "words"),
    [
        ("CROSS", "BOTH", 200, "Success"),
        (None, None, 200, "Success"),  # rule 1: posSide not mandatory in one-way mode
        ("CROSS", "LONG", 400, "posSide must be BOTH in one-way mode, got LONG"),
        ("ISOLATED", "SHORT", 400, "posSide must be BOTH in one-way mode"),
        ("CROSS", None, 400, "mgnMode and posSide must both be filled"),  # rule 3
        (None, "BOTH", 400, "mgnMode and posSide must both be filled"),
    ],
)
def test_one_way_mode_side_rules(
    tst: Sim, mgn_mode: str | None, pos_side: str | None, code: int, words: str
) -> None:
    result = place_tst(tst, side="BUY", type="MARKET", sz="4", mgnMode=mgn_mode, posSide=pos_side)
    assert (result["code"], words in result["msg"]) == (code, True), result


@pytest.mark.parametrize(
    ("side", "pos_side", "code", "words"),
    [
        ("BUY", "LONG", 200, "Success"),  # open long
        ("SELL", "SHORT", 200, "Success"),  # open short
        ("SELL", "LONG", 10018, "No position to close"),  # close long, none open
        ("BUY", "SHORT", 10018, "No position to close"),  # close short, none open
        ("BUY", "BOTH", 400, "posSide must be LONG or SHORT in hedge mode, got BOTH"),  # rule 2
        ("BUY", None, 400, "mgnMode and posSide must both be filled"),  # rule 3
    ],
)
def test_hedge_mode_side_rules(
    make_sim: Callable[..., Sim], side: str, pos_side: str | None, code: int, words: str
) -> None:
    hedge = make_sim(position_mode=PositionMode.HEDGE)
    result = hedge.place(side=side, type="MARKET", sz="1", posSide=pos_side)
    assert (result["code"], words in result["msg"]) == (code, True), result


def test_hedge_mode_requires_posside_even_when_both_blank(make_sim: Callable[..., Sim]) -> None:
    hedge = make_sim(position_mode=PositionMode.HEDGE)
    result = hedge.place(side="BUY", type="MARKET", sz="1", mgnMode=None, posSide=None)
    assert result["code"] == 400
    assert "posSide must be LONG or SHORT in hedge mode, got blank" in result["msg"]


def test_hedge_close_is_accepted_with_an_open_leg(make_sim: Callable[..., Sim]) -> None:
    hedge = make_sim(position_mode=PositionMode.HEDGE)
    assert hedge.place(side="BUY", type="MARKET", sz="3", posSide="LONG")["code"] == 200
    assert hedge.place(side="SELL", type="MARKET", sz="1", posSide="LONG")["code"] == 200
    assert hedge.place(side="BUY", type="MARKET", sz="1", posSide="SHORT")["code"] == 10018


@pytest.mark.parametrize(
    ("opening_side", "closing_side", "code"),
    [
        (None, "SELL", 10018),  # no position at all
        (None, "BUY", 10018),
        ("BUY", "BUY", 10018),  # reduce-only in the direction of the position
        ("SELL", "SELL", 10018),
        ("BUY", "SELL", 200),
        ("SELL", "BUY", 200),
    ],
)
def test_reduce_only_needs_an_opposite_position(
    tst: Sim, opening_side: str | None, closing_side: str, code: int
) -> None:
    if opening_side is not None:
        assert place_tst(tst, side=opening_side, type="MARKET", sz="4")["code"] == 200
    result = place_tst(tst, side=closing_side, type="MARKET", sz="4", reduceOnly=True)
    assert result["code"] == code, result


@pytest.mark.parametrize(("sz", "code"), [("10", 200), ("12", 400)])
def test_insufficient_margin_boundary(make_sim: Callable[..., Sim], sz: str, code: int) -> None:
    # 100 USDT at leverage 10 buys exactly 10 contracts of 1 at px 100
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], balance__amount=Decimal(100)
    )
    result = sim.place(symbol=TST, side="BUY", type="LIMIT", px="100", sz=sz)
    assert result["code"] == code, result
    if code != 200:
        assert result["msg"].startswith("Insufficient margin: the order needs 120.00000000 USDT")


def test_resting_orders_use_up_margin(make_sim: Callable[..., Sim]) -> None:
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], balance__amount=Decimal(100)
    )
    assert sim.place(symbol=TST, side="BUY", type="LIMIT", px="95", sz="6")["code"] == 200  # 57
    assert sim.place(symbol=TST, side="BUY", type="LIMIT", px="95", sz="6")["code"] == 400
    assert sim.place(symbol=TST, side="BUY", type="LIMIT", px="95", sz="4")["code"] == 200  # 38


def test_closing_order_needs_no_margin(make_sim: Callable[..., Sim]) -> None:
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], balance__amount=Decimal(100)
    )
    assert sim.place(symbol=TST, side="BUY", type="MARKET", sz="8")["code"] == 200
    result = sim.place(symbol=TST, side="SELL", type="LIMIT", px="105", sz="8", reduceOnly=True)
    assert result["code"] == 200


def test_duplicate_client_order_id_is_250_also_inside_a_batch(tst: Sim) -> None:
    first = place_tst(tst, **{**LIMIT_BUY, "px": "95"}, clOrdId="dup-1")
    assert first["code"] == 200
    again = tst.post(
        "/v3/trade/orders",
        [
            {"symbol": TST, **LIMIT_BUY, "px": "95", "clOrdId": "dup-1"},
            {"symbol": TST, **LIMIT_BUY, "px": "95", "clOrdId": "dup-2"},
            {"symbol": TST, **LIMIT_BUY, "px": "95", "clOrdId": "dup-2"},
        ],
    )
    assert [r["code"] for r in again] == [250, 200, 250]
    assert again[0]["msg"] == f"Duplicate clOrdId: dup-1 is already used by order {first['ordId']}"


def test_client_order_id_stays_taken_after_cancel(tst: Sim) -> None:
    first = place_tst(tst, **{**LIMIT_BUY, "px": "95"}, clOrdId="once")
    tst.delete("/v3/trade/order", {"symbol": TST, "clOrdId": "once"})
    assert place_tst(tst, **{**LIMIT_BUY, "px": "95"}, clOrdId="once")["code"] == 250
    assert first["code"] == 200


def test_batch_of_eleven_is_refused_whole_and_ten_is_fine(tst: Sim) -> None:
    order = {"symbol": TST, **LIMIT_BUY, "px": "95"}
    with pytest.raises(SimError) as info:
        tst.post("/v3/trade/orders", [order] * 11)
    assert info.value.code == 10016
    assert tst.get("/v3/trade/order/opens") == []
    results = tst.post("/v3/trade/orders", [order] * 10)
    assert [r["code"] for r in results] == [200] * 10


def test_each_order_of_a_batch_is_judged_alone_in_order(tst: Sim) -> None:
    results = tst.post(
        "/v3/trade/orders",
        [
            {"symbol": TST, **LIMIT_BUY, "px": "95", "clOrdId": "a"},
            {"symbol": TST, **LIMIT_BUY, "px": "95.3", "clOrdId": "b"},
            "not an object",
            {"symbol": TST, **LIMIT_SELL, "px": "105", "clOrdId": "c"},
        ],
    )
    assert [(r["clOrdId"], r["code"]) for r in results] == [
        ("a", 200),
        ("b", 400),
        ("", 400),
        ("c", 200),
    ]
    assert {o["clOrdId"] for o in tst.get("/v3/trade/order/opens")} == {"a", "c"}


def test_lower_case_enum_words_are_accepted(tst: Sim) -> None:
    result = place_tst(
        tst,
        side="buy",
        type="limit",
        px="95",
        sz="4",
        mgnMode="cross",
        posSide="both",
        timeInForce="gtc",
        stpMode="",
        reduceOnly="false",
    )
    assert result["code"] == 200, result
    (opened,) = tst.get("/v3/trade/order/opens")
    assert (opened["side"], opened["type"], opened["stpMode"]) == ("BUY", "LIMIT", "NONE")
    assert place_tst(tst, side="sell", type="limit_maker", px="105", sz="4")["code"] == 200


def test_amounts_may_arrive_as_json_numbers(tst: Sim) -> None:
    result = place_tst(tst, side="BUY", type="LIMIT", px=Decimal("95.5"), sz=4)
    assert result["code"] == 200
    assert tst.order(result["ordId"])["px"] == "95.5"


def test_single_order_endpoint_answers_ids_or_raises_the_code(tst: Sim) -> None:
    ok = tst.post("/v3/trade/order", {"symbol": TST, **LIMIT_BUY, "px": "95", "clOrdId": "one"})
    assert ok["clOrdId"] == "one"
    assert len(ok["ordId"]) == 18
    with pytest.raises(SimError) as info:
        tst.post("/v3/trade/order", {"symbol": TST, **LIMIT_BUY, "px": "120"})
    assert (info.value.code, info.value.http_status) == (10014, 200)
    with pytest.raises(SimError) as info:
        tst.post("/v3/trade/order", {"symbol": TST, **LIMIT_BUY, "px": "95.1"})
    assert (info.value.code, info.value.http_status) == (400, 400)
