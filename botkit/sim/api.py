"""The simulator's wire view: one call per REST request, JSON-ready data out.

:class:`SimApi` maps ``(method, path, query, body)`` to the engine and returns the ``data`` of the
v3 envelope as JSON-ready values (amounts as decimal strings, ids as strings). Non-200 envelope
codes are raised as :class:`SimError`; the HTTP layer (``botkit.sim.http``) wraps both in the
envelope, checks signatures and injects faults.

(First skeleton: routing, errors and ``/timestamp``; the other paths follow.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from botkit.sim.engine import SimEngine

__all__ = ["PUBLIC_PATHS", "SimApi", "SimError"]


class SimError(Exception):
    """An answer with a non-200 envelope code (and the HTTP status to send it with)."""

    def __init__(self, code: int, msg: str, http_status: int = 200) -> None:
        self.code = code
        self.msg = msg
        self.http_status = http_status
        super().__init__(f"{code}: {msg}")


PUBLIC_PATHS: frozenset[str] = frozenset(
    {
        "/timestamp",
        "/markets",
        "/currencies",
        "/v2/currencies",
        "/v3/market/allInstruments",
        "/v3/market/riskLimit",
        "/v3/market/tickers",
        "/v3/market/markPrice",
        "/v3/market/indexPrice",
        "/v3/market/fundingRate",
        "/v3/market/candles",
        "/v3/market/limitPrice",
        "/v3/market/orderBook",
    }
)
_PUBLIC_PREFIXES = ("/markets/", "/currencies/", "/v2/currencies/")

Handler = Callable[[Mapping[str, str], Any], Any]


class SimApi:
    """Routes REST requests to the engine; returns the envelope's ``data``."""

    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine
        self._routes: dict[tuple[str, str], Handler] = {
            ("GET", "/timestamp"): self._timestamp,
        }

    def is_public(self, method: str, path: str) -> bool:
        """Reference-data and market-data paths need no signature."""
        return path in PUBLIC_PATHS or path.startswith(_PUBLIC_PREFIXES)

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        handler = self._routes.get((method.upper(), path))
        if handler is None:
            raise SimError(404, "Not Found", http_status=404)
        return handler(query, body)

    def _timestamp(self, query: Mapping[str, str], body: Any) -> Any:
        return {"serverTime": self.engine.clock.now_ms()}
