"""The exchange's ports: what botkit needs from an exchange, split by who needs what.

Implemented by the live HTTP client (:mod:`botkit.live.client`) and by the embedded simulator
in process (:mod:`botkit.sim`), so the runner, dry-run and backtest share one code path and only
the adapter underneath differs. Every method speaks in the typed models of
:mod:`botkit.exchange.models`; errors are those of :mod:`botkit.errors`.

Three ports — :class:`MarketReads`, :class:`AccountReads`, :class:`Trading` — and the pieces
their consumers need, each consumer naming the narrowest one it uses:

======================  ===============================================  ========================
port                    methods                                          used by
======================  ===============================================  ========================
:class:`PriceReads`     ``tickers``, ``limit_price``                     the price band re-check
:class:`MarketReads`    + ``server_time``, ``instruments``, ``candles``  (the snapshot reader)
:class:`OrderLookup`    ``open_orders``, ``order_history``, ``fills``    lookup, reconcile,
                                                                         ownership
:class:`AccountReads`   + ``balance``, ``open_positions``,               cancel / flatten
                        ``position_history``, ``position_mode``
:class:`Placing`        :class:`OrderLookup` + ``place_orders``          submit
:class:`Trading`        :class:`Placing` + ``cancel_order``,             the live sender
                        ``cancel_orders``, ``cancel_all``,
                        ``set_position_mode``, ``set_leverage``
:class:`OrderSending`   :class:`Placing` + :class:`PriceReads`           the executor
:class:`ExchangeReads`  :class:`MarketReads` + :class:`AccountReads`     the snapshot reader, the
                                                                         runner
:class:`ExchangePort`   all of them                                      the composition root
======================  ===============================================  ========================

Trading comes with the order lookups: a write whose answer was lost is settled by looking the
order up, never by sending it again.

History methods take a query value (:mod:`botkit.exchange.queries`) and return *one page* (at
most ``limit`` records, the spec's ``from`` / ``limit`` / ``direct`` paging);
:func:`botkit.exchange.paging.iter_history` walks pages and time windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

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
from botkit.exchange.queries import FillQuery, OrderQuery, PositionQuery

__all__ = [
    "AccountReads",
    "ExchangePort",
    "ExchangeReads",
    "MarketReads",
    "OrderLookup",
    "OrderSending",
    "Placing",
    "PriceReads",
    "Trading",
]


class PriceReads(Protocol):
    """The prices an order is checked against before it is sent."""

    def tickers(self, symbol: str | None = None) -> list[Ticker]:
        """``GET /v3/market/tickers``: last, mark, index, bid, ask and 24h figures."""
        ...

    def limit_price(self, symbol: str) -> LimitPrice:
        """``GET /v3/market/limitPrice``: the price band orders must fall in now."""
        ...


class MarketReads(PriceReads, Protocol):
    """Market reads: the exchange's time, reference data and market data (unsigned)."""

    def server_time(self) -> int:
        """``GET /timestamp``: the exchange's clock in ms."""
        ...

    def instruments(self, symbol: str | None = None) -> list[Instrument]:
        """``GET /v3/market/allInstruments``."""
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


class OrderLookup(Protocol):
    """Where an order is: resting, closed, or filled."""

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

    def order_history(self, query: OrderQuery = OrderQuery()) -> list[Order]:
        """``GET /v3/trade/order/history``: one page of closed orders."""
        ...

    def fills(self, query: FillQuery = FillQuery()) -> list[Fill]:
        """``GET /v3/trade/order/trades``: one page of executions."""
        ...


class AccountReads(OrderLookup, Protocol):
    """Account reads (signed): balance, positions, orders, history, the position mode."""

    def balance(self) -> Balance:
        """``GET /v3/account/balance``."""
        ...

    def open_positions(self, symbol: str | None = None) -> list[Position]:
        """``GET /v3/trade/position/opens``."""
        ...

    def position_history(self, query: PositionQuery = PositionQuery()) -> list[PositionHistory]:
        """``GET /v3/trade/position/history``: one page of previous positions."""
        ...

    def position_mode(self) -> PositionMode:
        """``GET /v3/position/mode``."""
        ...


class Placing(OrderLookup, Protocol):
    """Placing orders, with the lookups that settle a placement whose answer was lost."""

    def place_orders(self, orders: Sequence[OrderRequest]) -> list[PlaceResult]:
        """``POST /v3/trade/orders``: at most 10 orders; one result per order, in order.

        Raises :class:`~botkit.errors.OutcomeUnknown` when the request left and no answer came.
        """
        ...


class Trading(Placing, Protocol):
    """Trading (signed writes): place, cancel, the position mode and leverage."""

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


class OrderSending(Placing, PriceReads, Protocol):
    """What sending a plan needs: place, re-check the price band, look up a lost answer."""


class ExchangeReads(MarketReads, AccountReads, Protocol):
    """Every read: what a cycle's snapshot is made of."""


@runtime_checkable
class ExchangePort(ExchangeReads, Trading, Protocol):
    """Everything botkit needs from an exchange. Amounts are ``Decimal``; times are Unix ms."""
