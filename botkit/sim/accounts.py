"""The futures account: wallet, positions (one-way and hedge), PnL, fees and the margin model.

Linear (USDT-margined) contracts: a position of ``q`` contracts (signed: long > 0, short < 0;
hedge-mode legs keep the same sign convention: LONG ≥ 0, SHORT ≤ 0) at average entry ``P`` has

* notional = ``|q| × ctVal × mark``, unrealized PnL = ``q × ctVal × (mark − P)``,
* initial margin ``im`` = notional / leverage, maintenance margin ``mm`` = notional × ``mM``.

A resting order reserves ``open part × ctVal × px / leverage``, where the open part is what
would add exposure (0 for reduce-only and hedge-mode closes; in one-way mode the size beyond the
opposite position it would close). Equity = wallet + unrealized PnL; available margin =
max(0, equity − im). Money is rounded to 1e-8 (half even) where it is computed, so the sums the
balance reports add up exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

from botkit.exchange.models import MarginMode, OrderSide, PosSide
from botkit.frozen import quick_init

__all__ = [
    "MONEY_Q",
    "Account",
    "BalanceFigures",
    "FillEffect",
    "PositionFigures",
    "PositionRecord",
    "SimPosition",
    "balance_figures",
    "balance_sums",
    "balance_totals",
    "leg_figures",
    "margin_ratios",
    "order_margin",
    "position_figures",
    "q8",
    "unrealized_pnl",
]

MONEY_Q = Decimal("1e-8")
_ZERO = Decimal(0)


def q8(value: Decimal) -> Decimal:
    """``value`` rounded to 1e-8, half to even (money and average prices)."""
    return value.quantize(MONEY_Q, ROUND_HALF_EVEN)


@dataclass(slots=True)
class SimPosition:
    """An open position (one-way: posSide BOTH; hedge: one LONG or SHORT leg)."""

    symbol: str
    pos_side: PosSide
    mgn_mode: MarginMode
    qty: Decimal
    avg_px: Decimal
    c_time: int
    u_time: int
    pnl: Decimal = _ZERO
    """Realized PnL of this position so far (price PnL, fees not included)."""
    fee: Decimal = _ZERO
    closed_qty: Decimal = _ZERO
    close_px_qty: Decimal = _ZERO

    @property
    def side(self) -> OrderSide:
        return OrderSide.BUY if self.qty > 0 else OrderSide.SELL


@quick_init
@dataclass(frozen=True, slots=True)
class PositionRecord:
    """A closed position, as position history (2.7) reports it."""

    id: int
    symbol: str
    side: OrderSide
    mgn_mode: MarginMode
    pos_side: PosSide
    open_avg_px: Decimal
    close_avg_px: Decimal
    closed_qty: Decimal
    pnl: Decimal
    fee: Decimal
    c_time: int
    u_time: int


@quick_init
@dataclass(frozen=True, slots=True)
class FillEffect:
    realized: Decimal
    closed: SimPosition | None
    """The position this fill closed (its final state), if any."""


@dataclass(slots=True)
class PositionFigures:
    """A position's figures at one mark. Not frozen only because frozen dataclasses cost three
    times as much to build (the backtest builds one a candle); shared by the engine's caches, so
    never mutate one."""

    notional: Decimal
    upl: Decimal
    im: Decimal
    mm: Decimal


@dataclass(slots=True)
class BalanceFigures:
    """Everything ``/v3/account/balance`` reports, as Decimals (shared by the engine's caches:
    never mutate one)."""

    currency: str
    wallet: Decimal
    eq: Decimal = _ZERO
    upl: Decimal = _ZERO
    im: Decimal = _ZERO
    mm: Decimal = _ZERO
    position_im: Decimal = _ZERO
    order_im: Decimal = _ZERO
    iso_eq: Decimal = _ZERO
    iso_upl: Decimal = _ZERO
    iso_hold: Decimal = _ZERO
    iso_position_im: Decimal = _ZERO
    avail: Decimal = _ZERO
    mmr: Decimal = _ZERO
    imr: Decimal = _ZERO
    c_time: int = 0
    u_time: int = 0
    details: list[BalanceFigures] = field(default_factory=list)


def unrealized_pnl(signed_size: Decimal, avg_px: Decimal, mark: Decimal) -> Decimal:
    """``q × ctVal × (mark − P)``, to 1e-8 (``signed_size`` is ``q × ctVal``)."""
    return (signed_size * (mark - avg_px)).quantize(MONEY_Q, ROUND_HALF_EVEN)


def leg_figures(
    size: Decimal,
    signed_size: Decimal,
    avg_px: Decimal,
    mark: Decimal,
    lever: Decimal,
    mm_rate: Decimal,
) -> tuple[Decimal, Decimal, Decimal, Decimal]:
    """(notional, upl, im, mm) at ``mark`` of a position of ``size`` = ``|q| × ctVal`` and
    ``signed_size`` = ``q × ctVal`` at average entry ``avg_px``: notional = ``size × mark``,
    upl (:func:`unrealized_pnl`), im = notional / leverage, mm = notional × ``mM``; each to
    1e-8, im and mm from the rounded notional."""
    notional = (size * mark).quantize(MONEY_Q, ROUND_HALF_EVEN)
    return (
        notional,
        unrealized_pnl(signed_size, avg_px, mark),
        (notional / lever).quantize(MONEY_Q, ROUND_HALF_EVEN),
        (notional * mm_rate).quantize(MONEY_Q, ROUND_HALF_EVEN),
    )


def position_figures(
    pos: SimPosition, mark: Decimal, ct_val: Decimal, lever: Decimal, mm_rate: Decimal
) -> PositionFigures:
    """``pos``'s figures at ``mark`` (:func:`leg_figures`)."""
    return PositionFigures(
        *leg_figures(abs(pos.qty) * ct_val, pos.qty * ct_val, pos.avg_px, mark, lever, mm_rate)
    )


def balance_totals(
    wallet: Decimal,
    upl: Decimal,
    position_im: Decimal,
    mm: Decimal,
    order_im: Decimal,
    iso_upl: Decimal,
    iso_position_im: Decimal,
    iso_hold: Decimal,
) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal, Decimal]:
    """(im, eq, iso_eq, avail, mmr, imr) of an account from its sums: ``upl``, ``position_im``
    and ``mm`` over its positions (``iso_upl``, ``iso_position_im`` over the isolated ones),
    ``order_im`` the margin its resting orders reserve (``iso_hold``, the isolated orders').

    im = position im + order im; equity = wallet + upl; isolated equity = isolated position
    im + isolated upl + isolated hold; available = max(0, equity − im); the margin ratios
    mm / equity and im / equity to 1e-8 (0 unless equity > 0)."""
    im, eq, iso_eq, avail = balance_sums(
        wallet, upl, position_im, order_im, iso_upl, iso_position_im, iso_hold
    )
    mmr, imr = margin_ratios(mm, im, eq)
    return im, eq, iso_eq, avail, mmr, imr


def balance_sums(
    wallet: Decimal,
    upl: Decimal,
    position_im: Decimal,
    order_im: Decimal,
    iso_upl: Decimal,
    iso_position_im: Decimal,
    iso_hold: Decimal,
) -> tuple[Decimal, Decimal, Decimal, Decimal]:
    """(im, eq, iso_eq, avail): :func:`balance_totals` but the margin ratios (an order's
    check of the margin available needs no division)."""
    im = position_im + order_im
    eq = wallet + upl
    iso_eq = iso_position_im + iso_upl + iso_hold
    avail = max(_ZERO, eq - im)
    return im, eq, iso_eq, avail


def margin_ratios(mm: Decimal, im: Decimal, eq: Decimal) -> tuple[Decimal, Decimal]:
    """(mmr, imr) = mm / equity and im / equity to 1e-8, 0 unless equity > 0
    (:func:`balance_totals`)."""
    if eq > _ZERO:
        return (
            (mm / eq).quantize(MONEY_Q, ROUND_HALF_EVEN),
            (im / eq).quantize(MONEY_Q, ROUND_HALF_EVEN),
        )
    return _ZERO, _ZERO


def balance_figures(
    account: Account,
    positions: Iterable[tuple[SimPosition, PositionFigures]],
    orders: Iterable[tuple[MarginMode, Decimal]],
) -> BalanceFigures:
    """The balance, plainly: ``account``'s wallet, each open position with its figures at the
    current mark (in the account's order) and the margin each resting order reserves
    (:func:`order_margin`, in the book's order), summed and put through :func:`balance_totals`.
    :class:`botkit.sim.figures.AccountFigures` caches the same computation."""
    upl = position_im = mm = iso_upl = iso_position_im = order_im = iso_hold = _ZERO
    for pos, f in positions:
        upl += f.upl
        position_im += f.im
        mm += f.mm
        if pos.mgn_mode is MarginMode.ISOLATED:
            iso_upl += f.upl
            iso_position_im += f.im
    for mgn_mode, margin in orders:
        order_im += margin
        if mgn_mode is MarginMode.ISOLATED:
            iso_hold += margin
    im, eq, iso_eq, avail, mmr, imr = balance_totals(
        account.wallet, upl, position_im, mm, order_im, iso_upl, iso_position_im, iso_hold
    )
    return BalanceFigures(
        account.currency,
        account.wallet,
        eq,
        upl,
        im,
        mm,
        position_im,
        order_im,
        iso_eq,
        iso_upl,
        iso_hold,
        iso_position_im,
        avail,
        mmr,
        imr,
        account.c_time,
        account.u_time,
    )


def open_part(remaining: Decimal, is_buy: bool, closing: bool, pos_qty: Decimal) -> Decimal:
    """The part of an order's remaining size that would add exposure."""
    if closing:
        return _ZERO
    if pos_qty and (pos_qty > 0) != is_buy:
        return max(_ZERO, remaining - abs(pos_qty))
    return remaining


def order_margin(
    remaining: Decimal,
    px: Decimal,
    *,
    is_buy: bool,
    closing: bool,
    pos_qty: Decimal,
    ct_val: Decimal,
    lever: Decimal,
) -> Decimal:
    part = open_part(remaining, is_buy, closing, pos_qty)
    return q8(part * ct_val * px / lever) if part else _ZERO


class Account:
    """Wallet and open positions of the one simulated account."""

    def __init__(self, currency: str, amount: Decimal, now_ms: int) -> None:
        self.currency = currency
        self.wallet = amount
        self.c_time = now_ms
        self.u_time = now_ms
        self.positions: dict[tuple[str, PosSide], SimPosition] = {}
        self.fills = 0
        """Fills applied so far: the positions and the wallet change only with one."""

    def position_qty(self, symbol: str, pos_side: PosSide) -> Decimal:
        pos = self.positions.get((symbol, pos_side))
        return pos.qty if pos is not None else _ZERO

    def apply_fill(
        self,
        *,
        symbol: str,
        pos_side: PosSide,
        mgn_mode: MarginMode,
        is_buy: bool,
        qty: Decimal,
        px: Decimal,
        fee: Decimal,
        ct_val: Decimal,
        now_ms: int,
    ) -> FillEffect:
        """Book one execution: open, add, reduce, close or (one-way) flip the position."""
        self.fills += 1
        key = (symbol, pos_side)
        pos = self.positions.get(key)
        signed = qty if is_buy else -qty
        self.wallet -= fee
        self.u_time = now_ms
        if pos is None:
            self.positions[key] = SimPosition(
                symbol, pos_side, mgn_mode, signed, px, now_ms, now_ms, fee=fee
            )
            return FillEffect(_ZERO, None)
        pos.u_time = now_ms
        if (pos.qty > 0) == is_buy:  # adding
            total = abs(pos.qty) + qty
            pos.avg_px = q8((abs(pos.qty) * pos.avg_px + qty * px) / total)
            pos.qty += signed
            pos.fee += fee
            return FillEffect(_ZERO, None)
        closed = min(qty, abs(pos.qty))
        direction = 1 if pos.qty > 0 else -1
        realized = q8(closed * ct_val * (px - pos.avg_px) * direction)
        close_fee = fee if closed == qty else q8(fee * closed / qty)
        pos.pnl += realized
        pos.fee += close_fee
        pos.closed_qty += closed
        pos.close_px_qty += closed * px
        pos.qty += closed if is_buy else -closed
        self.wallet += realized
        if pos.qty:
            return FillEffect(realized, None)
        del self.positions[key]
        rest = qty - closed
        if rest:  # flip through zero: the rest opens a new position at the same price
            self.positions[key] = SimPosition(
                symbol,
                pos_side,
                mgn_mode,
                rest if is_buy else -rest,
                px,
                now_ms,
                now_ms,
                fee=fee - close_fee,
            )
        return FillEffect(realized, pos)
