"""A deferred snapshot's reads for tests: the parts of a hand-made snapshot, one of them failing."""

from __future__ import annotations

from botkit.errors import ExchangeError, ReadFailed
from botkit.exchange.models import (
    Balance,
    Fill,
    LimitPrice,
    OpenOrder,
    Order,
    Position,
    PositionHistory,
    PositionMode,
    Ticker,
)
from botkit.snapshot import Candles, Part, Snapshot


class SnapshotReads:
    """:class:`~botkit.snapshot.Reads` of ``parts``'s values; ``calls`` lists each read made (by
    part name); the reads of ``failing`` raise :class:`ReadFailed` with ``error``."""

    def __init__(
        self, parts: Snapshot, failing: Part | None = None, error: ExchangeError | None = None
    ) -> None:
        self.parts = parts
        self.failing = failing
        self.error = error
        self.calls: list[str] = []

    def _made(self, part: Part) -> None:
        self.calls.append(part.value)
        if part is self.failing:
            assert self.error is not None
            raise ReadFailed(part, self.error)

    def balance(self) -> Balance:
        self._made(Part.BALANCE)
        return self.parts.balance

    def tickers(self) -> dict[str, Ticker]:
        self._made(Part.TICKERS)
        return self.parts.tickers

    def positions(self) -> list[Position]:
        self._made(Part.POSITIONS)
        return self.parts.positions

    def open_orders(self) -> list[OpenOrder]:
        self._made(Part.OPEN_ORDERS)
        return self.parts.open_orders

    def order_history(self) -> list[Order]:
        self._made(Part.ORDER_HISTORY)
        return self.parts.order_history

    def fills(self) -> list[Fill]:
        self._made(Part.FILLS)
        return self.parts.fills

    def position_history(self) -> list[PositionHistory]:
        self._made(Part.POSITION_HISTORY)
        return self.parts.position_history

    def limit_prices(self) -> dict[str, LimitPrice]:
        self._made(Part.LIMIT_PRICES)
        return self.parts.limit_prices

    def position_mode(self) -> PositionMode:
        self._made(Part.POSITION_MODE)
        return self.parts.position_mode

    def candles(self) -> Candles:
        self._made(Part.CANDLES)
        return self.parts.candles
