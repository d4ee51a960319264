"""Orders of the paper exchange and the per-symbol book of resting LIMIT orders.

:class:`SimOrder` is the engine's record of one order through its whole life (NEW,
PARTIALLY_FILLED, FILLED, CANCELED, PARTIALLY_CANCELED). :class:`RestingBook` keeps the resting
orders of one symbol sorted by price and time, so "does this mark cross anything?" is two
comparisons against the best bid and best ask thresholds (``set_mark`` stays O(1) when nothing
crosses).
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass
from decimal import Decimal

from botkit.exchange.models import (
    MarginMode,
    OrderSide,
    OrderType,
    PosSide,
    StpMode,
    TimeInForce,
)

__all__ = ["NEG_INF", "POS_INF", "OrderState", "RestingBook", "SimOrder"]

_ZERO = Decimal(0)
NEG_INF = Decimal("-Infinity")
POS_INF = Decimal("Infinity")


class OrderState:
    """The states an order passes through (strings, as on the wire)."""

    NEW = "NEW"
    PARTIALLY_FILLED = "PARTIALLY_FILLED"
    FILLED = "FILLED"
    CANCELED = "CANCELED"
    PARTIALLY_CANCELED = "PARTIALLY_CANCELED"
    OPEN = frozenset({NEW, PARTIALLY_FILLED})
    CLOSED = frozenset({FILLED, CANCELED, PARTIALLY_CANCELED})


@dataclass(slots=True, eq=False)
class SimOrder:
    """One order and everything that happened to it."""

    ord_id: int
    cl_ord_id: str
    symbol: str
    side: OrderSide
    type: OrderType
    sz: Decimal
    px: Decimal | None
    mgn_mode: MarginMode
    pos_side: PosSide
    reduce_only: bool
    closing: bool
    """Reduce-only, or a hedge-mode close (SELL+LONG, BUY+SHORT): never opens exposure."""
    tif: TimeInForce
    stp: StpMode
    lever: Decimal
    c_time: int
    u_time: int
    source: str = "API"
    state: str = OrderState.NEW
    exec_qty: Decimal = Decimal(0)
    exec_amt: Decimal = Decimal(0)
    """Executed value in the quote currency: sum of qty × ctVal × px."""
    exec_px_qty: Decimal = Decimal(0)
    """Sum of qty × px, for the average execution price."""
    fee: Decimal = Decimal(0)
    cancel_reason: str = ""
    rev: int = 0
    """Bumped on every change (fill, close): readers cache what they derive per revision."""

    @property
    def remaining(self) -> Decimal:
        return self.sz - self.exec_qty

    @property
    def avg_px(self) -> Decimal | None:
        return self.exec_px_qty / self.exec_qty if self.exec_qty else None

    @property
    def price(self) -> Decimal:
        """The limit price (every resting order has one; 0 for a MARKET order)."""
        return self.px if self.px is not None else _ZERO

    @property
    def is_buy(self) -> bool:
        return self.side is OrderSide.BUY


def _buy_key(order: SimOrder) -> tuple[Decimal, int]:
    return (-order.price, order.ord_id)


def _sell_key(order: SimOrder) -> tuple[Decimal, int]:
    return (order.price, order.ord_id)


class RestingBook:
    """The resting orders of one symbol: bids best (highest) first, asks best (lowest) first.

    ``best_bid`` / ``best_ask`` are the thresholds: a mark at or below ``best_bid`` fills bids,
    a mark at or above ``best_ask`` fills asks.
    """

    __slots__ = ("asks", "best_ask", "best_bid", "bids")

    def __init__(self) -> None:
        self.bids: list[SimOrder] = []
        self.asks: list[SimOrder] = []
        self.best_bid = NEG_INF
        self.best_ask = POS_INF

    def __len__(self) -> int:
        return len(self.bids) + len(self.asks)

    def add(self, order: SimOrder) -> None:
        """Rest ``order`` in price then time priority (its side's key). An order whose key sorts
        at or after the last one's goes last without a search, where ``insort`` would put it (a
        ladder, placed from its best rung down with ever newer ids, always does)."""
        side, key = (self.bids, _buy_key) if order.is_buy else (self.asks, _sell_key)
        if not side or key(order) >= key(side[-1]):
            side.append(order)
        else:
            insort(side, order, key=key)
        self._thresholds()

    def remove(self, order: SimOrder) -> None:
        side = self.bids if order.is_buy else self.asks
        side.remove(order)
        self._thresholds()

    def crossed(self, mark: Decimal) -> list[SimOrder]:
        """The resting orders the mark crosses, in price then time priority."""
        out: list[SimOrder] = []
        if mark <= self.best_bid:
            for order in self.bids:
                if order.price < mark:
                    break
                out.append(order)
        if mark >= self.best_ask:
            for order in self.asks:
                if order.price > mark:
                    break
                out.append(order)
        return out

    def orders(self) -> list[SimOrder]:
        return [*self.bids, *self.asks]

    def _thresholds(self) -> None:
        bid = self.bids[0].px if self.bids else None
        ask = self.asks[0].px if self.asks else None
        self.best_bid = bid if bid is not None else NEG_INF
        self.best_ask = ask if ask is not None else POS_INF
