"""The paper exchange's engine: one account on one exchange, driven by an injected clock.

:class:`SimEngine` owns the instruments (with a status tests and operators can change), the mark
price of each (:mod:`botkit.sim.prices`), the account (:mod:`botkit.sim.accounts`), the
history (:mod:`botkit.sim.history`) and the matcher (:mod:`botkit.sim.matching`, resting books
and executions). A new order passes :func:`~botkit.sim.orders.check_static` (instrument rules)
and the account rules here — duplicate ``clOrdId``, reduce-only without a position, margin —
before the matcher sees it. Leverage, position mode, cancels, open orders, positions and the
balance are read and changed here; positions, balance and equity come from
:mod:`botkit.sim.figures` (cached per book, redone only for the marks that moved).

``stpMode`` is accepted and recorded; with one account on a synthetic market there is nobody
to self-trade with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from botkit.clock import Clock
from botkit.exchange.models import (
    InstrumentStatus,
    MarginMode,
    OrderSide,
    PositionMode,
    PosSide,
)
from botkit.frozen import quick_init
from botkit.sim import codes
from botkit.sim.accounts import Account, BalanceFigures
from botkit.sim.book import OrderState, RestingBook, SimOrder
from botkit.sim.codes import SimError
from botkit.sim.config import InstrumentConfig, SimConfig
from botkit.sim.figures import AccountFigures, MarkBounds, OpenPosition
from botkit.sim.history import History, Window, make_window, order_filter, select
from botkit.sim.ids import IdGen
from botkit.sim.matching import USER_CANCEL, Matcher
from botkit.sim.orders import BandMemo, OrderInput, check_static
from botkit.sim.placing import PlaceOutcome, Rejected, account_rules
from botkit.sim.prices import PriceSeries

__all__ = ["MAX_BATCH", "OpenPosition", "PlaceOutcome", "Rejected", "SimEngine"]

MAX_BATCH = 10
_MAX_STEPS = 3600  # random-walk steps replayed one by one after an idle gap; older ones jump
_ZERO = Decimal(0)


@quick_init
@dataclass(frozen=True, slots=True)
class _Venue:
    """What every order of one batch on one symbol meets (see :meth:`SimEngine._venue`)."""

    inst: InstrumentConfig
    status: InstrumentStatus
    mark: Decimal
    book: RestingBook
    mode: PositionMode
    strict_text: bool
    lever_of: Callable[[MarginMode, PosSide], Decimal]


class SimEngine:
    """One simulated futures account on one simulated exchange, driven by an injected clock."""

    def __init__(self, config: SimConfig, clock: Clock) -> None:
        self.config = config
        self.clock = clock
        now = clock.now_ms()
        self.instruments: dict[str, InstrumentConfig] = {i.symbol: i for i in config.instruments}
        self.status: dict[str, InstrumentStatus] = {i.symbol: i.status for i in config.instruments}
        self.prices: dict[str, PriceSeries] = {
            i.symbol: PriceSeries(
                symbol=i.symbol,
                start_px=i.start_px,
                tick=i.tSz,
                min_px=i.minPx,
                max_px=i.maxPx,
                volatility=i.volatility,
                seed=config.seed,
                history_minutes=config.prices.candle_history_minutes,
                now_ms=now,
            )
            for i in config.instruments
        }
        self.account = Account(config.balance.currency, config.balance.amount, now)
        self.history = History()
        self.ids = IdGen(clock)
        self.matcher = Matcher(
            instruments=self.instruments,
            prices=self.prices,
            account=self.account,
            history=self.history,
            ids=self.ids,
            maker=config.fees.maker,
            taker=config.fees.taker,
            depth=config.prices.depth_per_fill or None,
        )
        self.mark_rev = 0
        """Bumped whenever a mark moves."""
        self.settings_rev = 0
        """Bumped when leverage or the position mode changes."""
        self.figures = AccountFigures(self)
        """Balance, positions and equity at the current marks, cached (see its module)."""
        self._marking = {s: (self.prices[s], self.matcher.books[s]) for s in self.instruments}
        self.position_mode = config.position_mode
        self._levers: dict[tuple[str, MarginMode, PosSide], Decimal] = {}
        self._orders: dict[int, SimOrder] = {}
        self._by_cl: dict[str, SimOrder] = {}
        self._walk = config.prices.model == "random_walk"
        self._step_ms = config.prices.step_ms
        self._last_step = now
        self._placed_since_prune = 0
        self._band = BandMemo()  # the orders of a batch meet the same band
        self.duplicate_check = config.duplicate_check
        """Refuse a ``clOrdId`` already used (250); off: place it again (see SimConfig)."""
        self.drift = config.prices.drift_per_request
        """Fraction every mark moves by before each request is answered (0: none)."""

    # --- instruments and prices ----------------------------------------------------------
    def instrument(self, symbol: str) -> InstrumentConfig:
        inst = self.instruments.get(symbol)
        if inst is None:
            raise SimError(codes.SYMBOL_NOT_FOUND, f"Symbol does not exist: {symbol}")
        return inst

    def set_status(self, symbol: str, status: InstrumentStatus | str) -> None:
        """Change an instrument's trading status (tests, operators)."""
        self.instrument(symbol)
        self.status[symbol] = InstrumentStatus(status)

    def mark(self, symbol: str) -> Decimal:
        self.instrument(symbol)
        return self.prices[symbol].mark

    def set_mark(self, symbol: str, px: Decimal) -> None:
        """Move the mark of ``symbol`` to ``px`` now and fill the resting orders it crosses.

        When ``px`` crosses no resting order this is a candle update and two comparisons.
        """
        found = self._marking.get(symbol)
        if found is None:
            raise SimError(codes.SYMBOL_NOT_FOUND, f"Symbol does not exist: {symbol}")
        if px <= _ZERO:
            raise ValueError(f"set_mark({symbol!r}, {px}): a mark price must be > 0")
        series, book = found
        now = self.clock.now_ms()
        series.record(px, now)
        self.mark_rev += 1
        if px <= book.best_bid or px >= book.best_ask:
            self.matcher.match(symbol, px, now)

    def quiet_band(self, symbol: str) -> tuple[Decimal, Decimal]:
        """``(low, high)``: while the mark of ``symbol`` stays strictly between them, moving it
        (:meth:`set_mark`) fills, cancels or changes no order and no position — only the mark,
        its candles and the figures that follow the mark move. The best resting bid and ask
        (``-Infinity`` / ``Infinity`` on an empty side). This simulator has no stop or trigger
        orders, liquidation, funding charges or expiring orders: nothing else happens as the
        mark or the clock moves (see docs/simulator.md)."""
        book = self.matcher.books.get(symbol)
        if book is None:
            raise SimError(codes.SYMBOL_NOT_FOUND, f"Symbol does not exist: {symbol}")
        return book.best_bid, book.best_ask

    def pass_quietly(self, symbol: str, points: Sequence[tuple[int, Decimal]], moves: int) -> None:
        """What ``moves`` calls of :meth:`set_mark` inside :meth:`quiet_band` leave behind,
        given only the last of them, ``points`` ((ms, price) in time order): the earlier moves
        must be ones the price series forgets (minutes no later read can see: older than its
        24-hour window and its ``candle_history_minutes``; the caller checks that, see
        :mod:`botkit.backtest.driver`) and cross nothing. The points are recorded exactly as
        :meth:`set_mark` records them; a point outside the band is refused (ValueError)."""
        series, book = self._marking[symbol]
        bid, ask = book.best_bid, book.best_ask
        for at, px in points:
            if not bid < px < ask or px <= _ZERO:
                raise ValueError(f"pass_quietly({symbol!r}): {px} at {at} is outside the band")
        series.record_many(points)
        self.mark_rev += moves

    def pass_minutes(
        self,
        symbol: str,
        times: Sequence[int],
        opens: Sequence[Decimal],
        highs: Sequence[Decimal],
        lows: Sequence[Decimal],
        closes: Sequence[Decimal],
        moves: int,
    ) -> None:
        """:meth:`pass_quietly` of the four-point paths of whole minutes (each minute's open,
        its extremes in either order, its close: :meth:`PriceSeries.record_minutes`), given as
        columns: the same candles, window, mark and count of moves. Every price must lie inside
        the band (checked on the columns' extremes before anything moves); raises ValueError,
        moving nothing, otherwise or when the minutes are not ones to record whole."""
        series, book = self._marking[symbol]
        if times:  # the lows and highs bound every price: record_minutes refuses any candle
            low, high = min(lows), max(highs)  # whose open or close is not between, first
            if not book.best_bid < low or not high < book.best_ask or low <= _ZERO:
                raise ValueError(f"pass_minutes({symbol!r}): a price is outside the band")
        series.record_minutes(times, opens, highs, lows, closes)
        self.mark_rev += moves

    def equity_at(self, symbol: str, marks: Sequence[Decimal]) -> list[Decimal]:
        """:meth:`equity` as it would be with the mark of ``symbol`` at each of ``marks`` and
        everything else as now (the same Decimal values :meth:`equity` gives after
        :meth:`set_mark` to that mark inside :meth:`quiet_band`)."""
        return self.figures.equity_at(self.prices[symbol], marks)

    def high_24h(self, symbol: str) -> Decimal:
        """The 24h high a ticker of ``symbol`` gives now (read without changing anything)."""
        return self.prices[symbol].high_24h(self.clock.now_ms())

    def figures_between(self, symbol: str, lo: Decimal, hi: Decimal) -> MarkBounds | None:
        """Bounds of the position and account figures a read gives with the mark of ``symbol``
        anywhere from ``lo`` to ``hi`` and everything else as now (inside :meth:`quiet_band`
        nothing else moves with the mark); see :meth:`AccountFigures.between`."""
        return self.figures.between(self.prices[symbol], lo, hi)

    def apply_drift(self) -> None:
        """Move every mark by ``drift`` of itself, rounded to its tick (at least one tick when
        ``drift`` is not 0), and fill what the new marks cross: the market moving between two
        requests of one cycle."""
        for symbol, inst in self.instruments.items():
            mark = self.prices[symbol].mark
            tick = inst.tSz
            move = (mark * self.drift / tick).to_integral_value() * tick
            if move == _ZERO:
                move = tick if self.drift > _ZERO else -tick
            px = min(max(mark + move, inst.minPx), inst.maxPx)
            if px != mark:
                self.set_mark(symbol, px)

    def step(self) -> None:
        """Advance the random walk of every mark to ``clock.now_ms()`` (``step_ms`` per step).

        After a long idle gap the steps before the last ``3600`` are taken as one jump.
        """
        if not self._walk:
            return
        steps = (self.clock.now_ms() - self._last_step) // self._step_ms
        if steps <= 0:
            return
        at = self._last_step
        self._last_step += steps * self._step_ms
        if steps > _MAX_STEPS:
            jump = steps - _MAX_STEPS
            at += jump * self._step_ms
            for symbol, series in self.prices.items():
                self._move(symbol, series.walk(jump, self._step_ms), at)
            steps = _MAX_STEPS
        for _ in range(steps):
            at += self._step_ms
            for symbol, series in self.prices.items():
                self._move(symbol, series.walk(1, self._step_ms), at)

    def _move(self, symbol: str, px: Decimal, at: int) -> None:
        self.prices[symbol].record(px, at)
        self.mark_rev += 1
        book = self.matcher.books[symbol]
        if px <= book.best_bid or px >= book.best_ask:
            self.matcher.match(symbol, px, at)

    # --- leverage and position mode ------------------------------------------------------
    def lever(self, symbol: str, mgn_mode: MarginMode, pos_side: PosSide) -> Decimal:
        found = self._levers.get((symbol, mgn_mode, pos_side))
        return found if found is not None else self.instruments[symbol].lever

    def _lever_sides(self, pos_side: PosSide | None) -> list[PosSide]:
        if self.position_mode is PositionMode.ONE_WAY:
            if pos_side not in (None, PosSide.BOTH):
                raise SimError.param("posSide must be BOTH in one-way mode")
            return [PosSide.BOTH]
        if pos_side is None or pos_side is PosSide.BOTH:
            return [PosSide.LONG, PosSide.SHORT]
        return [pos_side]

    def set_leverage(
        self, symbol: str, lever: Decimal, mgn_mode: MarginMode, pos_side: PosSide | None = None
    ) -> list[tuple[str, Decimal, MarginMode, PosSide]]:
        """Set the leverage of ``symbol`` for a margin mode (and hedge leg); returns what is set."""
        inst = self.instrument(symbol)
        if lever != lever.to_integral_value() or not 1 <= lever <= inst.maxLever:
            raise SimError.param(
                f"lever must be a whole number from 1 to {inst.maxLever} for {symbol}, got {lever}"
            )
        sides = self._lever_sides(pos_side)
        self.settings_rev += 1
        for side in sides:
            self._levers[(symbol, mgn_mode, side)] = Decimal(int(lever))
        return [(symbol, Decimal(int(lever)), mgn_mode, side) for side in sides]

    def leverages(
        self, symbol: str, mgn_mode: MarginMode | None = None
    ) -> list[tuple[str, Decimal, MarginMode, PosSide]]:
        self.instrument(symbol)
        modes = [mgn_mode] if mgn_mode is not None else [MarginMode.CROSS, MarginMode.ISOLATED]
        sides = self._lever_sides(None)
        return [(symbol, self.lever(symbol, m, s), m, s) for m in modes for s in sides]

    def set_position_mode(self, mode: PositionMode) -> None:
        if mode is self.position_mode:
            return
        if self.account.positions or self.matcher.open:
            raise SimError.param(
                "the position mode cannot change while positions or open orders exist; "
                "close the positions and cancel the orders first"
            )
        self.position_mode = mode
        self.settings_rev += 1

    # --- placing orders ------------------------------------------------------------------
    def place_batch(self, items: Sequence[OrderInput | Rejected]) -> list[PlaceOutcome]:
        """Place up to 10 orders, each judged on its own; more than 10 refuses the whole batch."""
        if len(items) > MAX_BATCH:
            raise SimError(
                codes.BATCH_TOO_LARGE,
                f"Batch place size over limit: {len(items)} orders, at most {MAX_BATCH} "
                "per request",
            )
        if not items:
            raise SimError.param("the batch holds no order")
        out: list[PlaceOutcome] = []
        venues: dict[str, _Venue] = {}  # per symbol: what every order of the batch meets
        for item in items:
            if isinstance(item, Rejected):
                out.append(PlaceOutcome(item.cl_ord_id, "", item.code, item.msg))
                continue
            try:
                order = self._place(item, venues)
            except SimError as exc:
                out.append(PlaceOutcome(item.cl_ord_id or "", "", exc.code, exc.msg))
            else:
                out.append(
                    PlaceOutcome(order.cl_ord_id, str(order.ord_id), codes.SUCCESS, "Success")
                )
        return out

    def place(self, order: OrderInput) -> SimOrder:
        """Check and place one order; raises :class:`SimError` when a rule refuses it."""
        return self._place(order, {})

    def _venue(self, symbol: str) -> _Venue:
        """What an order on ``symbol`` meets that no order of one batch changes: the
        instrument, its status, its mark (an order's fills move no mark), its book, the
        position mode, the strictness of text checks and the leverage lookup."""
        inst = self.instrument(symbol)
        symbol = inst.symbol
        return _Venue(
            inst,
            self.status[symbol],
            self.prices[symbol].mark,
            self.matcher.books[symbol],
            self.position_mode,
            self.config.orders.strict_text,
            lambda mgn, side: self.lever(symbol, mgn, side),
        )

    def _place(self, order: OrderInput, venues: dict[str, _Venue]) -> SimOrder:
        """:meth:`place`, with the venues the batch's earlier orders looked up (a batch's
        orders share them: nothing placing an order does changes one)."""
        venue = venues.get(order.symbol)
        if venue is None:
            venue = venues[order.symbol] = self._venue(order.symbol)
        inst, mark, mode = venue.inst, venue.mark, venue.mode
        symbol = inst.symbol
        reason = check_static(
            order, inst, venue.status, mark, mode, strict_text=venue.strict_text, band_of=self._band
        )
        if reason is not None:
            raise SimError(*reason)
        cl_ord_id = order.cl_ord_id
        book = venue.book
        mgn_mode, pos_side, closing, lever, margin = account_rules(
            order,
            inst,
            mark,
            mode,
            self._known(cl_ord_id),
            self.account.positions.get((symbol, order.pos_side or PosSide.BOTH)),
            (book.bids, book.asks),
            venue.lever_of,
            self._available,  # balance().avail, unbuilt
            self.account.currency,
        )
        now = self.clock.now_ms()
        ord_id = self.ids.next()
        sim = SimOrder(  # positionally, in SimOrder's field order (one per order placed)
            ord_id,  # ord_id
            cl_ord_id if cl_ord_id is not None else str(ord_id),  # cl_ord_id
            symbol,  # symbol
            order.side,  # side
            order.type,  # type
            order.sz,  # sz
            order.px,  # px
            mgn_mode,  # mgn_mode
            pos_side,  # pos_side
            order.reduce_only,  # reduce_only
            closing,  # closing
            order.tif,  # tif
            order.stp,  # stp
            lever,  # lever
            now,  # c_time
            now,  # u_time
        )
        self._orders[ord_id] = sim
        self._by_cl[sim.cl_ord_id] = sim
        self.history.orders.add(sim)
        matcher = self.matcher
        rev = matcher.rev
        matcher.arrive(sim, mark, now)
        self.figures.rested(sim, rev, margin)
        self._placed_since_prune += 1
        if self._placed_since_prune >= 1000 and self._placed_since_prune >= len(self._orders) // 4:
            self._prune(now)
        return sim

    def _known(self, cl_ord_id: str | None) -> SimOrder | None:
        """The order that already holds ``cl_ord_id`` (:meth:`find`, asked only when one
        does), or None; always None without the duplicate check."""
        if not cl_ord_id or not self.duplicate_check or cl_ord_id not in self._by_cl:
            return None
        return self.find(cl_ord_id=cl_ord_id)

    def _available(self) -> Decimal:
        """The margin available now (``balance().avail``, without building the balance)."""
        return self.figures.current().avail

    def _prune(self, now: int) -> None:
        self._placed_since_prune = 0
        for order in self.history.prune(now):
            self._orders.pop(order.ord_id, None)
            if self._by_cl.get(order.cl_ord_id) is order:
                del self._by_cl[order.cl_ord_id]

    # --- cancelling ----------------------------------------------------------------------
    def find(self, *, ord_id: str | None = None, cl_ord_id: str | None = None) -> SimOrder | None:
        """A known order by id (which wins when both are given) or client id.

        A fill-less cancelled order is forgotten once history stops showing it (5 hours).
        """
        order: SimOrder | None = None
        if ord_id:
            order = self._orders.get(int(ord_id)) if ord_id.isdigit() else None
        elif cl_ord_id:
            order = self._by_cl.get(cl_ord_id)
        hidden = (
            order is not None
            and order.state in OrderState.CLOSED
            and not self.history.visible(order, self.clock.now_ms())
        )
        return None if hidden else order

    def cancel(
        self, symbol: str, *, ord_id: str | None = None, cl_ord_id: str | None = None
    ) -> SimOrder:
        """Cancel one open order; 11008 when unknown, 11004 when no longer open."""
        if not ord_id and not cl_ord_id:
            raise SimError.param("ordId or clOrdId is required")
        order = self.find(ord_id=ord_id, cl_ord_id=cl_ord_id)
        if order is None or order.symbol != symbol:
            which = f"ordId {ord_id}" if ord_id else f"clOrdId {cl_ord_id}"
            raise SimError(codes.ORDER_NOT_FOUND, f"Order does not exist: {which} on {symbol}")
        if order.state not in OrderState.OPEN:
            raise SimError(
                codes.NOT_CANCELABLE,
                f"Order {order.ord_id} is not cancelable: it is already {order.state}",
            )
        self.matcher.close(order, USER_CANCEL, self.clock.now_ms())
        return order

    def cancel_all(
        self, symbol: str | None = None, side: OrderSide | None = None
    ) -> list[SimOrder]:
        if symbol is not None:
            self.instrument(symbol)
        now = self.clock.now_ms()
        chosen = [
            o
            for o in self.matcher.open.values()
            if (symbol is None or o.symbol == symbol) and (side is None or o.side is side)
        ]
        for order in chosen:
            self.matcher.close(order, USER_CANCEL, now)
        return chosen

    # --- the paper account's state file (botkit.sim.state) ------------------------------
    @property
    def last_step(self) -> int:
        """The server time the random walk has been stepped to."""
        return self._last_step

    @property
    def levers(self) -> dict[tuple[str, MarginMode, PosSide], Decimal]:
        """The leverage set per (symbol, margin mode, leg); the others are the instrument's."""
        return self._levers

    def restore(
        self,
        *,
        orders: Sequence[SimOrder],
        levers: dict[tuple[str, MarginMode, PosSide], Decimal],
        position_mode: PositionMode,
        last_step: int,
    ) -> None:
        """Take back a saved account's orders (ascending ids; open ones rest on their books
        again), leverage, position mode and walk time. The account, history records and prices
        are restored into their own parts before this; every cached figure is dropped."""
        for order in orders:
            self._orders[order.ord_id] = order
            self._by_cl[order.cl_ord_id] = order
            self.history.orders.add(order)
            if order.state in OrderState.OPEN:
                self.matcher.open[order.ord_id] = order
                self.matcher.books[order.symbol].add(order)
        self._levers = dict(levers)
        self.position_mode = position_mode
        self._last_step = last_step
        self.matcher.rev += 1
        self.settings_rev += 1
        self.mark_rev += 1

    # --- reading the account -------------------------------------------------------------
    def open_orders(
        self,
        window: Window,
        *,
        symbol: str | None = None,
        side: OrderSide | None = None,
        ord_id: int | None = None,
        cl_ord_id: str | None = None,
    ) -> list[SimOrder]:
        """One page of open orders (NEW, PARTIALLY_FILLED), newest first; no time window."""
        match = order_filter(symbol, side, ord_id, cl_ord_id)
        opened = self.matcher.open
        if not window.from_id and window.direct == "NEXT" and window.limit >= len(opened):
            # the first page holding every open order (the in-process port's read): what
            # ``select`` gives, newest first, without its paging
            return [o for o in reversed(opened.values()) if match(o)]
        records = list(opened.values())
        ids = list(opened)
        everything = replace(window, start=-(2**62), end=2**62)
        return select(records, ids, everything, lambda o: o.c_time, match)

    def window(
        self,
        *,
        start: int | None = None,
        end: int | None = None,
        from_id: int | None = None,
        limit: int | None = None,
        direct: str | None = None,
    ) -> Window:
        """Checked paging parameters relative to now (defaults: last 90 days, 10, NEXT)."""
        return make_window(
            self.clock.now_ms(), start=start, end=end, from_id=from_id, limit=limit, direct=direct
        )

    def positions(self, symbol: str | None = None) -> list[OpenPosition]:
        """The open positions (of ``symbol``) at the current marks (see :mod:`~botkit.sim.figures`).

        The same objects while nothing they show changed; do not mutate them.
        """
        return self.figures.positions(symbol)

    def balance(self) -> BalanceFigures:
        """Equity, margins and PnL, consistent with positions and resting orders right now.

        Cached until an order, a position, a setting or the mark of a held symbol changes (see
        :mod:`~botkit.sim.figures`): the same object while nothing changed; do not mutate it.
        """
        return self.figures.balance()

    def equity(self) -> Decimal:
        """The balance's ``eq`` (wallet + unrealized PnL) now: the same value as
        ``balance().eq``, for sampling an equity curve without building the whole balance."""
        return self.figures.equity()
