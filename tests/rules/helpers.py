"""Builders of snapshots and strategies for the rules tests (plain values, no I/O)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from botkit.exchange.models import (
    Balance,
    BalanceDetail,
    Instrument,
    OpenOrder,
    Position,
    PositionMode,
    Ticker,
)
from botkit.rules import Strategy, loads
from botkit.snapshot import Snapshot

D = Decimal
NOW = 1_700_000_000_000
"""A Tuesday, 22:13:20 UTC; slot 28_333_333 for a 1m period."""
SYMBOL = "BTC_USDT_PERP"

BTC = Instrument(
    symbol=SYMBOL,
    tSz=D("0.1"),
    lotSz=D(1),
    minSz=D(1),
    ctVal=D("0.001"),
    minPx=D("0.1"),
    maxPx=D(1_000_000),
    ordPxRange=D("0.05"),
    lever=D(20),
    maxLever=D(75),
)

HEADER = f"strategy: test\nsymbol: {SYMBOL}\nevery: 1m\n"
HEAD_RULES = HEADER + "rules:\n"


def ticker(mark: str = "60000", **fields: Any) -> Ticker:
    values: dict[str, Any] = {
        "s": SYMBOL, "c": D(mark), "mPx": D(mark), "iPx": D(mark), "bPx": D(mark) - D("0.1"),
        "aPx": D(mark) + D("0.1"), "o": D(mark), "h": D(mark), "l": D(mark),
    }  # fmt: skip
    values.update(fields)
    return Ticker(**values)


def snapshot(
    *,
    mark: str = "60000",
    avail: str = "10000",
    positions: list[Position] | None = None,
    open_orders: list[OpenOrder] | None = None,
    now_ms: int = NOW,
    tickers: dict[str, Ticker] | None = None,
    mode: PositionMode = PositionMode.ONE_WAY,
    **extra: Any,
) -> Snapshot:
    return Snapshot(
        now_ms=now_ms,
        balance=Balance(
            eq=D(avail),
            availMgn=D(avail),
            details=[BalanceDetail(ccy="USDT", eq=D(avail), avail=D(avail))],
        ),
        instruments={SYMBOL: BTC},
        tickers=tickers if tickers is not None else {SYMBOL: ticker(mark)},
        positions=positions or [],
        open_orders=open_orders or [],
        position_mode=mode,
        **extra,
    )


def position(qty: str, *, pos_side: str = "BOTH", **fields: Any) -> Position:
    values: dict[str, Any] = {
        "symbol": SYMBOL,
        "posSide": pos_side,
        "qty": D(qty),
        "availQty": abs(D(qty)),
        "openAvgPx": D(60000),
    }
    values.update(fields)
    return Position(**values)


def open_order(cl_ord_id: str, side: str = "BUY", px: str = "59000", **fields: Any) -> OpenOrder:
    values: dict[str, Any] = {
        "symbol": SYMBOL, "side": side, "type": "LIMIT", "px": D(px), "sz": D(1),
        "clOrdId": cl_ord_id, "ordId": "1", "cTime": NOW - 60_000,
    }  # fmt: skip
    values.update(fields)
    return OpenOrder(**values)


def strategy(rules: str, header: str = HEAD_RULES) -> Strategy:
    """A strategy from the YAML of its rules (indented as list items under ``rules:``)."""
    return loads(header + rules)
