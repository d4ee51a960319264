"""The account's figures at the current marks (open positions, balance, equity), cached in layers.

Reading the account after every price move (the backtest does, once a candle) must not redo
what the move did not change, nor work out what the reader does not ask for. Three layers, all
in one :class:`Book`:

* the *book* proper, rebuilt when an order, a fill or a setting changes (``matcher.rev``,
  ``settings_rev``): per open position (:class:`Leg`) its mark-independent parts
  (``|qty| × ctVal``, ``qty × ctVal``, leverage, maintenance rate, the quantity not held by
  closing orders), the margin resting orders reserve, the wallet and its times;
* the *legs at their marks*: per position notional, upl, im and mm, recomputed for a position
  only when the mark of its symbol is no longer the one they were computed at (compared by
  identity: an unchanged mark is the same object) — what :meth:`AccountFigures.marked` gives
  and the open positions need;
* the *balance totals* (upl, im, mm, eq, availMgn, mmr, imr …), summed from the legs only when
  :meth:`AccountFigures.current` (the balance) asks and the legs moved since the last sum
  (``Book.summed``). Reading the positions after a move leaves them for later; with no open
  position they hold for any mark, so moving marks recomputes nothing.

:meth:`AccountFigures.equity` takes each leg's upl where it is up to date and works out only the
upl of a moved leg otherwise (without keeping it), then adds the wallet: no totals are summed.

The formulas themselves are written once, plainly, in :mod:`botkit.sim.accounts`
(:func:`~botkit.sim.accounts.leg_figures`, :func:`~botkit.sim.accounts.unrealized_pnl`,
:func:`~botkit.sim.accounts.order_margin`, :func:`~botkit.sim.accounts.balance_totals`); the
layers only decide when to call them and keep what they gave. Guarantee: every figure is what
the uncached :func:`~botkit.sim.accounts.position_figures` and
:func:`~botkit.sim.accounts.balance_figures` give now — values and exponents — in whichever
order positions, balance and equity are asked (or not asked at all; tests/sim/test_read_caches.py).
``Book.stamp`` changes whenever any figure may have changed, ``Book.number`` whenever anything
but the mark figures may have; a leg's figures change only with ``Leg.mark`` (for one book
number); readers key what they derive on them. The answers (:class:`BalanceFigures`,
:class:`OpenPosition`) are the same objects while their stamp holds; never mutate one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from botkit.exchange.models import MarginMode, PosSide
from botkit.outward import outward
from botkit.sim.accounts import (
    Account,
    BalanceFigures,
    PositionFigures,
    SimPosition,
    balance_sums,
    leg_figures,
    margin_ratios,
    order_margin,
    unrealized_pnl,
)
from botkit.sim.book import SimOrder
from botkit.sim.config import InstrumentConfig
from botkit.sim.matching import Matcher
from botkit.sim.prices import PriceSeries

__all__ = ["AccountFigures", "Book", "Leg", "MarkBounds", "OpenPosition"]

_ZERO = Decimal(0)
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


Bounds = tuple[Decimal, Decimal]
"""(lowest, highest) a figure can be."""


@dataclass(frozen=True, slots=True)
class MarkBounds:
    """Bounds of the figures a read gives while one symbol's mark is anywhere in ``mark`` and
    nothing else moves (:meth:`AccountFigures.between`): per open position, by (symbol, leg),
    ``upl``, ``im`` (= ``mgn``), ``mm`` and ``markPx``; for the account ``eq``, ``upl``,
    ``im``, ``mm`` and ``availMgn`` — named as the position and balance models name them."""

    mark: Bounds
    positions: dict[tuple[str, PosSide], dict[str, Bounds]]
    account: dict[str, Bounds]


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
        "at",
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
        self.at: dict[Decimal, tuple[Decimal, Decimal, Decimal, Decimal]] = {}
        """:func:`~botkit.sim.accounts.leg_figures` at marks asked for by
        :meth:`AccountFigures.between` (the leg's other inputs are fixed), by mark: each
        figure is rounded to 1e-8, so equal marks give the same figures whatever their
        exponent."""

    def figures_at(self, mark: Decimal) -> tuple[Decimal, Decimal, Decimal, Decimal]:
        """:func:`~botkit.sim.accounts.leg_figures` of the leg at ``mark``, kept for the next
        ask (at most :data:`_AT_MARKS` marks: the ends of the ranges one stretch proves)."""
        at = self.at
        found = at.get(mark)
        if found is None:
            found = leg_figures(self.size, self.signed, self.avg, mark, self.lever, self.mm_rate)
            if len(at) >= _AT_MARKS:
                at.clear()
            at[mark] = found
        return found


_AT_MARKS = 64
"""Marks whose figures a leg keeps for :meth:`AccountFigures.between`."""


class Book:
    """The account at the current marks: the legs and the balance totals, named as in
    :class:`~botkit.sim.accounts.BalanceFigures` (read-only for readers).

    The totals are those of the legs' figures when ``summed == stamp``; until then they are of
    older marks (:meth:`AccountFigures.current` brings them up to date). The margin ratios
    (``mmr``, ``imr``: two divisions) are worked out when first read after a sum: a ladder's
    rungs, each checked against the margin available, sum the totals once per rung.
    """

    __slots__ = (
        "_ratios",
        "avail",
        "balance",
        "c_time",
        "currency",
        "eq",
        "im",
        "iso_eq",
        "iso_hold",
        "iso_position_im",
        "iso_upl",
        "legs",
        "mm",
        "number",
        "order_im",
        "position_im",
        "rev",
        "settings",
        "stamp",
        "summed",
        "u_time",
        "upl",
        "wallet",
    )

    def __init__(self, number: int, rev: int, settings: int, acc: Account) -> None:
        self.number = number
        self.stamp = number
        self.summed = -1
        self.rev = rev
        self.settings = settings
        self.legs: list[Leg] = []
        self.currency = acc.currency
        self.wallet = acc.wallet
        self.c_time = acc.c_time
        self.u_time = acc.u_time
        self.order_im = self.iso_hold = _ZERO
        self.upl = self.position_im = self.mm = self.iso_upl = self.iso_position_im = _ZERO
        self.im = self.eq = self.iso_eq = self.avail = _ZERO
        self._ratios: tuple[Decimal, Decimal] | None = None
        self.balance: BalanceFigures | None = None

    @property
    def mmr(self) -> Decimal:
        """The maintenance margin ratio, divided when first read (the margin checks of a
        ladder's rungs never read it, and each rung's totals would divide it again)."""
        return self._margin_ratios()[0]

    @property
    def imr(self) -> Decimal:
        """The initial margin ratio, divided when first read (as :attr:`mmr`)."""
        return self._margin_ratios()[1]

    def _margin_ratios(self) -> tuple[Decimal, Decimal]:
        """Both ratios, kept until the totals change (``sum_totals`` resets them)."""
        ratios = self._ratios
        if ratios is None:
            ratios = self._ratios = margin_ratios(self.mm, self.im, self.eq)
        return ratios

    def sum_legs(self) -> None:
        """The balance totals from the legs' figures (which must be at the current marks):
        summed in the account's order, then :func:`~botkit.sim.accounts.balance_totals`, as
        :func:`~botkit.sim.accounts.balance_figures` does."""
        upl = position_im = mm = iso_upl = iso_position_im = _ZERO
        for leg in self.legs:
            leg_upl, leg_im = leg.upl, leg.im
            upl += leg_upl
            position_im += leg_im
            mm += leg.mm
            if leg.isolated:
                iso_upl += leg_upl
                iso_position_im += leg_im
        self.upl, self.position_im, self.mm = upl, position_im, mm
        self.iso_upl, self.iso_position_im = iso_upl, iso_position_im
        self.sum_totals()

    def sum_totals(self) -> None:
        """The balance totals from the legs' sums as they stand (:meth:`sum_legs` without
        summing the legs again): :func:`~botkit.sim.accounts.balance_sums`, the ratios when
        read (:func:`~botkit.sim.accounts.margin_ratios`) — together what
        :func:`~botkit.sim.accounts.balance_totals` gives."""
        self.im, self.eq, self.iso_eq, self.avail = balance_sums(
            self.wallet,
            self.upl,
            self.position_im,
            self.order_im,
            self.iso_upl,
            self.iso_position_im,
            self.iso_hold,
        )
        self._ratios = None
        self.balance = None
        self.summed = self.stamp


class AccountFigures:
    """Balance, open positions and equity of ``source``'s account at its current marks."""

    __slots__ = ("_book", "_source", "_stamps")

    def __init__(self, source: Source) -> None:
        self._source = source
        self._stamps = 0
        self._book = Book(0, -1, -1, source.account)

    def marked(self) -> Book:
        """The book for the current orders and settings, every leg's figures at its symbol's
        mark now (:func:`~botkit.sim.accounts.leg_figures`, redone for the legs whose mark
        moved); the balance totals maybe of older marks (``summed != stamp``)."""
        src = self._source
        book = self._book
        if book.rev != src.matcher.rev or book.settings != src.settings_rev:
            book = self._build()
        moved = False
        for leg in book.legs:
            mark = leg.series.mark
            if mark is not leg.mark:
                leg.notional, leg.upl, leg.im, leg.mm = leg_figures(
                    leg.size, leg.signed, leg.avg, mark, leg.lever, leg.mm_rate
                )
                leg.mark = mark  # last: a figure that raised is not taken for done
                leg.open = None
                moved = True
        if moved:
            self._stamps += 1
            book.stamp = self._stamps
        return book

    def current(self) -> Book:
        """The book for the current orders and settings, all its figures at the current marks."""
        book = self.marked()
        if book.summed != book.stamp:
            book.sum_legs()
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
            margin = self._margin(order)
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
        # the legs' figures and the totals wait for a reader (marked() / current()); with no
        # leg the totals, once summed, hold for any mark
        self._book = book
        return book

    def rested(self, order: SimOrder, rev: int, margin: Decimal) -> None:
        """``order`` just arrived and rests untouched, the matcher's only change since ``rev``:
        the book, if it was current at ``rev``, takes its ``margin`` (:meth:`_margin` of it, as
        the account rules worked it out before it arrived: its size, its price, the position
        and leverage then, which an order that rests untouched did not change) instead of being
        rebuilt.

        The book's sums are the ones :meth:`_build` makes now: it adds the open orders' margins
        in the matcher's order, and a new order is the last of them; a resting order that does
        not close changes no leg (what closing orders hold), the wallet or its times. Anything
        else (a closing order, a fill, a cancel, a setting) leaves the book to be rebuilt. A
        ladder placed rung by rung, each rung checked against the margin available, no longer
        rebuilds the margins of the rungs before it once per rung; and when the totals were
        summed, they are summed again from the legs' sums as they stand (no leg changed: a leg
        moves only under a new stamp, from :meth:`marked`), the ratios left until read."""
        src = self._source
        book = self._book
        matcher = src.matcher
        if (
            order.closing
            or book.rev != rev
            or matcher.rev != rev + 1
            or book.settings != src.settings_rev
            or matcher.open.get(order.ord_id) is not order
            or order.exec_qty
        ):
            return
        summed = book.summed == book.stamp
        book.order_im += margin
        if order.mgn_mode is MarginMode.ISOLATED:
            book.iso_hold += margin
        book.rev = matcher.rev
        self._stamps += 1
        book.stamp = self._stamps
        book.balance = None
        if summed:  # the legs' sums still hold (a leg moves only with a new stamp): the totals
            book.sum_totals()  # with the new order margin, as sum_legs() would give them now

    def _margin(self, order: SimOrder) -> Decimal:
        """The initial margin ``order`` reserves while it rests (:func:`order_margin`)."""
        src = self._source
        return order_margin(
            order.remaining,
            order.px if order.px is not None else _ZERO,
            is_buy=order.is_buy,
            closing=order.closing,
            pos_qty=src.account.position_qty(order.symbol, order.pos_side),
            ct_val=src.instruments[order.symbol].ctVal,
            lever=src.lever(order.symbol, order.mgn_mode, order.pos_side),
        )

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

        Sums the legs' upl as the balance does, taking a leg's own where its figures are at the
        current mark and working out only the upl of a leg whose mark moved since (not kept: the
        rest waits for a reader); no other figure is computed. An equity curve sampled every
        candle stays cheap whether or not a cycle read the positions or the balance in between.
        """
        src = self._source
        book = self._book
        if book.rev != src.matcher.rev or book.settings != src.settings_rev:
            book = self._build()
        upl = _ZERO
        for leg in book.legs:  # as sum_legs() sums them
            mark = leg.series.mark
            if mark is leg.mark:
                upl += leg.upl
            else:
                upl += unrealized_pnl(leg.signed, leg.avg, mark)
        return book.wallet + upl

    def equity_at(self, series: PriceSeries, marks: Sequence[Decimal]) -> list[Decimal]:
        """:meth:`equity` for each of ``marks`` as the mark of ``series`` (its symbol's legs
        at that mark, the other legs at their marks now): the same sums in the same order,
        worked out once per distinct mark."""
        src = self._source
        book = self._book
        if book.rev != src.matcher.rev or book.settings != src.settings_rev:
            book = self._build()
        wallet = book.wallet
        if not book.legs:
            return [wallet] * len(marks)
        found: dict[Decimal, Decimal] = {}
        out: list[Decimal] = []
        legs = [(leg.series is series, leg) for leg in book.legs]
        for mark in marks:
            eq = found.get(mark)
            if eq is None:
                upl = _ZERO
                for moved, leg in legs:  # as equity() sums them
                    at = mark if moved else leg.series.mark
                    upl += leg.upl if at is leg.mark else unrealized_pnl(leg.signed, leg.avg, at)
                eq = found[mark] = wallet + upl
            out.append(eq)
        return out

    def between(self, series: PriceSeries, lo: Decimal, hi: Decimal) -> MarkBounds | None:
        """Bounds of the figures a read gives with the mark of ``series`` anywhere from ``lo``
        to ``hi`` (``0 < lo <= hi``) and the rest of the account as now (the orders, the
        positions, the settings, the other marks); None when they cannot be given. Keeps only
        the legs' figures at ``lo`` and ``hi`` (:meth:`Leg.figures_at`: one stretch's proofs
        share their ends).

        Why they hold: with the book fixed, a position's figures at mark ``m`` are the
        :func:`~botkit.sim.accounts.leg_figures` of ``m``, each a chain of monotone steps —
        ``m - P`` and ``q·ctVal × (m - P)`` (monotone in ``m``, in the direction of ``q``'s
        sign), ``|q|·ctVal × m``, ``/ lever`` (> 0) and ``× mM`` (>= 0), each rounded by
        the context (a rounding to nearest is monotone), then to 1e-8 (also) — so over
        ``[lo, hi]`` each lies between its values at ``lo`` and at ``hi``. The account's
        totals add those in the account's order and take ``max(0, eq - im)`` as
        :func:`~botkit.sim.accounts.balance_totals` does; the bounds add the bounds in the same
        order rounding down for the lowest and up for the highest (at the context's
        precision, so whatever rounding the real sums use, they stay inside), and the
        available margin is bounded from the lowest equity less the highest margin and the
        other way round (equity and margin rise together: their difference after rounding is
        not monotone)."""
        if not _ZERO < lo <= hi:
            return None
        src = self._source
        book = self._book
        if book.rev != src.matcher.rev or book.settings != src.settings_rev:
            book = self._build()
        down, up = outward()
        positions: dict[tuple[str, PosSide], dict[str, Bounds]] = {}
        upl_lo = upl_hi = im_lo = im_hi = mm_lo = mm_hi = _ZERO
        for leg in book.legs:  # as sum_legs() sums them
            if leg.series is series:
                if not (leg.lever > _ZERO and leg.mm_rate >= _ZERO and leg.size >= _ZERO):
                    return None
                _, upl_a, im_a, mm_a = leg.figures_at(lo)
                _, upl_b, im_b, mm_b = leg.figures_at(hi)
                upl: Bounds = (min(upl_a, upl_b), max(upl_a, upl_b))
                im: Bounds = (im_a, im_b)
                mm: Bounds = (mm_a, mm_b)
                mark: Bounds = (lo, hi)
            else:
                at = leg.series.mark
                _, one_upl, one_im, one_mm = leg_figures(
                    leg.size, leg.signed, leg.avg, at, leg.lever, leg.mm_rate
                )
                upl, im, mm, mark = (one_upl, one_upl), (one_im, one_im), (one_mm, one_mm), (at, at)
            positions[(leg.symbol, leg.pos.pos_side)] = {
                "upl": upl, "im": im, "mgn": im, "mm": mm, "markPx": mark,
            }  # fmt: skip
            upl_lo, upl_hi = down.add(upl_lo, upl[0]), up.add(upl_hi, upl[1])
            im_lo, im_hi = down.add(im_lo, im[0]), up.add(im_hi, im[1])
            mm_lo, mm_hi = down.add(mm_lo, mm[0]), up.add(mm_hi, mm[1])
        total_im: Bounds = (down.add(im_lo, book.order_im), up.add(im_hi, book.order_im))
        eq: Bounds = (down.add(book.wallet, upl_lo), up.add(book.wallet, upl_hi))
        avail: Bounds = (
            max(_ZERO, down.subtract(eq[0], total_im[1])),
            max(_ZERO, up.subtract(eq[1], total_im[0])),
        )
        account = {
            "eq": eq, "upl": (upl_lo, upl_hi), "im": total_im, "mm": (mm_lo, mm_hi),
            "availMgn": avail,
        }  # fmt: skip
        return MarkBounds((lo, hi), positions, account)

    def positions(self, symbol: str | None = None) -> list[OpenPosition]:
        """The open positions (of ``symbol``), in the account's order, at the current marks."""
        out: list[OpenPosition] = []
        for leg in self.marked().legs:
            if symbol is not None and leg.symbol != symbol:
                continue
            op = leg.open
            if op is None:
                figures = PositionFigures(leg.notional, leg.upl, leg.im, leg.mm)
                op = leg.open = OpenPosition(leg.pos, figures, leg.mark, leg.lever, leg.avail)
            out.append(op)
        return out
