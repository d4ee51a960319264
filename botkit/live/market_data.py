"""Reference data (spec 4.1) and market data (notes): the unsigned endpoints of the client.

:class:`MarketDataEndpoints` is a base of :class:`~botkit.live.client.ExchangeClient`. The
spot reference paths answer bare JSON (spec 4.1; the exchange and the simulator alike — their
errors as ``{code, msg}``); an answer inside the v3 envelope is read too (simulators before
issue 18 wrapped them). Market-data answers that are an object for one symbol and a list for
all come back as a list.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from botkit.errors import RequestContext
from botkit.exchange import params as p
from botkit.exchange.models import (
    Candle,
    CurrencyV1,
    CurrencyV2,
    FundingRate,
    IndexPrice,
    Instrument,
    LimitPrice,
    MarginMode,
    Market,
    MarkPrice,
    OrderBook,
    RiskLimitTier,
    Ticker,
)
from botkit.live import http
from botkit.live.client_base import ClientBase, as_list, first, model_problem, path_segment

__all__ = ["MarketDataEndpoints"]


class MarketDataEndpoints(ClientBase):
    """The unsigned endpoints: reference data and market data."""

    def markets(self) -> list[Market]:
        """``GET /markets``: every spot symbol with its trade limits."""
        data, ctx = self._call("GET", "/markets", signed=False, envelope_required=False)
        return self._parse(list[Market], as_list(data), ctx)

    def market(self, symbol: str) -> Market:
        """``GET /markets/{symbol}``."""
        path = f"/markets/{path_segment(p.symbol(symbol))}"
        data, ctx = self._call("GET", path, signed=False, envelope_required=False)
        return self._parse(Market, first(data), ctx)

    def currencies(self, *, include_multi_chain: bool = False) -> list[CurrencyV1]:
        """``GET /currencies`` (v1 view), one entry per currency (and chain, if asked)."""
        params = {"includeMultiChainCurrencies": "true" if include_multi_chain else None}
        data, ctx = self._call(
            "GET", "/currencies", signed=False, params=params, envelope_required=False
        )
        return self._parse(list[CurrencyV1], _currency_rows(data, ctx), ctx)

    def currency(self, name: str, *, include_multi_chain: bool = False) -> CurrencyV1:
        """``GET /currencies/{currency}`` (v1 view)."""
        wanted = p.symbol(name, "currency")
        params = {"includeMultiChainCurrencies": "true" if include_multi_chain else None}
        path = f"/currencies/{path_segment(wanted)}"
        data, ctx = self._call("GET", path, signed=False, params=params, envelope_required=False)
        found = self._parse(list[CurrencyV1], _currency_rows(data, ctx), ctx)
        if not found:
            raise http.malformed(f"no currency in the answer for {wanted}", ctx, write=False)
        return next((c for c in found if c.name.upper() == wanted.upper()), found[0])

    def currencies_v2(self) -> list[CurrencyV2]:
        """``GET /v2/currencies``: currencies with their networks."""
        data, ctx = self._call("GET", "/v2/currencies", signed=False, envelope_required=False)
        return self._parse(list[CurrencyV2], as_list(data), ctx)

    def currency_v2(self, coin: str) -> CurrencyV2:
        """``GET /v2/currencies/{currency}``."""
        path = f"/v2/currencies/{path_segment(p.symbol(coin, 'currency'))}"
        data, ctx = self._call("GET", path, signed=False, envelope_required=False)
        return self._parse(CurrencyV2, first(data), ctx)

    # --- market data (unsigned) ----------------------------------------------------------

    def instruments(self, symbol: str | None = None) -> list[Instrument]:
        """``GET /v3/market/allInstruments``."""
        sym = p.optional_text(symbol, "symbol")
        return self._get_list(Instrument, "/v3/market/allInstruments", signed=False, symbol=sym)

    def risk_limit(
        self, symbol: str, *, mgn_mode: MarginMode | str | None = None, tier: str | None = None
    ) -> list[RiskLimitTier]:
        """``GET /v3/market/riskLimit``: the tiers of one symbol."""
        return self._get_list(
            RiskLimitTier,
            "/v3/market/riskLimit",
            signed=False,
            symbol=p.symbol(symbol),
            mgnMode=p.enum_word(mgn_mode, MarginMode, "mgn_mode"),
            tier=p.optional_text(tier, "tier"),
        )

    def tickers(self, symbol: str | None = None) -> list[Ticker]:
        """``GET /v3/market/tickers``: last, mark, index, best bid/ask and 24h figures."""
        sym = p.optional_text(symbol, "symbol")
        return self._get_list(Ticker, "/v3/market/tickers", signed=False, symbol=sym)

    def mark_prices(self, symbol: str | None = None) -> list[MarkPrice]:
        """``GET /v3/market/markPrice``."""
        sym = p.optional_text(symbol, "symbol")
        return self._get_list(MarkPrice, "/v3/market/markPrice", signed=False, symbol=sym)

    def index_prices(self, symbol: str | None = None) -> list[IndexPrice]:
        """``GET /v3/market/indexPrice``."""
        sym = p.optional_text(symbol, "symbol")
        return self._get_list(IndexPrice, "/v3/market/indexPrice", signed=False, symbol=sym)

    def funding_rates(self, symbol: str | None = None) -> list[FundingRate]:
        """``GET /v3/market/fundingRate``."""
        sym = p.optional_text(symbol, "symbol")
        return self._get_list(FundingRate, "/v3/market/fundingRate", signed=False, symbol=sym)

    def candles(
        self,
        symbol: str,
        interval: str,
        *,
        start: int | None = None,
        end: int | None = None,
        limit: int | None = None,
    ) -> list[Candle]:
        """``GET /v3/market/candles``, oldest first (rows ``[low, high, open, close, …]``)."""
        word = p.candle_interval(interval)
        s_time, e_time = p.time_range(start, end)
        params = {
            "symbol": p.symbol(symbol),
            "interval": word,
            "sTime": s_time,
            "eTime": e_time,
            "limit": p.page_limit(limit),
        }
        data, ctx = self._call("GET", "/v3/market/candles", signed=False, params=params)
        try:
            rows = [Candle.from_row(row) for row in as_list(data)]
        except (ValidationError, ValueError, TypeError) as exc:
            raise http.malformed(model_problem(Candle, exc), ctx, write=False) from exc
        return sorted(rows, key=lambda c: c.sT)

    def limit_price(self, symbol: str) -> LimitPrice:
        """``GET /v3/market/limitPrice``: the price band orders must fall in now."""
        sym = p.symbol(symbol)
        params: dict[str, str | None] = {"symbol": sym}
        data, ctx = self._call("GET", "/v3/market/limitPrice", signed=False, params=params)
        bands = self._parse(list[LimitPrice], as_list(data), ctx)
        if not bands:
            raise http.malformed(f"no price band for {sym}", ctx, write=False)
        return next((b for b in bands if b.symbol == sym), bands[0])

    def order_book(
        self, symbol: str, *, scale: str | None = None, limit: int | None = None
    ) -> OrderBook:
        """``GET /v3/market/orderBook`` (limit one of 5, 10, 20, 100, 150)."""
        return self._get(
            OrderBook,
            "/v3/market/orderBook",
            signed=False,
            symbol=p.symbol(symbol),
            scale=p.optional_text(scale, "scale"),
            limit=p.book_limit(limit),
        )


def _currency_rows(data: Any, ctx: RequestContext) -> list[dict[str, Any]]:
    try:
        return _flatten_currencies(data)
    except ValueError as exc:
        raise http.malformed(str(exc), ctx, write=False) from exc


def _flatten_currencies(data: Any) -> list[dict[str, Any]]:
    """``[{"BTC": {...}}, …]`` or ``{"BTC": {...}, …}`` → ``[{"name": "BTC", …}, …]``.

    The key (the currency's symbol) becomes ``name``; the payload's own ``name`` (the long
    name, e.g. "Bitcoin") is kept as ``fullName``.
    """
    rows: list[dict[str, Any]] = []
    for item in as_list(data):
        if not isinstance(item, dict):
            raise ValueError(f"currency entry is {type(item).__name__}, not an object")
        for key, fields in item.items():
            if not isinstance(fields, dict):
                raise ValueError(f"currency {key!r} is not an object")
            row = {**fields, "name": key}
            if fields.get("name") not in (None, key):
                row["fullName"] = fields["name"]
            rows.append(row)
    return rows
