"""Matching: what happens to an order once accepted, and to resting orders when the mark moves.

:class:`Matcher` owns the per-symbol books of resting orders and the set of open orders, and
books every execution in the account and the history:

* MARKET fills at once at the mark (taker);
* a LIMIT that crosses the mark on arrival fills at once at the mark (taker); a LIMIT_MAKER
  that would cross is cancelled (LIMIT_MAKER_ORDER_INCORRECT_PRICE_CONDITION); IOC / FOK that
  cannot fill are cancelled with the spec's reasons; the rest of a GTC order rests;
* a resting order fills at its own price (maker) when the mark reaches it (BUY: mark <= px,
  SELL: mark >= px), at most ``depth_per_fill`` contracts per price event when that is set;
* closing orders (reduce-only, hedge closes) never open exposure: a fill is capped at the
  position and what cannot fill is cancelled (NO_MARGIN_QUANTITY_GREAT_THAN_POSITION).

``rev`` counts changes to orders and positions, so readers can cache what they derive.
"""

from __future__ import annotations

from decimal import Decimal

from botkit.exchange.models import OrderSide, OrderType, TimeInForce
from botkit.sim.accounts import Account, PositionRecord, q8
from botkit.sim.book import OrderState, RestingBook, SimOrder
from botkit.sim.config import InstrumentConfig
from botkit.sim.history import FillRecord, History
from botkit.sim.ids import IdGen
from botkit.sim.prices import PriceSeries

__all__ = [
    "FOK_SHORT",
    "IOC_FOK_NO_MATCH",
    "IOC_REST",
    "MAKER_WOULD_TAKE",
    "MARKET_REST",
    "OVER_POSITION",
    "USER_CANCEL",
    "Matcher",
]

USER_CANCEL = "USER_CANCEL_ORDER_ACTION"
MAKER_WOULD_TAKE = "LIMIT_MAKER_ORDER_INCORRECT_PRICE_CONDITION"
IOC_FOK_NO_MATCH = "LIMIT_MATCH_IOC_OR_FOK_ORDER_PRICE_CANNOT_MATCH"
FOK_SHORT = "LIMIT_MATCH_FOK_ORDER_MAKER_INSUFFICIENT_AVAILABLE_QUANTITY"
IOC_REST = "LIMIT_MATCH_IOC_ORDER_CANNOT_FILLED"
MARKET_REST = "MARKET_ORDER_NO_OTHER_SIDE_ORDER"
OVER_POSITION = "NO_MARGIN_QUANTITY_GREAT_THAN_POSITION"
_ZERO = Decimal(0)


class Matcher:
    """Resting books, open orders and executions of the one account."""

    def __init__(
        self,
        *,
        instruments: dict[str, InstrumentConfig],
        prices: dict[str, PriceSeries],
        account: Account,
        history: History,
        ids: IdGen,
        maker: Decimal,
        taker: Decimal,
        depth: Decimal | None,
    ) -> None:
        self.instruments = instruments
        self.prices = prices
        self.account = account
        self.history = history
        self.ids = ids
        self.maker = maker
        self.taker = taker
        self.depth = depth
        self.books: dict[str, RestingBook] = {s: RestingBook() for s in instruments}
        self.open: dict[int, SimOrder] = {}
        self.rev = 0

    def arrive(self, order: SimOrder, mark: Decimal, now: int) -> None:
        """A just-accepted order meets the market: fill, cancel or rest."""
        self.rev += 1
        if order.type is OrderType.MARKET:
            self._take(order, mark, now)
            return
        px = order.px if order.px is not None else mark
        crosses = mark <= px if order.is_buy else mark >= px
        if crosses:
            if order.type is OrderType.LIMIT_MAKER:
                self.close(order, MAKER_WOULD_TAKE, now)
                return
            if not self._take(order, mark, now):
                return
        elif order.tif is not TimeInForce.GTC:
            self.close(order, IOC_FOK_NO_MATCH, now)
            return
        self.open[order.ord_id] = order
        self.books[order.symbol].add(order)

    def match(self, symbol: str, mark: Decimal, now: int) -> None:
        """Fill the resting orders of ``symbol`` that ``mark`` crosses (maker, at their price)."""
        for order in self.books[symbol].crossed(mark):
            px = order.px if order.px is not None else mark
            qty = order.remaining
            if self.depth is not None and self.depth < qty:
                qty = self.depth
            if order.closing:
                closable = self.closable(order)
                if not closable:
                    self.close(order, OVER_POSITION, now)
                    continue
                qty = min(qty, closable)
            self._fill(order, qty, px, "MAKER", now)
            if not order.remaining:
                self.close(order, "", now)
            elif order.closing and not self.closable(order):
                self.close(order, OVER_POSITION, now)

    def closable(self, order: SimOrder) -> Decimal:
        """How much of the opposite position ``order`` could close now."""
        position = self.account.positions.get((order.symbol, order.pos_side))
        if position is None:
            return _ZERO
        if position.qty > 0 and not order.is_buy:
            return position.qty
        if position.qty < 0 and order.is_buy:
            return -position.qty
        return _ZERO

    def close(self, order: SimOrder, reason: str, now: int) -> None:
        """End an order: FILLED when nothing remains, else (PARTIALLY_)CANCELED for ``reason``."""
        self.rev += 1
        order.rev += 1
        if self.open.pop(order.ord_id, None) is not None:
            self.books[order.symbol].remove(order)
        if not order.remaining:
            order.state = OrderState.FILLED
        else:
            order.state = OrderState.PARTIALLY_CANCELED if order.exec_qty else OrderState.CANCELED
            order.cancel_reason = reason
        order.u_time = now

    def _take(self, order: SimOrder, mark: Decimal, now: int) -> bool:
        """Fill a new order as taker at the mark; True when its rest should rest on the book."""
        qty = order.remaining
        capped = False
        if order.closing:
            closable = self.closable(order)
            if closable < qty:
                qty, capped = closable, True
        if self.depth is not None and self.depth < qty:
            qty = self.depth
        if order.tif is TimeInForce.FOK and qty < order.remaining:
            self.close(order, FOK_SHORT, now)
            return False
        if qty:
            self._fill(order, qty, mark, "TAKER", now)
        if not order.remaining:
            self.close(order, "", now)
            return False
        reason = (
            OVER_POSITION
            if capped
            else MARKET_REST
            if order.type is OrderType.MARKET
            else IOC_REST
            if order.tif is TimeInForce.IOC
            else None
        )
        if reason is not None:
            self.close(order, reason, now)
            return False
        return True

    def _fill(self, order: SimOrder, qty: Decimal, px: Decimal, role: str, now: int) -> None:
        self.rev += 1
        order.rev += 1
        inst = self.instruments[order.symbol]
        rate = self.maker if role == "MAKER" else self.taker
        value = q8(qty * inst.ctVal * px)
        fee = q8(value * rate)
        effect = self.account.apply_fill(
            symbol=order.symbol,
            pos_side=order.pos_side,
            mgn_mode=order.mgn_mode,
            is_buy=order.is_buy,
            qty=qty,
            px=px,
            fee=fee,
            ct_val=inst.ctVal,
            now_ms=now,
        )
        order.exec_qty += qty
        order.exec_amt += value
        order.exec_px_qty += qty * px
        order.fee += fee
        order.u_time = now
        if order.remaining:
            order.state = OrderState.PARTIALLY_FILLED
        fill_id = self.ids.next()
        self.history.fills.add(
            FillRecord(
                id=fill_id,
                trd_id=fill_id,
                symbol=order.symbol,
                ord_id=order.ord_id,
                cl_ord_id=order.cl_ord_id,
                side=order.side,
                mgn_mode=order.mgn_mode,
                pos_side=order.pos_side,
                ord_type=order.type,
                role=role,
                px=px,
                qty=qty,
                value=value,
                fee=fee,
                fee_rate=rate,
                c_time=now,
            )
        )
        self.prices[order.symbol].trade(qty, value)
        closed = effect.closed
        if closed is not None:
            self.history.positions.add(
                PositionRecord(
                    id=self.ids.next(),
                    symbol=closed.symbol,
                    side=OrderSide.SELL if order.is_buy else OrderSide.BUY,
                    mgn_mode=closed.mgn_mode,
                    pos_side=closed.pos_side,
                    open_avg_px=closed.avg_px,
                    close_avg_px=q8(closed.close_px_qty / closed.closed_qty),
                    closed_qty=closed.closed_qty,
                    pnl=closed.pnl,
                    fee=closed.fee,
                    c_time=closed.c_time,
                    u_time=now,
                )
            )
