"""Reference and market-data paths answer with the spec's shapes; public paths need no signature."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.exchange.models import (
    Candle,
    CurrencyV1,
    CurrencyV2,
    Instrument,
    InstrumentStatus,
    LimitPrice,
    Market,
    RiskLimitTier,
    ServerTime,
    Ticker,
)
from botkit.sim import SimError
from tests.sim.conftest import BTC, T0, Sim

MINUTE = 60_000


def test_timestamp_is_the_injected_clock(sim: Sim) -> None:
    sim.clock.advance(1234)
    assert ServerTime.model_validate(sim.get("/timestamp")).serverTime == T0 + 1234


def test_markets_and_one_market(sim: Sim) -> None:
    markets = [Market.model_validate(m) for m in sim.get("/markets")]
    assert {m.symbol for m in markets} >= {"BTC_USDT", "ETH_USDT"}
    one = Market.model_validate(sim.get("/markets/BTC_USDT"))
    assert one.symbolTradeLimit is not None
    assert one.symbolTradeLimit.symbol == "BTC_USDT"
    with pytest.raises(SimError) as info:
        sim.get("/markets/NOPE_USDT")
    assert info.value.code == 24101


def test_currencies_multi_chain_fields_only_when_asked(sim: Sim) -> None:
    plain = sim.get("/currencies")
    names = [next(iter(c)) for c in plain]
    assert "USDT" in names
    assert "USDTTRON" not in names
    assert "childChains" not in plain[names.index("USDT")]["USDT"]
    multi = sim.get("/currencies", includeMultiChainCurrencies="true")
    by_name = {next(iter(c)): next(iter(c.values())) for c in multi}
    assert by_name["USDT"]["childChains"] == ["USDTETH", "USDTTRON"]
    assert (by_name["USDTTRON"]["isChildChain"], by_name["USDTTRON"]["parentChain"]) == (
        True,
        "USDT",
    )
    one = sim.get("/currencies/btc")
    assert CurrencyV1.model_validate(one["BTC"]).blockchain == "BTC"


def test_v2_currencies_carry_networks(sim: Sim) -> None:
    coins = [CurrencyV2.model_validate(c) for c in sim.get("/v2/currencies")]
    usdt = next(c for c in coins if c.coin == "USDT")
    assert {n.coin for n in usdt.networkList} == {"USDT", "USDTETH", "USDTTRON"}
    assert CurrencyV2.model_validate(sim.get("/v2/currencies/ETH")).coin == "ETH"


def test_instruments_carry_every_spec_field_with_wire_types(sim: Sim) -> None:
    (raw,) = sim.get("/v3/market/allInstruments", symbol=BTC)
    spec_fields = [
        "symbol",
        "bAsset",
        "bCcy",
        "qCcy",
        "visibleStartTime",
        "tradableStartTime",
        "sCcy",
        "tSz",
        "pxScale",
        "lotSz",
        "minSz",
        "ctVal",
        "status",
        "oDate",
        "maxPx",
        "minPx",
        "marketMaxQty",
        "limitMaxQty",
        "maxQty",
        "minQty",
        "maxLever",
        "lever",
        "ordPxRange",
        "ctType",
        "alias",
        "iM",
        "mM",
        "mR",
    ]
    assert set(raw) == set(spec_fields)
    assert (raw["lotSz"], raw["minSz"], raw["tSz"], raw["oDate"]) == (1, 1, "0.1", "1577836800000")
    inst = Instrument.model_validate(raw)
    assert (inst.ctVal, inst.status) == (Decimal("0.001"), InstrumentStatus.OPEN)
    assert len(sim.get("/v3/market/allInstruments")) == 3
    sim.engine.set_status(BTC, "PAUSED")
    assert sim.get("/v3/market/allInstruments", symbol=BTC)[0]["status"] == "PAUSED"


def test_tickers_have_24h_figures_from_the_candles(sim: Sim) -> None:
    for px in ("60500", "59000", "61000"):
        sim.clock.advance(MINUTE)
        sim.mark(px)
    (raw,) = sim.get("/v3/market/tickers", symbol=BTC)
    t = Ticker.model_validate(raw)
    assert (t.o, t.h, t.l, t.c, t.mPx, t.iPx) == tuple(
        Decimal(x) for x in ("60000", "61000", "59000", "61000", "61000", "61000")
    )
    assert (t.bPx, t.aPx) == (Decimal("60999.9"), Decimal("61000.1"))
    sim.clock.advance(24 * 60 * MINUTE)  # the old minutes leave the 24h window
    sim.mark("61200")
    t = Ticker.model_validate(sim.get("/v3/market/tickers", symbol=BTC)[0])
    assert (t.o, t.h, t.l) == (Decimal("61200"), Decimal("61200"), Decimal("61200"))
    assert len(sim.get("/v3/market/tickers")) == 3


def test_mark_index_and_funding_object_with_symbol_list_without(sim: Sim) -> None:
    assert sim.get("/v3/market/markPrice", symbol=BTC) == {"s": BTC, "mPx": "60000"}
    assert {"s": BTC, "mPx": "60000"} in sim.get("/v3/market/markPrice")
    assert sim.get("/v3/market/indexPrice", symbol=BTC) == {"s": BTC, "iPx": "60000"}
    funding = sim.get("/v3/market/fundingRate", symbol=BTC)
    assert set(funding) == {"s", "fR", "fT", "nFR", "nFT"}


def test_candles_rows_are_in_the_notes_order_and_aggregate(sim: Sim) -> None:
    start = T0 - T0 % MINUTE
    for i, px in enumerate(["60100", "59900", "60300", "60200", "60050"]):
        sim.clock.set(start + i * MINUTE + 30_000)
        sim.mark(px)
    rows = sim.get("/v3/market/candles", symbol=BTC, interval="MINUTE_1")
    first = Candle.from_row(rows[0])
    assert (first.open, first.high, first.low, first.close) == tuple(
        Decimal(x) for x in ("60000", "60100", "60000", "60100")
    )
    assert (first.sT, first.cT) == (start, start + MINUTE - 1)
    assert rows[1][:4] == ["59900", "59900", "59900", "59900"]  # [low, high, open, close]
    five = sim.get("/v3/market/candles", symbol=BTC, interval="minute_5")
    bucket = start - start % (5 * MINUTE)  # T0 is 3 minutes into a 5-minute bucket
    assert start - bucket == 3 * MINUTE
    assert [r[:4] + r[7:] for r in five] == [
        ["59900", "60100", "60000", "59900", bucket, bucket + 5 * MINUTE - 1],
        ["60050", "60300", "60300", "60050", bucket + 5 * MINUTE, bucket + 10 * MINUTE - 1],
    ]
    last_two = sim.get("/v3/market/candles", symbol=BTC, interval="MINUTE_1", limit="2")
    assert [r[3] for r in last_two] == ["60200", "60050"]
    with pytest.raises(SimError) as info:
        sim.get("/v3/market/candles", symbol=BTC, interval="MINUTE_7")
    assert info.value.code == 24102


def test_limit_price_is_the_band_orders_must_fall_in(sim: Sim) -> None:
    (raw,) = sim.get("/v3/market/limitPrice", symbol=BTC)
    band = LimitPrice.model_validate(raw)
    assert (band.buyLmt, band.sellLmt) == (Decimal("63000.0"), Decimal("57000.0"))
    assert sim.place(side="BUY", type="LIMIT", px="63000", sz="1")["code"] == 200
    assert sim.place(side="BUY", type="LIMIT", px="63000.1", sz="1")["code"] == 10014


def test_order_book_levels(sim: Sim) -> None:
    book = sim.get("/v3/market/orderBook", symbol=BTC, limit="5")
    assert book["s"] == BTC
    assert [a[0] for a in book["asks"][:2]] == ["60000.1", "60000.2"]
    assert [b[0] for b in book["bids"][:2]] == ["59999.9", "59999.8"]
    with pytest.raises(SimError, match="limit must be one of 5, 10, 20, 100, 150"):
        sim.get("/v3/market/orderBook", symbol=BTC, limit="7")


def test_risk_limit_tiers(sim: Sim) -> None:
    tiers = [RiskLimitTier.model_validate(t) for t in sim.get("/v3/market/riskLimit", symbol=BTC)]
    assert {t.mgnMode.value for t in tiers if t.mgnMode} == {"CROSS", "ISOLATED"}
    cross1 = sim.get("/v3/market/riskLimit", symbol=BTC, mgnMode="CROSS", tier="1")
    assert [(t["tier"], t["maxLever"]) for t in cross1] == [("1", "75")]
    with pytest.raises(SimError) as info:
        sim.get("/v3/market/riskLimit")
    assert info.value.code == 400


def test_unknown_path_is_404_and_public_paths_are_marked(sim: Sim) -> None:
    with pytest.raises(SimError) as info:
        sim.get("/v3/nothing/here")
    assert (info.value.code, info.value.msg, info.value.http_status) == (404, "Not Found", 404)
    with pytest.raises(SimError):
        sim.api.call("POST", "/v3/account/balance", {}, None)
    api = sim.api
    for path in ("/timestamp", "/markets/BTC_USDT", "/v2/currencies/BTC", "/v3/market/candles"):
        assert api.is_public("GET", path)
    for path in ("/v3/account/balance", "/v3/trade/orders", "/v3/position/mode"):
        assert not api.is_public("GET", path)


def test_legacy_auto_deposit_toggle_is_accepted(sim: Sim) -> None:
    answer = sim.post(
        "/api/v1/position/margin/auto-deposit-status", {"symbol": BTC, "status": True}
    )
    assert answer == {"symbol": BTC, "status": True}
