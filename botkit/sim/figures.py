"""The account's figures at the current marks (open positions, balance, equity), cached in layers.

Reading the account after every price move (the backtest does, once a candle) must not redo
what the move did not change. Two layers, both in one :class:`Book`:

* the *book* proper, rebuilt when an order, a fill or a setting changes (``matcher.rev``,
  ``settings_rev``): per open position (:class:`Leg`) its mark-independent parts
  (``|qty| × ctVal``, ``qty × ctVal``, leverage, maintenance rate, the quantity not held by
  closing orders), the margin resting orders reserve, the wallet and its times;
* the *marks*: per position notional, upl, im and mm, and from them the balance totals,
  recomputed only when the mark of a symbol that holds a position is no longer the one they were
  computed at (compared by identity: an unchanged mark is the same object). With no open
  position the balance does not depend on any mark, so moving marks recomputes nothing.

Guarantee: every figure is computed with the same Decimal operations, in the same order, as
:func:`~botkit.sim.accounts.position_figures` and the balance formula of
:mod:`botkit.sim.accounts` — values and exponents are those an uncached computation gives.
``Book.stamp`` changes whenever any figure may have changed, ``Book.number`` whenever anything
but the mark figures may have; readers key what they derive on them. The answers
(:class:`BalanceFigures`, :class:`OpenPosition`) are the same objects while their stamp holds;
never mutate one.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Protocol

from botkit.exchange.models import MarginMode, PosSide
from botkit.sim.accounts import (
    MONEY_Q,
    Account,
    BalanceFigures,
    PositionFigures,
    SimPosition,
    order_margin,
)
from botkit.sim.config import InstrumentConfig
from botkit.sim.matching import Matcher
from botkit.sim.prices import PriceSeries

__all__ = ["AccountFigures", "Book", "Leg", "OpenPosition"]

_ZERO = Decimal(0)
_HALF_EVEN = ROUND_HALF_EVEN
_QUANTIZE = Decimal.quantize
_NO_MARK = Decimal("NaN")
"""A leg's mark before its first figures: no price series ever holds this very object."""


@dataclass(slots=True)
class OpenPosition:
    """An open position with its figures at the current mark (shared by the caches: never mutate
    one; not frozen only because frozen dataclasses cost three times as much to build)."""

    position: SimPosition
    figures: PositionFigures
    mark: Decimal
    lever: Decimal
    avail_qty: Decimal


class Source(Protocol):
    """What the figures are derived from (the engine)."""

    matcher: Matcher
    account: Account
    instruments: dict[str, InstrumentConfig]
    prices: dict[str, PriceSeries]
    settings_rev: int

    def lever(self, symbol: str, mgn_mode: MarginMode, pos_side: PosSide) -> Decimal: ...


class Leg:
    """One open position: its book part, and its figures at ``mark`` (read-only for readers)."""

    __slots__ = (
        "avail",
        "avg",
        "im",
        "isolated",
        "lever",
        "mark",
        "mm",
        "mm_rate",
        "notional",
        "open",
        "pos",
        "series",
        "signed",
        "size",
        "symbol",
        "upl",
    )

    def __init__(
        self, pos: SimPosition, inst: InstrumentConfig, series: PriceSeries, lever: Decimal
    ) -> None:
        self.pos = pos
        self.symbol = pos.symbol
        self.series = series
        self.size = abs(pos.qty) * inst.ctVal
        self.signed = pos.qty * inst.ctVal
        self.avg = pos.avg_px
        self.lever = lever
        self.mm_rate = inst.mM
        self.isolated = pos.mgn_mode is MarginMode.ISOLATED
        self.avail = _ZERO
        """The quantity closing orders do not hold (``availQty``)."""
        self.mark = _NO_MARK
        self.notional = self.upl = self.im = self.mm = _ZERO
        self.open: OpenPosition | None = None


class Book:
    """The account at the current marks: the legs and the balance totals, named as in
    :class:`~botkit.sim.accounts.BalanceFigures` (read-only for readers)."""

    __slots__ = (
        "avail",
        "balance",
        "c_time",
        "currency",
        "eq",
        "im",
        "imr",
        "iso_eq",
        "iso_hold",
        "iso_position_im",
        "iso_upl",
        "legs",
        "mm",
        "mmr",
        "number",
        "order_im",
        "position_im",
        "rev",
        "settings",
        "stamp",
        "u_time",
        "upl",
        "wallet",
    )

    def __init__(self, number: int, rev: int, settings: int, acc: Account) -> None:
        self.number = number
        self.stamp = number
        self.rev = rev
        self.settings = settings
        self.legs: list[Leg] = []
        self.currency = acc.currency
        self.wallet = acc.wallet
        self.c_time = acc.c_time
        self.u_time = acc.u_time
        self.order_im = self.iso_hold = _ZERO
        self.upl = self.position_im = self.mm = self.iso_upl = self.iso_position_im = _ZERO
        self.im = self.eq = self.iso_eq = self.avail = self.mmr = self.imr = _ZERO
        self.balance: BalanceFigures | None = None

    def refresh(self) -> None:
        """Every leg's figures at its symbol's mark now, and the balance totals from them: the
        position figures and the balance formula, step by step (inline: once per price move)."""
        quantize, cent, half_even, zero = _QUANTIZE, MONEY_Q, _HALF_EVEN, _ZERO
        upl = position_im = mm = iso_upl = iso_position_im = zero
        for leg in self.legs:
            leg.mark = mark = leg.series.mark
            notional = leg.notional = quantize(leg.size * mark, cent, half_even)
            leg_upl = leg.upl = quantize(leg.signed * (mark - leg.avg), cent, half_even)
            leg_im = leg.im = quantize(notional / leg.lever, cent, half_even)
            leg_mm = leg.mm = quantize(notional * leg.mm_rate, cent, half_even)
            leg.open = None
            upl += leg_upl
            position_im += leg_im
            mm += leg_mm
            if leg.isolated:
                iso_upl += leg_upl
                iso_position_im += leg_im
        self.upl, self.position_im, self.mm = upl, position_im, mm
        self.iso_upl, self.iso_position_im = iso_upl, iso_position_im
        self.im = im = position_im + self.order_im
        self.eq = eq = self.wallet + upl
        self.iso_eq = iso_position_im + iso_upl + self.iso_hold
        avail = eq - im
        self.avail = avail if avail > zero else zero  # max(_ZERO, eq - im): first of equals
        if eq > zero:
            self.mmr = quantize(mm / eq, cent, half_even)
            self.imr = quantize(im / eq, cent, half_even)
        else:
            self.mmr = self.imr = zero
        self.balance = None


class AccountFigures:
    """Balance, open positions and equity of ``source``'s account at its current marks."""

    __slots__ = ("_book", "_source", "_stamps")

    def __init__(self, source: Source) -> None:
        self._source = source
        self._stamps = 0
        self._book = Book(0, -1, -1, source.account)

    def current(self) -> Book:
        """The book for the current orders and settings, its figures at the current marks."""
        book = self._booked()
        for leg in book.legs:
            if leg.series.mark is not leg.mark:
                book.refresh()
                self._stamps += 1
                book.stamp = self._stamps
                break
        return book

    def _booked(self) -> Book:
        """The book for the current orders and settings (its figures maybe at older marks)."""
        src = self._source
        book = self._book
        if book.rev != src.matcher.rev or book.settings != src.settings_rev:
            book = self._build()
        return book

    def _build(self) -> Book:
        src = self._source
        acc = src.account
        instruments, prices = src.instruments, src.prices
        self._stamps += 1
        book = Book(self._stamps, src.matcher.rev, src.settings_rev, acc)
        held: dict[tuple[str, PosSide], Decimal] = {}
        order_im = iso_hold = _ZERO
        for order in src.matcher.open.values():
            if order.closing:
                key = (order.symbol, order.pos_side)
                held[key] = held.get(key, _ZERO) + order.remaining
            margin = order_margin(
                order.remaining,
                order.px if order.px is not None else _ZERO,
                is_buy=order.is_buy,
                closing=order.closing,
                pos_qty=acc.position_qty(order.symbol, order.pos_side),
                ct_val=instruments[order.symbol].ctVal,
                lever=src.lever(order.symbol, order.mgn_mode, order.pos_side),
            )
            order_im += margin
            if order.mgn_mode is MarginMode.ISOLATED:
                iso_hold += margin
        book.order_im, book.iso_hold = order_im, iso_hold
        for key, pos in acc.positions.items():
            leg = Leg(
                pos,
                instruments[pos.symbol],
                prices[pos.symbol],
                src.lever(pos.symbol, pos.mgn_mode, pos.pos_side),
            )
            leg.avail = max(_ZERO, abs(pos.qty) - held.get(key, _ZERO))
            book.legs.append(leg)
        book.refresh()  # with no leg the totals hold for any mark: current() never redoes them
        self._book = book
        return book

    def balance(self) -> BalanceFigures:
        """Equity, margins and PnL, consistent with positions and resting orders right now."""
        b = self.current()
        figures = b.balance
        if figures is None:
            figures = b.balance = BalanceFigures(  # positional: a third of the cost of keywords
                b.currency,
                b.wallet,
                b.eq,
                b.upl,
                b.im,
                b.mm,
                b.position_im,
                b.order_im,
                b.iso_eq,
                b.iso_upl,
                b.iso_hold,
                b.iso_position_im,
                b.avail,
                b.mmr,
                b.imr,
                b.c_time,
                b.u_time,
                [],
            )
        return figures

    def equity(self) -> Decimal:
        """The balance's ``eq`` (wallet + unrealized PnL) now, the same Decimal.

        After a price move that nothing has read yet, only the positions' upl is worked out
        (the rest waits for a reader): an equity curve sampled every candle stays cheap even
        when no cycle reads the balance in between.
        """
        book = self._booked()
        for leg in book.legs:
            if leg.series.mark is not leg.mark:
                break
        else:
            return book.eq
        quantize, cent, half_even = _QUANTIZE, MONEY_Q, _HALF_EVEN
        upl = _ZERO
        for leg in book.legs:  # as refresh() sums them
            upl += quantize(leg.signed * (leg.series.mark - leg.avg), cent, half_even)
        return book.wallet + upl

    def positions(self, symbol: str | None = None) -> list[OpenPosition]:
        """The open positions (of ``symbol``), in the account's order, at the current marks."""
        out: list[OpenPosition] = []
        for leg in self.current().legs:
            if symbol is not None and leg.symbol != symbol:
                continue
            op = leg.open
            if op is None:
                figures = PositionFigures(leg.notional, leg.upl, leg.im, leg.mm)
                op = leg.open = OpenPosition(leg.pos, figures, leg.mark, leg.lever, leg.avail)
            out.append(op)
        return out
