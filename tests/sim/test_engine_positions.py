"""Position math with exact Decimal figures: open, add, partial close, flip, hedge legs."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from botkit.exchange.models import PositionMode
from botkit.sim import load_sim_config
from tests.sim.conftest import TST, Sim, tst_instrument


def market(sim: Sim, side: str, sz: str, **extra: Any) -> None:
    result = sim.place(symbol=TST, side=side, type="MARKET", sz=sz, **extra)
    assert result["code"] == 200, result


def only_position(sim: Sim) -> dict[str, Any]:
    (pos,) = sim.positions()
    return pos


def test_open_add_partial_close_and_flip_one_way(tst: Sim) -> None:
    market(tst, "BUY", "4")  # 4 @ 100, fee 0.24
    pos = only_position(tst)
    assert (pos["qty"], pos["openAvgPx"], pos["fee"], pos["side"]) == (
        "4",
        "100",
        "0.24000000",
        "BUY",
    )

    tst.mark("110", TST)
    market(tst, "BUY", "6")  # avg (400 + 660) / 10 = 106, fee 0.396
    pos = only_position(tst)
    assert (pos["qty"], pos["openAvgPx"], pos["upl"]) == ("10", "106.00000000", "40.00000000")

    tst.mark("108", TST)
    market(tst, "SELL", "4")  # realizes 4 × (108 − 106) = 8, fee 0.2592
    pos = only_position(tst)
    assert (pos["qty"], pos["pnl"], pos["fee"]) == ("6", "8.00000000", "0.89520000")

    tst.mark("100", TST)
    market(tst, "SELL", "10")  # closes 6 (−36), opens a short of 4 @ 100; fee 0.6 split 0.36/0.24
    pos = only_position(tst)
    assert (pos["qty"], pos["side"], pos["openAvgPx"], pos["pnl"], pos["fee"]) == (
        "-4",
        "SELL",
        "100",
        "0",
        "0.24000000",
    )
    (closed,) = tst.get("/v3/trade/position/history")
    assert {k: closed[k] for k in ("side", "posSide", "openAvgPx", "closeAvgPx", "closedQty")} == {
        "side": "BUY",
        "posSide": "BOTH",
        "openAvgPx": "106.00000000",
        "closeAvgPx": "103.20000000",
        "closedQty": "10",
    }
    assert (closed["pnl"], closed["fee"], closed["qty"]) == ("-28.00000000", "1.25520000", "0")

    tst.mark("90", TST)
    pos = only_position(tst)
    assert (pos["upl"], pos["im"], pos["mm"]) == ("40.00000000", "36.00000000", "3.60000000")
    balance = tst.balance()
    # wallet: 10000 − 28 realized − 1.4952 fees = 9970.5048; equity adds the short's +40
    assert (balance["eq"], balance["upl"], balance["im"], balance["availMgn"]) == (
        "10010.50480000",
        "40.00000000",
        "36.00000000",
        "9974.50480000",
    )


def test_closing_exactly_to_zero_leaves_no_position(tst: Sim) -> None:
    market(tst, "SELL", "4")
    tst.mark("95", TST)
    market(tst, "BUY", "4")
    assert tst.positions() == []
    (closed,) = tst.get("/v3/trade/position/history")
    # short 4 from 100 closed at 95: +20
    assert (closed["side"], closed["pnl"], closed["closeAvgPx"]) == (
        "SELL",
        "20.00000000",
        "95.00000000",
    )


def test_hedge_legs_are_independent(make_sim: Callable[..., Sim]) -> None:
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], position_mode=PositionMode.HEDGE
    )
    market(sim, "BUY", "4", posSide="LONG")
    market(sim, "SELL", "6", posSide="SHORT")
    sim.mark("110", TST)
    legs = {p["posSide"]: p for p in sim.positions()}
    assert (legs["LONG"]["qty"], legs["LONG"]["upl"]) == ("4", "40.00000000")
    assert (legs["SHORT"]["qty"], legs["SHORT"]["side"], legs["SHORT"]["upl"]) == (
        "6",
        "SELL",
        "-60.00000000",
    )
    market(sim, "SELL", "4", posSide="LONG")  # close the long leg only
    (short,) = sim.positions()
    assert short["posSide"] == "SHORT"
    (closed,) = sim.get("/v3/trade/position/history", posSide="LONG")
    assert (closed["pnl"], closed["posSide"]) == ("40.00000000", "LONG")
    assert sim.get("/v3/trade/position/history", posSide="SHORT") == []


def test_hedge_close_larger_than_the_leg_never_flips(make_sim: Callable[..., Sim]) -> None:
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], position_mode=PositionMode.HEDGE
    )
    market(sim, "BUY", "4", posSide="LONG")
    placed = sim.place(symbol=TST, side="SELL", type="MARKET", sz="8", posSide="LONG")
    assert sim.order(placed["ordId"])["execQty"] == "4"
    assert sim.positions() == []


def test_avail_qty_excludes_resting_closing_orders(tst: Sim) -> None:
    market(tst, "BUY", "10")
    tst.place(symbol=TST, side="SELL", type="LIMIT", px="105", sz="4", reduceOnly=True)
    assert only_position(tst)["availQty"] == "6"


def test_leverage_changes_position_margin(tst: Sim) -> None:
    market(tst, "BUY", "10")
    assert only_position(tst)["im"] == "100.00000000"  # 1000 notional at 10x
    answer = tst.post(
        "/v3/position/leverage",
        {"symbol": TST, "lever": "20", "mgnMode": "CROSS", "posSide": "BOTH"},
    )
    assert answer == {"symbol": TST, "lever": "20", "mgnMode": "CROSS", "posSide": "BOTH"}
    assert (only_position(tst)["im"], only_position(tst)["lever"]) == ("50.00000000", "20")
    assert tst.get("/v3/position/leverages", symbol=TST, mgnMode="CROSS") == [answer]


def test_leverage_outside_1_to_max_is_refused(tst: Sim) -> None:
    import pytest

    from botkit.sim import SimError

    for lever in ("0", "21", "2.5"):
        with pytest.raises(SimError, match="lever must be a whole number from 1 to 20"):
            tst.post("/v3/position/leverage", {"symbol": TST, "lever": lever, "mgnMode": "CROSS"})


def test_position_mode_switch_only_when_flat(tst: Sim) -> None:
    import pytest

    from botkit.sim import SimError

    assert tst.get("/v3/position/mode") == {"posMode": "ONE_WAY"}
    market(tst, "BUY", "4")
    with pytest.raises(SimError, match="cannot change while positions or open orders exist"):
        tst.post("/v3/position/mode", {"posMode": "HEDGE"})
    market(tst, "SELL", "4")
    assert tst.post("/v3/position/mode", {"posMode": "hedge"}) == {"posMode": "HEDGE"}
    assert tst.get("/v3/position/mode") == {"posMode": "HEDGE"}
    legs = tst.get("/v3/position/leverages", symbol=TST, mgnMode="CROSS")
    assert [leg["posSide"] for leg in legs] == ["LONG", "SHORT"]


def test_margin_mode_must_match_the_open_position(tst: Sim) -> None:
    market(tst, "BUY", "4", mgnMode="ISOLATED", posSide="BOTH")
    result = tst.place(
        symbol=TST, side="BUY", type="MARKET", sz="4", mgnMode="CROSS", posSide="BOTH"
    )
    assert result["code"] == 400
    assert "differs from the open ISOLATED position" in result["msg"]
    balance = tst.balance()
    assert balance["isoEq"] == only_position(tst)["im"]


def test_isolated_margin_reported_in_iso_fields(tst: Sim) -> None:
    market(tst, "BUY", "4", mgnMode="ISOLATED", posSide="BOTH")
    tst.mark("105", TST)
    detail = tst.balance()["details"][0]
    # im 4 × 105 / 10 = 42, upl 20
    assert (detail["isoAvail"], detail["isoUpl"], detail["isoEq"]) == (
        "42.00000000",
        "20.00000000",
        "62.00000000",
    )


def test_fees_in_the_fill_records(tst: Sim) -> None:
    market(tst, "BUY", "4")
    (fill,) = tst.get("/v3/trade/order/trades")
    assert (fill["value"], fill["feeAmt"], fill["feeRate"], fill["feeCcy"]) == (
        "400.00000000",
        "0.24000000",
        "0.0006",
        "USDT",
    )
    assert Decimal(fill["feeAmt"]) == Decimal(fill["value"]) * Decimal(fill["feeRate"])
