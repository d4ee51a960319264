"""The account rules a new order must pass after the instrument rules, as plain functions.

:func:`account_rules` decides, from the order and the account's state, the margin mode,
position side and leverage an accepted order gets, or raises :class:`SimError`: a ``clOrdId``
already known (250), a margin mode that differs from the open position or resting orders (400),
a closing order without an opposite position (10018), or more initial margin than is available
(400 "Insufficient margin"). :class:`Rejected` and :class:`PlaceOutcome` are the per-order
values of a batch (2.8).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal

from botkit.exchange.models import MarginMode, OrderSide, PositionMode, PosSide
from botkit.frozen import quick_init
from botkit.sim import codes
from botkit.sim.accounts import SimPosition, order_margin
from botkit.sim.book import SimOrder
from botkit.sim.codes import SimError
from botkit.sim.config import InstrumentConfig
from botkit.sim.orders import OrderInput, is_closing

__all__ = ["Accepted", "PlaceOutcome", "Rejected", "account_rules"]

_CL_ORD_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_ZERO = Decimal(0)


@quick_init
@dataclass(frozen=True, slots=True)
class Rejected:
    """An order the wire parser already refused (it never reaches the engine's rules)."""

    cl_ord_id: str
    code: int
    msg: str


@quick_init
@dataclass(frozen=True, slots=True)
class PlaceOutcome:
    """The placement result of one order (2.8)."""

    cl_ord_id: str
    ord_id: str
    code: int
    msg: str


Accepted = tuple[MarginMode, PosSide, bool, Decimal, Decimal]
"""What an order that passed the account rules is placed with: its margin mode, position side,
whether it closes, its leverage, and the initial margin it reserves
(:func:`~botkit.sim.accounts.order_margin` of its size at its price, the mark for a MARKET
order: what it reserves while it rests, unfilled). A tuple the engine unpacks at once: no
object is built per order placed (issue 20)."""


def account_rules(
    order: OrderInput,
    inst: InstrumentConfig,
    mark: Decimal,
    mode: PositionMode,
    known_order: SimOrder | None,
    position: SimPosition | None,
    resting: Iterable[Iterable[SimOrder]],
    lever_of: Callable[[MarginMode, PosSide], Decimal],
    available: Callable[[], Decimal],
    currency: str,
) -> Accepted:
    """Check ``order`` against the account; ``known_order`` holds its ``clOrdId``, if taken;
    ``resting``: the orders resting on its symbol, in groups (a book's bids and asks, as they
    stand: no list of them all is built per order)."""
    cl = order.cl_ord_id
    if cl is not None:
        if not _CL_ORD_ID.match(cl):
            raise SimError.param(
                f"clOrdId {cl!r} must be 1 to 32 characters of A-Z, a-z, 0-9, '_' and '-'"
            )
        if known_order is not None:
            raise SimError(
                codes.DUPLICATE,
                f"Duplicate clOrdId: {cl} is already used by order {known_order.ord_id}",
            )
    symbol = inst.symbol
    pos_side = order.pos_side or PosSide.BOTH
    mgn_mode = order.mgn_mode or (position.mgn_mode if position else MarginMode.CROSS)
    if position is not None and position.mgn_mode is not mgn_mode:
        raise SimError.param(
            f"mgnMode {mgn_mode.value} differs from the open {position.mgn_mode.value} "
            f"position on {symbol}; use {position.mgn_mode.value} or close the position"
        )
    for group in resting:
        for other in group:
            if other.mgn_mode is not mgn_mode:
                raise SimError.param(
                    f"mgnMode {mgn_mode.value} differs from the open {other.mgn_mode.value} "
                    f"orders on {symbol}; use {other.mgn_mode.value} or cancel them"
                )
    closing = is_closing(order, mode)
    pos_qty = position.qty if position is not None else _ZERO
    is_buy = order.side is OrderSide.BUY
    if closing and not ((pos_qty > 0 and not is_buy) or (pos_qty < 0 and is_buy)):
        raise SimError(
            codes.NO_POSITION,
            f"No position to close: {order.side.value} {pos_side.value} on {symbol} is a "
            "closing order and there is no opposite position",
        )
    lever = lever_of(mgn_mode, pos_side)
    need = order_margin(
        order.sz,
        order.px if order.px is not None else mark,
        is_buy=is_buy,
        closing=closing,
        pos_qty=pos_qty,
        ct_val=inst.ctVal,
        lever=lever,
    )
    if need:
        avail = available()
        if need > avail:
            raise SimError(
                codes.BAD_PARAM,
                f"Insufficient margin: the order needs {need} {currency} of initial margin at "
                f"leverage {lever}, {avail} {currency} is available",
            )
    return mgn_mode, pos_side, closing, lever, need
