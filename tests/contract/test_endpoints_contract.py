"""Every endpoint the client calls, answered by the simulator in the spec's shapes."""

from __future__ import annotations

import warnings
from decimal import Decimal

import pytest

from botkit.clock import ManualClock
from botkit.errors import NotFoundError
from botkit.exchange.models import (
    InstrumentStatus,
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    PositionMode,
)
from botkit.live.client import ExchangeClient
from botkit.sim.inprocess import SimHandle
from tests.contract.conftest import T0

BTC = "BTC_USDT_PERP"
SYMBOLS = {"BTC_USDT_PERP", "ETH_USDT_PERP", "SOL_USDT_PERP"}


def limit(cl: str, px: str = "59000") -> OrderRequest:
    return OrderRequest(
        symbol=BTC,
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(px),
        clOrdId=cl,
    )


def test_server_time_is_the_simulator_clock(client: ExchangeClient, clock: ManualClock) -> None:
    clock.advance(1234)
    assert client.server_time() == T0 + 1234


def test_reference_data(client: ExchangeClient) -> None:
    markets = client.markets()
    assert markets
    assert client.market(markets[0].symbol).symbol == markets[0].symbol
    currencies = client.currencies()
    assert currencies
    multi = client.currencies(include_multi_chain=True)
    assert len(multi) >= len(currencies)
    assert client.currency(currencies[0].name).name == currencies[0].name
    v2 = client.currencies_v2()
    assert v2
    assert client.currency_v2(v2[0].coin).coin == v2[0].coin


def test_instruments_all_and_one(client: ExchangeClient) -> None:
    instruments = client.instruments()
    assert {i.symbol for i in instruments} == SYMBOLS
    (btc,) = client.instruments(BTC)
    assert (btc.tSz, btc.lotSz, btc.status) == (Decimal("0.1"), Decimal(1), InstrumentStatus.OPEN)
    assert btc.ordPxRange == Decimal("0.05")


def test_market_data(client: ExchangeClient) -> None:
    (ticker,) = client.tickers(BTC)
    assert ticker.mPx == Decimal(60000)
    assert {t.s for t in client.tickers()} == SYMBOLS
    assert client.mark_prices(BTC)[0].mPx == Decimal(60000)
    assert client.index_prices(BTC)
    assert client.funding_rates(BTC)
    band = client.limit_price(BTC)
    assert (band.buyLmt, band.sellLmt) == (Decimal(63000), Decimal(57000))
    book = client.order_book(BTC, limit=5)
    assert book is not None
    assert client.risk_limit(BTC)


def test_candles_follow_the_mark(
    client: ExchangeClient, sim: SimHandle, clock: ManualClock
) -> None:
    for px in ("60010", "60020", "59990"):
        sim.set_mark(BTC, px)
        clock.advance(60_000)
    candles = client.candles(BTC, "MINUTE_1", limit=10)
    assert candles
    assert all(c.low <= c.close <= c.high for c in candles)
    assert candles == sorted(candles, key=lambda c: c.sT)


def test_balance_and_positions(client: ExchangeClient) -> None:
    balance = client.balance()
    assert balance.eq == Decimal(10000)
    assert [d.ccy for d in balance.details] == ["USDT"]
    assert client.open_positions() == []
    market = OrderRequest(symbol=BTC, side=OrderSide.BUY, type=OrderType.MARKET, sz=Decimal(2))
    assert client.place_orders([market])[0].code == 200
    (position,) = client.open_positions(BTC)
    assert position.qty == Decimal(2)
    assert client.balance().im == Decimal("6.0")  # 2 × 0.001 × 60000 / lever 20


def test_single_order_details_and_open_orders(client: ExchangeClient) -> None:
    result = client.place_order(limit("one-1"))
    assert result.clOrdId == "one-1"
    assert len(result.ordId) == 18
    details = client.order_details(cl_ord_id="one-1")
    assert (details.ordId, details.state) == (result.ordId, "NEW")
    assert [o.clOrdId for o in client.open_orders(BTC)] == ["one-1"]
    assert client.open_orders(BTC, side=OrderSide.SELL) == []


def test_cancels_single_batch_and_all(client: ExchangeClient) -> None:
    client.place_orders([limit(f"c-{i}") for i in range(5)])
    assert client.cancel_order(BTC, cl_ord_id="c-0").code == 200
    results = client.cancel_orders(BTC, cl_ord_ids=["c-1", "c-2"])
    assert [r.code for r in results] == [200, 200]
    assert {r.code for r in client.cancel_all(BTC)} == {200}
    assert client.open_orders(BTC) == []
    with pytest.raises(NotFoundError):
        client.order_details(cl_ord_id="nope")


def test_cancel_of_an_unknown_order_is_11008(client: ExchangeClient) -> None:
    with pytest.raises(NotFoundError) as info:
        client.cancel_order(BTC, cl_ord_id="never-placed")
    assert info.value.code == 11008


def test_position_mode_and_leverage(client: ExchangeClient) -> None:
    assert client.position_mode() is PositionMode.ONE_WAY
    client.set_position_mode(PositionMode.HEDGE)
    assert client.position_mode() is PositionMode.HEDGE
    client.set_leverage(BTC, 10, mgn_mode=MarginMode.CROSS, pos_side="LONG")
    levers = client.leverages(BTC, mgn_mode=MarginMode.CROSS)
    assert any(lv.lever == Decimal(10) for lv in levers)


def test_legacy_auto_deposit_toggle_is_accepted(client: ExchangeClient) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        client.set_auto_deposit_status(BTC, True)


def test_unknown_symbol_on_a_read_is_an_exchange_error(client: ExchangeClient) -> None:
    from botkit.errors import ExchangeRejected

    with pytest.raises(ExchangeRejected):
        client.instruments("NOPE_USDT_PERP")
