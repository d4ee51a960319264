"""Each order rule of the issue, through the client: every order judged on its own, its own code.

BTC_USDT_PERP in the built-in config: tSz 0.1, lotSz 1, minSz 1, mark 60000, ordPxRange 0.05
(band 57000 .. 63000), marketMaxQty 100000, limitMaxQty 1000000, lever 20, balance 10000 USDT.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from botkit.errors import RequestValidationError
from botkit.exchange.models import (
    InstrumentStatus,
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    PlaceResult,
    PositionMode,
    PosSide,
)
from botkit.live.client import ExchangeClient
from botkit.sim import codes
from botkit.sim.inprocess import SimHandle
from tests.contract.conftest import Raw, with_instrument

BTC = "BTC_USDT_PERP"


def order(**fields: Any) -> OrderRequest:
    base: dict[str, Any] = {
        "symbol": BTC,
        "side": OrderSide.BUY,
        "type": OrderType.LIMIT,
        "sz": Decimal(1),
        "px": Decimal(59000),
    }
    base.update(fields)
    return OrderRequest(**base)


def place_one(client: ExchangeClient, **fields: Any) -> PlaceResult:
    (result,) = client.place_orders([order(**fields)])
    return result


def assert_refused(result: PlaceResult, code: int, fragment: str) -> None:
    assert (result.code, result.ordId) == (code, ""), result
    assert fragment in result.msg


def set_status(sim: SimHandle, status: InstrumentStatus) -> None:
    with sim.http.lock:
        sim.engine.set_status(BTC, status)


def test_a_valid_limit_order_is_accepted_with_an_18_digit_order_id(
    client: ExchangeClient,
) -> None:
    result = place_one(client, clOrdId="ok-1")
    assert (result.code, result.clOrdId) == (200, "ok-1")
    assert len(result.ordId) == 18
    assert result.ordId.isdigit()


@pytest.mark.parametrize(
    ("fields", "code", "fragment"),
    [
        ({"px": Decimal("59000.05")}, codes.BAD_PARAM, "not a multiple of tSz"),
        ({"sz": Decimal("1.5")}, codes.BAD_PARAM, "not a multiple of lotSz"),
        ({"sz": Decimal(1_000_001)}, codes.BAD_PARAM, "exceeds limitMaxQty"),
        (
            {"type": OrderType.MARKET, "px": None, "sz": Decimal(100_001)},
            codes.BAD_PARAM,
            "exceeds marketMaxQty",
        ),
        ({"px": None}, codes.BAD_PARAM, "px is required"),
        ({"type": OrderType.MARKET}, codes.BAD_PARAM, "px must be left blank"),
        ({"symbol": "DOGE_USDT_PERP"}, codes.SYMBOL_NOT_FOUND, "DOGE_USDT_PERP"),
        ({"sz": Decimal(4000)}, codes.BAD_PARAM, "Insufficient margin"),
        ({"reduceOnly": True, "side": OrderSide.SELL, "px": Decimal(61000)}, 10018, "position"),
        ({"posSide": PosSide.LONG}, codes.BAD_PARAM, "posSide must be BOTH in one-way mode"),
    ],
    ids=[
        "tick",
        "lot",
        "limit-max",
        "market-max",
        "limit-without-px",
        "market-with-px",
        "unknown-symbol",
        "margin",
        "reduce-only-without-position",
        "one-way-posSide",
    ],
)
def test_order_rule_refuses_with_its_code(
    client: ExchangeClient, fields: dict[str, Any], code: int, fragment: str
) -> None:
    assert_refused(place_one(client, **fields), code, fragment)


@pytest.mark.parametrize(
    ("side", "px"), [(OrderSide.BUY, Decimal("63000.1")), (OrderSide.SELL, Decimal("56999.9"))]
)
def test_price_outside_the_band_is_10014_with_both_bounds(
    client: ExchangeClient, side: OrderSide, px: Decimal
) -> None:
    result = place_one(client, side=side, px=px)
    assert_refused(result, 10014, "the highest price is 63000")
    assert "the lowest price is 57000" in result.msg


@pytest.mark.parametrize(("side", "px"), [(OrderSide.BUY, 63000), (OrderSide.SELL, 57000)])
def test_price_on_the_band_edge_is_accepted(
    client: ExchangeClient, side: OrderSide, px: int
) -> None:
    assert place_one(client, side=side, px=Decimal(px)).code == 200


@pytest.mark.parametrize(
    "sim_config", [with_instrument(BTC, minSz=5, lotSz=1)], indirect=True, ids=["minSz5"]
)
def test_size_below_min_size_is_refused(client: ExchangeClient) -> None:
    assert_refused(place_one(client, sz=Decimal(4)), codes.BAD_PARAM, "below minSz 5")
    assert place_one(client, sz=Decimal(5)).code == 200


@pytest.mark.parametrize(
    "sim_config", [with_instrument(BTC, minPx="59500", maxPx="60500")], indirect=True
)
@pytest.mark.parametrize("px", [Decimal(59000), Decimal(61000)])
def test_price_outside_min_max_px_is_10002(client: ExchangeClient, px: Decimal) -> None:
    assert_refused(place_one(client, px=px), 10002, "outside [minPx 59500, maxPx 60500]")


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (InstrumentStatus.PAUSED, 10005),
        (InstrumentStatus.CANCEL_ONLY, 10006),
        (InstrumentStatus.CLOSED, 10000),
        (InstrumentStatus.CANCEL_CLOSE_ONLY, 10015),
    ],
)
def test_instrument_status_refuses_new_orders(
    client: ExchangeClient, sim: SimHandle, status: InstrumentStatus, code: int
) -> None:
    set_status(sim, status)
    assert_refused(place_one(client), code, BTC)


def test_close_only_still_accepts_a_reduce_only_close(
    client: ExchangeClient, sim: SimHandle
) -> None:
    opened = place_one(client, type=OrderType.MARKET, px=None, sz=Decimal(2))
    assert opened.code == 200
    set_status(sim, InstrumentStatus.CANCEL_CLOSE_ONLY)
    close = place_one(client, type=OrderType.MARKET, px=None, side=OrderSide.SELL, reduceOnly=True)
    assert close.code == 200, close


def test_duplicate_client_order_id_is_250(client: ExchangeClient) -> None:
    assert place_one(client, clOrdId="dup-1").code == 200
    assert_refused(place_one(client, clOrdId="dup-1"), 250, "dup-1")


def test_each_order_of_a_batch_is_judged_on_its_own(client: ExchangeClient) -> None:
    results = client.place_orders(
        [
            order(clOrdId="b-1"),
            order(clOrdId="b-2", px=Decimal("59000.05")),
            order(clOrdId="b-3", side=OrderSide.SELL, px=Decimal(61000)),
        ]
    )
    assert [(r.clOrdId, r.code) for r in results] == [("b-1", 200), ("b-2", 400), ("b-3", 200)]


def test_batch_of_more_than_10_is_refused_whole(client: ExchangeClient, raw: Raw) -> None:
    with pytest.raises(RequestValidationError):
        client.place_orders([order(clOrdId=f"o-{i}") for i in range(11)])
    body = [order(clOrdId=f"o-{i}").to_wire() for i in range(11)]
    response = raw("POST", "/v3/trade/orders", body)
    assert response.json()["code"] == 10016
    assert client.open_orders(BTC) == []


def test_lower_case_enum_words_are_accepted(raw: Raw) -> None:
    body = [
        {
            "symbol": BTC,
            "side": "buy",
            "type": "limit",
            "mgnMode": "cross",
            "posSide": "both",
            "px": "59000",
            "sz": "1",
            "stpMode": "",
        }
    ]
    data = raw("POST", "/v3/trade/orders", body).json()
    assert (data["code"], data["data"][0]["code"]) == (200, 200)


@pytest.mark.parametrize(
    "fields", [{"mgnMode": "CROSS"}, {"posSide": "BOTH"}], ids=["mgnMode-only", "posSide-only"]
)
def test_mgn_mode_and_pos_side_are_both_filled_or_both_blank(
    raw: Raw, fields: dict[str, str]
) -> None:
    body = [{"symbol": BTC, "side": "BUY", "type": "LIMIT", "px": "59000", "sz": "1", **fields}]
    result = raw("POST", "/v3/trade/orders", body).json()["data"][0]
    assert result["code"] == 400
    assert "both be filled or both be left blank" in result["msg"]


def test_one_way_mode_accepts_an_order_without_mgn_mode_and_pos_side(raw: Raw) -> None:
    body = [{"symbol": BTC, "side": "BUY", "type": "LIMIT", "px": "59000", "sz": "1"}]
    assert raw("POST", "/v3/trade/orders", body).json()["data"][0]["code"] == 200


class TestHedgeMode:
    """Spec 4.3 rules 2 and 4 in long/short mode."""

    @pytest.fixture(autouse=True)
    def _hedge(self, client: ExchangeClient) -> None:
        client.set_position_mode(PositionMode.HEDGE)
        assert client.position_mode() is PositionMode.HEDGE

    def test_pos_side_both_is_refused(self, client: ExchangeClient) -> None:
        result = place_one(client, posSide=PosSide.BOTH)
        assert_refused(result, codes.BAD_PARAM, "posSide must be LONG or SHORT in hedge mode")

    @pytest.mark.parametrize(
        ("side", "pos_side"), [(OrderSide.BUY, PosSide.LONG), (OrderSide.SELL, PosSide.SHORT)]
    )
    def test_opening_pairs_are_accepted(
        self, client: ExchangeClient, side: OrderSide, pos_side: PosSide
    ) -> None:
        result = place_one(client, side=side, posSide=pos_side, type=OrderType.MARKET, px=None)
        assert result.code == 200

    @pytest.mark.parametrize(
        ("side", "pos_side"), [(OrderSide.SELL, PosSide.LONG), (OrderSide.BUY, PosSide.SHORT)]
    )
    def test_closing_pairs_need_the_leg_open(
        self, client: ExchangeClient, side: OrderSide, pos_side: PosSide
    ) -> None:
        fields = {"side": side, "posSide": pos_side, "type": OrderType.MARKET, "px": None}
        assert_refused(place_one(client, **fields), 10018, "position")
        opener = OrderSide.BUY if side is OrderSide.SELL else OrderSide.SELL
        assert place_one(client, **{**fields, "side": opener}).code == 200
        assert place_one(client, **fields).code == 200
        assert client.open_positions(BTC) == []


def test_isolated_margin_mode_is_accepted(client: ExchangeClient) -> None:
    assert place_one(client, mgnMode=MarginMode.ISOLATED).code == 200
