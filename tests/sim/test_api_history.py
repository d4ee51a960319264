"""History as the spec defines it: states, the 5-hour rule, the 90-day window, paging, filters."""

from __future__ import annotations

import pytest

from botkit.sim import SimError
from tests.sim.conftest import BTC, TST, Sim

HOUR = 3_600_000
DAY = 24 * HOUR


def filled_orders(sim: Sim, count: int, prefix: str = "o") -> list[str]:
    """``count`` market orders a second apart, alternating sides; their ids, oldest first."""
    ids = []
    for i in range(count):
        side = "BUY" if i % 2 == 0 else "SELL"
        ids.append(sim.place(side=side, type="MARKET", sz="1", clOrdId=f"{prefix}{i}")["ordId"])
        sim.clock.advance(1000)
    return ids


def ids_of(rows: list[dict[str, str]], key: str = "ordId") -> list[str]:
    return [r[key] for r in rows]


def test_order_ids_are_18_digit_strings_growing_with_time(sim: Sim) -> None:
    ids = filled_orders(sim, 3)
    assert all(len(i) == 18 and i.isdigit() for i in ids)
    assert ids == sorted(ids)


def test_history_holds_only_closed_orders(sim: Sim) -> None:
    resting = sim.place(side="BUY", type="LIMIT", px="59000", sz="1")["ordId"]
    filled = sim.place(side="BUY", type="MARKET", sz="1")["ordId"]
    cancelled = sim.place(side="BUY", type="LIMIT", px="59000", sz="1")["ordId"]
    sim.delete("/v3/trade/order", {"symbol": BTC, "ordId": cancelled})
    rows = sim.get("/v3/trade/order/history")
    assert sorted(ids_of(rows)) == sorted([filled, cancelled])
    assert resting not in ids_of(rows)
    assert {r["state"] for r in rows} == {"FILLED", "CANCELED"}
    (opened,) = sim.get("/v3/trade/order/opens")
    assert (opened["ordId"], opened["state"]) == (resting, "NEW")


def test_cancelled_order_without_fills_is_visible_for_five_hours_only(sim: Sim) -> None:
    ord_id = sim.place(side="BUY", type="LIMIT", px="59000", sz="1")["ordId"]
    sim.clock.advance(HOUR)
    sim.delete("/v3/trade/order", {"symbol": BTC, "ordId": ord_id})
    sim.clock.advance(5 * HOUR - 1)
    assert ids_of(sim.get("/v3/trade/order/history")) == [ord_id]
    sim.clock.advance(1)
    assert sim.get("/v3/trade/order/history") == []
    assert sim.get("/v3/trade/order/history", ordId=ord_id) == []


def test_forgotten_order_frees_its_client_id_and_details(sim: Sim) -> None:
    ord_id = sim.place(side="BUY", type="LIMIT", px="59000", sz="1", clOrdId="again")["ordId"]
    sim.delete("/v3/trade/order", {"symbol": BTC, "ordId": ord_id})
    assert sim.place(side="BUY", type="LIMIT", px="59000", sz="1", clOrdId="again")["code"] == 250
    sim.clock.advance(5 * HOUR)
    with pytest.raises(SimError) as info:
        sim.get("/v3/trade/order/details", ordId=ord_id)
    assert info.value.code == 11008
    assert sim.place(side="BUY", type="LIMIT", px="59000", sz="1", clOrdId="again")["code"] == 200


def test_partially_filled_then_cancelled_order_stays_visible(make_sim: object) -> None:
    from decimal import Decimal

    from tests.sim.conftest import sim_config

    sim = Sim(sim_config(prices__depth_per_fill=Decimal(1)))
    ord_id = sim.place(side="BUY", type="LIMIT", px="59000", sz="3")["ordId"]
    sim.mark("59000")
    sim.delete("/v3/trade/order", {"symbol": BTC, "ordId": ord_id})
    sim.clock.advance(30 * DAY)
    (row,) = sim.get("/v3/trade/order/history")
    assert (row["ordId"], row["state"], row["execQty"]) == (ord_id, "PARTIALLY_CANCELED", "1")


def test_default_window_is_the_last_90_days(sim: Sim) -> None:
    (old,) = filled_orders(sim, 1)
    sim.clock.advance(90 * DAY)
    (recent,) = filled_orders(sim, 1, "new")
    assert ids_of(sim.get("/v3/trade/order/history")) == [recent]
    everything = sim.get("/v3/trade/order/history", sTime="0")
    assert ids_of(everything) == [recent, old]
    assert len(sim.get("/v3/trade/order/trades")) == 1
    assert len(sim.get("/v3/trade/order/trades", sTime="0")) == 2


def test_time_window_bounds_are_inclusive(sim: Sim) -> None:
    ids = filled_orders(sim, 3)
    t0 = sim.engine.find(ord_id=ids[0])
    assert t0 is not None
    first = str(t0.c_time)
    second = str(t0.c_time + 1000)
    assert ids_of(sim.get("/v3/trade/order/history", sTime=first, eTime=second)) == ids[1::-1]


def test_paging_next_walks_back_and_prev_walks_forward(sim: Sim) -> None:
    ids = filled_orders(sim, 25)
    newest_first = ids[::-1]
    page1 = ids_of(sim.get("/v3/trade/order/history"))
    assert page1 == newest_first[:10]
    page2 = ids_of(sim.get("/v3/trade/order/history", **{"from": page1[-1]}))
    assert page2 == newest_first[10:20]
    page3 = ids_of(sim.get("/v3/trade/order/history", **{"from": page2[-1], "direct": "NEXT"}))
    assert page3 == newest_first[20:]
    back = ids_of(sim.get("/v3/trade/order/history", **{"from": page2[0], "direct": "PREV"}))
    assert back == page1
    oldest = ids_of(sim.get("/v3/trade/order/history", **{"from": "0", "direct": "prev"}))
    assert oldest == newest_first[15:]
    assert ids_of(sim.get("/v3/trade/order/history", limit="100")) == newest_first


def test_fills_and_position_history_page_by_record_id(sim: Sim) -> None:
    filled_orders(sim, 12)  # buy/sell pairs: 12 fills, 6 closed positions
    fills = sim.get("/v3/trade/order/trades", limit="5")
    more = sim.get("/v3/trade/order/trades", limit="5", **{"from": fills[-1]["id"]})
    assert len(set(ids_of(fills + more, "id"))) == 10
    assert max(ids_of(more, "id")) < min(ids_of(fills, "id"))
    positions = sim.get("/v3/trade/position/history", limit="4")
    rest = sim.get("/v3/trade/position/history", **{"from": positions[-1]["id"]})
    assert (len(positions), len(rest)) == (4, 2)


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"limit": "101"}, "limit must be between 1 and 100, got 101"),
        ({"limit": "0"}, "limit must be between 1 and 100, got 0"),
        ({"limit": "ten"}, "limit must be an integer"),
        ({"direct": "UP"}, "direct must be NEXT or PREV"),
        ({"sTime": "2000", "eTime": "1000"}, "sTime 2000 is after eTime 1000"),
        ({"from": "-5"}, "from must be an id >= 0"),
        ({"state": "NEW"}, "state must be one of FILLED, PARTIALLY_CANCELED, CANCELED"),
        ({"side": "UP"}, "side must be one of BUY, SELL"),
    ],
)
def test_bad_paging_parameters_are_400(sim: Sim, query: dict[str, str], words: str) -> None:
    with pytest.raises(SimError) as info:
        sim.get("/v3/trade/order/history", **query)
    assert (info.value.code, info.value.http_status) == (400, 400)
    assert words in info.value.msg


def test_limit_100_is_allowed(sim: Sim) -> None:
    assert sim.get("/v3/trade/order/trades", limit="100") == []


def test_order_history_filters(tst: Sim) -> None:
    buy = tst.place(side="BUY", type="MARKET", sz="1", clOrdId="b1")["ordId"]
    sell = tst.place(symbol=TST, side="SELL", type="MARKET", sz="4", clOrdId="s1")["ordId"]
    cancelled = tst.place(side="BUY", type="LIMIT", px="59000", sz="1", clOrdId="c1")["ordId"]
    tst.delete("/v3/trade/order", {"symbol": BTC, "ordId": cancelled})
    cases = [
        ({"symbol": BTC}, {buy, cancelled}),
        ({"symbol": TST}, {sell}),
        ({"side": "sell"}, {sell}),
        ({"ordId": buy}, {buy}),
        ({"clOrdId": "c1"}, {cancelled}),
        ({"state": "CANCELED"}, {cancelled}),
        ({"state": "filled"}, {buy, sell}),
        ({"type": "LIMIT"}, {cancelled}),
        ({"type": "market", "side": "BUY"}, {buy}),
    ]
    for query, expected in cases:
        assert set(ids_of(tst.get("/v3/trade/order/history", **query))) == expected, query


def test_trade_and_position_history_filters(tst: Sim) -> None:
    tst.place(side="BUY", type="MARKET", sz="1", clOrdId="b1")
    tst.place(side="SELL", type="MARKET", sz="1", clOrdId="s1")
    tst.place(symbol=TST, side="SELL", type="MARKET", sz="4", clOrdId="t1")
    tst.place(symbol=TST, side="BUY", type="MARKET", sz="4", clOrdId="t2")
    trades = "/v3/trade/order/trades"
    assert ids_of(tst.get(trades, symbol=TST), "clOrdId") == ["t2", "t1"]
    assert ids_of(tst.get(trades, side="SELL"), "clOrdId") == ["t1", "s1"]
    assert ids_of(tst.get(trades, clOrdId="b1"), "clOrdId") == ["b1"]
    b1 = tst.engine.find(cl_ord_id="b1")
    assert b1 is not None
    assert ids_of(tst.get(trades, ordId=str(b1.ord_id)), "clOrdId") == ["b1"]
    positions = "/v3/trade/position/history"
    assert [p["symbol"] for p in tst.get(positions)] == [TST, BTC]
    assert [p["side"] for p in tst.get(positions, symbol=TST)] == ["SELL"]
    assert len(tst.get(positions, mgnMode="CROSS", posSide="BOTH")) == 2
    assert tst.get(positions, mgnMode="ISOLATED") == []
    assert tst.get(positions, posSide="LONG") == []


def test_open_orders_filters_and_paging(sim: Sim) -> None:
    ids = [
        sim.place(side=side, type="LIMIT", px=px, sz="1", clOrdId=f"r{i}")["ordId"]
        for i, (side, px) in enumerate([("BUY", "59000"), ("SELL", "61000"), ("BUY", "58000")])
    ]
    opens = "/v3/trade/order/opens"
    assert ids_of(sim.get(opens)) == ids[::-1]
    assert ids_of(sim.get(opens, side="BUY")) == [ids[2], ids[0]]
    assert ids_of(sim.get(opens, clOrdId="r1")) == [ids[1]]
    assert ids_of(sim.get(opens, ordId=ids[0])) == [ids[0]]
    assert ids_of(sim.get(opens, limit="2")) == ids[:0:-1]
    assert ids_of(sim.get(opens, limit="2", **{"from": ids[1]})) == [ids[0]]
