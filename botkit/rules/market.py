"""``instrument.*`` and ``price.*`` of the expression context.

Instrument limits absent from the exchange's answer read as 0; a price absent from the ticker
is an error (a rule must not trade on a price it does not have).
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from botkit.exchange.models import (
    Instrument,
    InstrumentStatus,
)

if TYPE_CHECKING:
    from botkit.rules.context import Ctx
from botkit.rules.views import BOOL, NUM, ZERO, ContextError, View

__all__ = ["InstrumentView", "PriceView"]


class InstrumentView(View):
    DOC = "the strategy's instrument and its order limits (spec 2.9; absent limits are 0)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        **{
            name: (NUM, doc)
            for name, doc in {
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
            }.items()
        },
        "is_open": (BOOL, "status is OPEN"),
    }
    __slots__ = ("_i",)

    def __init__(self, instrument: Instrument) -> None:
        self._i = instrument

    def __getattr__(self, name: str) -> Any:
        if name == "is_open":
            return self._i.status is InstrumentStatus.OPEN
        if name.startswith("_") or name not in self.FIELDS:
            raise AttributeError(name)
        value = getattr(self._i, name)
        return ZERO if value is None else Decimal(value)


_TICKER = {
    "last": ("c", "last trade price"),
    "mark": ("mPx", "mark price"),
    "index": ("iPx", "index price"),
    "bid": ("bPx", "best bid"),
    "ask": ("aPx", "best ask"),
    "open_24h": ("o", "price 24 hours ago"),
    "high_24h": ("h", "24h high"),
    "low_24h": ("l", "24h low"),
    "volume_24h": ("qty", "24h volume (contracts)"),
}


class PriceView(View):
    DOC = "prices of the strategy's symbol (tickers, limit price); a missing one is an error"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        **{name: (NUM, doc) for name, (_, doc) in _TICKER.items()},
        "mid": (NUM, "(bid + ask) / 2"),
        "change_24h": (NUM, "last / open_24h - 1 (0.05 = +5%)"),
        "buy_limit": (NUM, "highest BUY price allowed now (limitPrice)"),
        "sell_limit": (NUM, "lowest SELL price allowed now (limitPrice)"),
    }
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def _missing(self, what: str) -> ContextError:
        return ContextError(f"price.{what} is not available for {self._ctx.symbol} now")

    def __getattr__(self, name: str) -> Decimal:
        ctx = self._ctx
        if name in _TICKER:
            ticker = ctx.snapshot.tickers.get(ctx.symbol)
            value = None if ticker is None else getattr(ticker, _TICKER[name][0])
            if value is None:
                raise self._missing(name)
            return Decimal(value)
        if name == "mid":
            return (self.bid + self.ask) / 2
        if name == "change_24h":
            opened = self.open_24h
            if opened == 0:
                raise self._missing(name)
            return self.last / opened - 1
        if name in ("buy_limit", "sell_limit"):
            band = ctx.snapshot.limit_prices.get(ctx.symbol)
            value = None if band is None else (band.buyLmt if name == "buy_limit" else band.sellLmt)
            if value is None:
                raise self._missing(name)
            return Decimal(value)
        raise AttributeError(name)
