"""Small builders for the pipeline tests: an instrument, intents, a snapshot, a manual clock."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from botkit.exchange.models import (
    Balance,
    Instrument,
    LimitPrice,
    OpenOrder,
    OrderSide,
    OrderType,
    Position,
    PositionMode,
    Ticker,
)
from botkit.intents import OrderIntent, RiskLimits
from botkit.snapshot import Snapshot

D = Decimal
SYMBOL = "BTC_USDT_PERP"

LIMIT_SETS = [
    RiskLimits(),
    RiskLimits(),
    RiskLimits(max_position=D("5")),
    RiskLimits(max_orders_per_cycle=3),
    RiskLimits(max_notional_per_order=D("300"), max_notional_per_cycle=D("900")),
]
"""Risk limits to draw a strategy's or the global ones from: none (twice as likely), a
position limit, an order count, notional limits."""


def instrument(**overrides: Any) -> Instrument:
    fields: dict[str, Any] = {
        "symbol": SYMBOL,
        "tSz": D("0.1"),
        "lotSz": D("1"),
        "minSz": D("1"),
        "ctVal": D("0.001"),
        "minPx": D("1"),
        "maxPx": D("1000000"),
        "limitMaxQty": D("1000"),
        "marketMaxQty": D("500"),
        "ordPxRange": D("0.05"),
    }
    fields.update(overrides)
    return Instrument(**fields)


def intent(
    n: int = 0,
    *,
    side: OrderSide = OrderSide.BUY,
    type: OrderType = OrderType.LIMIT,
    sz: str = "1",
    px: str | None = "100",
    strategy: str = "s1",
    rule: str = "r1",
    symbol: str = SYMBOL,
    **kw: Any,
) -> OrderIntent:
    return OrderIntent(
        strategy=strategy,
        rule=rule,
        slot=1,
        leg=n,
        cl_ord_id=kw.pop("cl_ord_id", f"{strategy}-{rule}-{n}"),
        symbol=symbol,
        side=side,
        type=type,
        sz=D(sz),
        px=None if px is None else D(px),
        **kw,
    )


def snapshot(
    *,
    mark: str | None = "100",
    instruments: dict[str, Instrument] | None = None,
    positions: list[Position] | None = None,
    open_orders: list[OpenOrder] | None = None,
    limit_prices: dict[str, LimitPrice] | None = None,
    position_mode: PositionMode = PositionMode.ONE_WAY,
    now_ms: int = 1_700_000_000_000,
) -> Snapshot:
    tickers = {SYMBOL: Ticker(s=SYMBOL, mPx=None if mark is None else D(mark))}
    return Snapshot(
        now_ms=now_ms,
        balance=Balance(eq=D("10000")),
        instruments=instruments if instruments is not None else {SYMBOL: instrument()},
        tickers=tickers,
        positions=positions or [],
        open_orders=open_orders or [],
        limit_prices=limit_prices or {},
        position_mode=position_mode,
    )


class ManualClock:
    """Unix-ms clock the tests move by hand."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.ms = start_ms

    def __call__(self) -> int:
        return self.ms

    def advance(self, ms: int) -> None:
        self.ms += ms


class FakeSleep:
    """Records the sleeps asked for instead of sleeping."""

    def __init__(self, clock: ManualClock | None = None) -> None:
        self.calls: list[float] = []
        self.clock = clock

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        if self.clock is not None:
            self.clock.advance(int(seconds * 1000))
