"""The reads a trading cycle makes through :class:`~botkit.sim.port.SimPort` (balance, open
positions, tickers, limit prices), as typed models rebuilt only as far as the engine's state
moved; and how the port turns the engine's refusals into the HTTP client's errors.

A backtest reads the account and the market once per candle, after the mark moved, so caches
keyed on "nothing changed" would miss every time. What each answer is kept by:

* balance: the engine's :class:`~botkit.sim.figures.Book` stamp (it changes only when a figure
  may have; with no open position moving the mark changes none);
* open positions: per position the fields that do not move with the mark are kept per book
  number (orders, fills, settings); after a move of its mark only the mark's fields are redone,
  from the position's own figures (``AccountFigures.marked``: the balance totals are not
  summed for it, they wait for a balance read);
* limit price: the mark object its band was computed at; the band's constants per symbol;
* tickers: the parts that never change, per symbol (a ticker moves with the clock, so it is
  always rebuilt).

Every answer is built by the view functions the wire API serialises (:mod:`botkit.sim.views`),
so both paths give equal models (the tests check it). Models are frozen and shared between
calls (see :class:`~botkit.sim.fastmodel.Build`); lists are fresh on every call. The reads are
a base class of the port, not a helper it calls, so a read is one call deep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any, NoReturn, TypeVar

from botkit.errors import ExchangeRejected, NotFoundError, RequestContext
from botkit.exchange.models import Balance, BalanceDetail, LimitPrice, Position, PosSide, Ticker
from botkit.sim import codes
from botkit.sim.codes import SimError
from botkit.sim.engine import SimEngine
from botkit.sim.fastmodel import Build
from botkit.sim.orders import PriceBand
from botkit.sim.views import (
    TickerBase,
    balance_view,
    limit_price_fields,
    open_position_at,
    open_position_base,
    ticker_base,
    ticker_fields,
)

__all__ = ["PortReads", "reject"]

M = TypeVar("M")
_TICKERS = "/v3/market/tickers"
_NOT_FOUND = frozenset({codes.NOT_FOUND, codes.ORDER_NOT_FOUND, codes.POSITION_NOT_FOUND})
_BALANCE = Build(Balance)
_DETAIL = Build(BalanceDetail)
_POSITION = Build(Position)
_TICKER = Build(Ticker)
_LIMIT_PRICE = Build(LimitPrice)


def reject(exc: SimError, method: str, path: str, ids: Sequence[str] = ()) -> NoReturn:
    """Raise what the HTTP client raises for this refusal: NotFoundError for 11008 / 404."""
    ctx = RequestContext(method=method, path=path, client_order_ids=tuple(ids))
    kind = NotFoundError if exc.code in _NOT_FOUND else ExchangeRejected
    raise kind(exc.code, exc.msg, context=ctx) from exc


class _PositionModel:
    """One position's model at ``mark`` (the very object its leg's figures were computed at),
    and its fields that hold for book ``number`` (whose leg's figures move only with its mark)."""

    __slots__ = ("base", "mark", "model", "number")

    def __init__(self, number: int, base: dict[str, Any]) -> None:
        self.number = number
        self.base = base
        self.mark: Decimal | None = None
        self.model: Position | None = None


class _LimitModel:
    """A symbol's band constants and its limit-price model at ``mark``."""

    __slots__ = ("band", "mark", "model")

    def __init__(self, band: PriceBand) -> None:
        self.band = band
        self.mark: Decimal | None = None
        self.model: LimitPrice | None = None


class PortReads:
    """The port's cached reads of ``engine`` (a base class of SimPort)."""

    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine
        self._figures = engine.figures
        self._balance: tuple[int, Balance] | None = None
        self._positions: dict[tuple[str, PosSide], _PositionModel] = {}
        self._tickers: dict[str, TickerBase] = {}
        self._limits: dict[str, _LimitModel] = {}

    def _call(self, method: str, path: str, fn: Callable[[], M], ids: Sequence[str] = ()) -> M:
        try:
            return fn()
        except SimError as exc:
            reject(exc, method, path, ids)

    def _symbols(self, symbol: str | None, path: str) -> Iterable[str]:
        """Every symbol, or ``[symbol]`` when it is known (else the exchange's refusal)."""
        if symbol is None:
            return self.engine.instruments
        if symbol not in self.engine.instruments:
            self._call("GET", path, lambda: self.engine.instrument(symbol))  # raises
        return (symbol,)

    def tickers(self, symbol: str | None = None) -> list[Ticker]:
        now = self.engine.clock.now_ms()
        bases = self._tickers
        out = []
        symbols = self.engine.instruments if symbol is None else self._symbols(symbol, _TICKERS)
        for s in symbols:
            base = bases.get(s)
            if base is None:
                base = bases[s] = ticker_base(self.engine, s)
            out.append(_TICKER.exact(ticker_fields(base, now)))
        return out

    def limit_price(self, symbol: str) -> LimitPrice:
        """The band around the mark; the same model while the mark has not moved."""
        entry = self._limits.get(symbol)
        if entry is None:
            (s,) = self._symbols(symbol, "/v3/market/limitPrice")
            entry = self._limits[s] = _LimitModel(PriceBand(self.engine.instruments[s]))
        mark = self.engine.prices[symbol].mark
        model = entry.model
        if model is None or entry.mark is not mark:
            low, high = entry.band(mark)
            model = entry.model = _LIMIT_PRICE.exact(limit_price_fields(symbol, low, high))
            entry.mark = mark
        return model

    def balance(self) -> Balance:
        """The same model while the engine's balance figures are unchanged."""
        book = self._figures.current()
        cached = self._balance
        if cached is not None and cached[0] == book.stamp:
            return cached[1]
        fields = balance_view(book)
        fields["details"] = list(map(_DETAIL.exact, fields["details"]))
        model = _BALANCE.exact(fields)
        self._balance = (book.stamp, model)
        return model

    def open_positions(self, symbol: str | None = None) -> list[Position]:
        """A fresh list; each model is shared while its position's figures are unchanged."""
        book = self._figures.marked()
        out: list[Position] = []
        if not book.legs:
            return out
        known = self._positions
        for leg in book.legs:
            if symbol is not None and leg.symbol != symbol:
                continue
            pos = leg.pos
            key = (leg.symbol, pos.pos_side)
            entry = known.get(key)
            if entry is None or entry.number != book.number:
                mode = self.engine.position_mode
                entry = known[key] = _PositionModel(
                    book.number, open_position_base(pos, leg.avail, leg.lever, mode)
                )
            model = entry.model
            mark = leg.mark
            if model is None or entry.mark is not mark:
                fields = open_position_at(entry.base, mark, leg.im, leg.mm, leg.upl)
                model = entry.model = _POSITION.exact(fields)
                entry.mark = mark
            out.append(model)
        return out
