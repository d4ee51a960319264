"""``ExchangePort``: the one interface between botkit's core and an exchange.

Implemented by the live HTTP client (:mod:`botkit.live.client`) and by the embedded simulator
in process (:mod:`botkit.sim`), so the runner, dry-run and backtest share one code path and only
the adapter underneath differs. Every method speaks in the typed models of
:mod:`botkit.exchange.models`; errors are those of :mod:`botkit.errors`.

History methods return *one page* (at most ``limit`` records, the spec's ``from`` / ``limit`` /
``direct`` paging); :func:`botkit.exchange.paging.iter_history` walks pages and time windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from botkit.exchange.models import (
    Balance,
    CancelResult,
    Candle,
    Fill,
    Instrument,
    LimitPrice,
    MarginMode,
    OpenOrder,
    Order,
    OrderRequest,
    OrderSide,
    PlaceResult,
    Position,
    PositionHistory,
    PositionMode,
    PosSide,
    Ticker,
)

__all__ = ["Direction", "ExchangePort", "HistoryKind"]

Direction = Literal["NEXT", "PREV"]
HistoryKind = Literal["orders", "fills", "positions"]


@runtime_checkable
class ExchangePort(Protocol):
    """What botkit needs from an exchange. Amounts are ``Decimal``; times are Unix ms."""

    # --- time and reference data ---------------------------------------------------------
    def server_time(self) -> int:
        """``GET /timestamp``: the exchange's clock in ms."""
        ...

    def instruments(self, symbol: str | None = None) -> list[Instrument]:
        """``GET /v3/market/allInstruments``."""
        ...

    # --- market data -------------------------------------------------------------------------
    def tickers(self, symbol: str | None = None) -> list[Ticker]:
        """``GET /v3/market/tickers``: last, mark, index, bid, ask and 24h figures."""
        ...

    def limit_price(self, symbol: str) -> LimitPrice:
        """``GET /v3/market/limitPrice``: the price band orders must fall in now."""
        ...

    def candles(
        self,
        symbol: str,
        interval: str,
        *,
        start: int | None = None,
        end: int | None = None,
        limit: int | None = None,
    ) -> list[Candle]:
        """``GET /v3/market/candles``, oldest first."""
        ...

    # --- account -----------------------------------------------------------------------------
    def balance(self) -> Balance:
        """``GET /v3/account/balance``."""
        ...

    def open_positions(self, symbol: str | None = None) -> list[Position]:
        """``GET /v3/trade/position/opens``."""
        ...

    def open_orders(
        self,
        symbol: str | None = None,
        *,
        side: OrderSide | None = None,
        ord_id: str | None = None,
        cl_ord_id: str | None = None,
    ) -> list[OpenOrder]:
        """``GET /v3/trade/order/opens`` (every page)."""
        ...

    def order_history(
        self,
        *,
        symbol: str | None = None,
        side: OrderSide | None = None,
        ord_id: str | None = None,
        cl_ord_id: str | None = None,
        state: str | None = None,
        type: str | None = None,
        start: int | None = None,
        end: int | None = None,
        from_id: str | None = None,
        limit: int | None = None,
        direct: Direction | None = None,
    ) -> list[Order]:
        """``GET /v3/trade/order/history``: one page of closed orders."""
        ...

    def fills(
        self,
        *,
        symbol: str | None = None,
        side: OrderSide | None = None,
        ord_id: str | None = None,
        cl_ord_id: str | None = None,
        start: int | None = None,
        end: int | None = None,
        from_id: str | None = None,
        limit: int | None = None,
        direct: Direction | None = None,
    ) -> list[Fill]:
        """``GET /v3/trade/order/trades``: one page of executions."""
        ...

    def position_history(
        self,
        *,
        symbol: str | None = None,
        mgn_mode: MarginMode | None = None,
        pos_side: PosSide | None = None,
        start: int | None = None,
        end: int | None = None,
        from_id: str | None = None,
        limit: int | None = None,
        direct: Direction | None = None,
    ) -> list[PositionHistory]:
        """``GET /v3/trade/position/history``: one page of previous positions."""
        ...

    def position_mode(self) -> PositionMode:
        """``GET /v3/position/mode``."""
        ...

    # --- trading -----------------------------------------------------------------------------
    def place_orders(self, orders: Sequence[OrderRequest]) -> list[PlaceResult]:
        """``POST /v3/trade/orders``: at most 10 orders; one result per order, in order.

        Raises :class:`~botkit.errors.OutcomeUnknown` when the request left and no answer came.
        """
        ...

    def cancel_order(
        self, symbol: str, *, ord_id: str | None = None, cl_ord_id: str | None = None
    ) -> CancelResult:
        """``DELETE /v3/trade/order``."""
        ...

    def cancel_orders(
        self, symbol: str, *, ord_ids: Sequence[str] = (), cl_ord_ids: Sequence[str] = ()
    ) -> list[CancelResult]:
        """``DELETE /v3/trade/batchOrders``: at most 10."""
        ...

    def cancel_all(
        self, symbol: str | None = None, side: OrderSide | None = None
    ) -> list[CancelResult]:
        """``DELETE /v3/trade/allOrders``."""
        ...

    def set_position_mode(self, mode: PositionMode) -> None:
        """``POST /v3/position/mode``."""
        ...

    def set_leverage(
        self, symbol: str, lever: int, *, mgn_mode: MarginMode, pos_side: PosSide = PosSide.BOTH
    ) -> None:
        """``POST /v3/position/leverage``."""
        ...
