"""``instrument.*`` and ``price.*`` of the expression context.

Instrument limits absent from the exchange's answer read as 0; a price absent from the ticker
is an error (a rule must not trade on a price it does not have).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, ClassVar

from botkit.exchange.models import (
    Instrument,
    InstrumentStatus,
    LimitPrice,
    Ticker,
)

if TYPE_CHECKING:
    from botkit.rules.context import Ctx
from botkit.rules.views import BOOL, NUM, ZERO, ContextError, Field, View, numbers

__all__ = ["InstrumentView", "PriceView"]


class InstrumentView(View):
    DOC = "the strategy's instrument and its order limits (spec 2.9; absent limits are 0)"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_i",)

    def __init__(self, instrument: Instrument) -> None:
        self._i = instrument


def _limit(name: str) -> Callable[[InstrumentView], Decimal]:
    get = operator.attrgetter(name)

    def read(view: InstrumentView) -> Decimal:
        value = get(view._i)
        return ZERO if value is None else Decimal(value)

    return read


InstrumentView.FIELDS = {
    **numbers(
        _limit,
        {
            "tSz": "price tick",
            "lotSz": "size step (contracts)",
            "minSz": "minimum order size",
            "ctVal": "contract value in the base currency",
            "minPx": "lowest order price",
            "maxPx": "highest order price",
            "limitMaxQty": "largest limit order",
            "marketMaxQty": "largest market order",
            "maxLever": "maximum leverage",
            "lever": "default leverage",
            "ordPxRange": "allowed distance from the mark (fraction)",
            "iM": "initial margin rate",
            "mM": "maintenance margin rate",
        },
    ),
    "is_open": Field(BOOL, "status is OPEN", lambda view: view._i.status is InstrumentStatus.OPEN),
}


class PriceView(View):
    DOC = "prices of the strategy's symbol (tickers, limit price); a missing one is an error"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def missing(self, what: str) -> ContextError:
        return ContextError(f"price.{what} is not available for {self._ctx.symbol} now")

    def ticker(self) -> Ticker | None:
        ctx = self._ctx
        return ctx.snapshot.tickers.get(ctx.symbol)

    def band(self) -> LimitPrice | None:
        ctx = self._ctx
        return ctx.snapshot.limit_prices.get(ctx.symbol)


def _price(
    name: str, source: Callable[[PriceView], Ticker | LimitPrice | None], attr: str
) -> Callable[[PriceView], Decimal]:
    """``price.<name>``: ``attr`` of the ticker or the price band ``source`` gives."""
    get = operator.attrgetter(attr)

    def read(view: PriceView) -> Decimal:
        found = source(view)
        value = None if found is None else get(found)
        if value is None:
            raise view.missing(name)
        return Decimal(value)

    return read


def _ticker(name: str, attr: str) -> Callable[[PriceView], Decimal]:
    return _price(name, PriceView.ticker, attr)


def _band(name: str, attr: str) -> Callable[[PriceView], Decimal]:
    return _price(name, PriceView.band, attr)


_LAST, _OPEN_24H, _BID, _ASK = (
    _ticker("last", "c"),
    _ticker("open_24h", "o"),
    _ticker("bid", "bPx"),
    _ticker("ask", "aPx"),
)


def _change_24h(view: PriceView) -> Decimal:
    opened = _OPEN_24H(view)
    if opened == 0:
        raise view.missing("change_24h")
    return _LAST(view) / opened - 1


PriceView.FIELDS = {
    "last": Field(NUM, "last trade price", _LAST),
    "mark": Field(NUM, "mark price", _ticker("mark", "mPx")),
    "index": Field(NUM, "index price", _ticker("index", "iPx")),
    "bid": Field(NUM, "best bid", _BID),
    "ask": Field(NUM, "best ask", _ASK),
    "open_24h": Field(NUM, "price 24 hours ago", _OPEN_24H),
    "high_24h": Field(NUM, "24h high", _ticker("high_24h", "h")),
    "low_24h": Field(NUM, "24h low", _ticker("low_24h", "l")),
    "volume_24h": Field(NUM, "24h volume (contracts)", _ticker("volume_24h", "qty")),
    "mid": Field(NUM, "(bid + ask) / 2", lambda view: (_BID(view) + _ASK(view)) / 2),
    "change_24h": Field(NUM, "last / open_24h - 1 (0.05 = +5%)", _change_24h),
    "buy_limit": Field(
        NUM, "highest BUY price allowed now (limitPrice)", _band("buy_limit", "buyLmt")
    ),
    "sell_limit": Field(
        NUM, "lowest SELL price allowed now (limitPrice)", _band("sell_limit", "sellLmt")
    ),
}
