"""The account snapshot: everything the rules may read, read once per cycle.

The runner fills it from an :class:`~botkit.exchange.port.ExchangePort` (each endpoint read once
per cycle however many strategies need it); the rule engine and the pipeline only read it. It is a
plain value: tests build one by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from botkit.exchange.models import (
    Balance,
    Fill,
    Instrument,
    LimitPrice,
    OpenOrder,
    Order,
    Position,
    PositionHistory,
    PositionMode,
    Ticker,
)

__all__ = ["Snapshot"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The account and market as seen at ``now_ms`` (exchange time, Unix ms)."""

    now_ms: int
    balance: Balance
    instruments: dict[str, Instrument]
    tickers: dict[str, Ticker]
    positions: list[Position] = field(default_factory=list)
    open_orders: list[OpenOrder] = field(default_factory=list)
    order_history: list[Order] = field(default_factory=list)
    fills: list[Fill] = field(default_factory=list)
    position_history: list[PositionHistory] = field(default_factory=list)
    limit_prices: dict[str, LimitPrice] = field(default_factory=dict)
    position_mode: PositionMode = PositionMode.ONE_WAY
