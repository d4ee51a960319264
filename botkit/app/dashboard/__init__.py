"""``botkit serve``'s dashboard: one page (``/``) and its assets (``/static/...``), and the
equity series its chart draws (``/api/equity``).

The page and its assets are public routes (they hold no data: every figure comes from the API,
behind the token); the page asks for the token, keeps it in the tab's ``sessionStorage`` and
sends it as the bearer header, and sends control requests with the API's CSRF header
(:data:`botkit.app.api.CSRF_HEADER`). The assets are built from ``frontend/`` by
``scripts/build-assets`` (uPlot, bundled and minified by esbuild) and ship in the package, so
nothing is fetched from another site and no Node.js is needed to serve them.

Answers of the page's routes carry a strict Content-Security-Policy (scripts, styles and
requests to this server only; no framing), so even a value that slipped through as markup
could not run.
"""

from __future__ import annotations

import threading
from collections import deque
from importlib import resources
from typing import TYPE_CHECKING, Any

from botkit.app.api import ApiError, Request, Response, Router, json_response

if TYPE_CHECKING:
    from botkit.app.api_read import ExchangeReads

__all__ = ["ASSETS", "CSP", "EquityHistory", "add_dashboard_routes"]

ASSETS: dict[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
"""The files under ``static/`` the page serves, with their content types."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_PAGE_HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
)
MAX_POINTS = 2880
"""The equity series keeps this many samples (a day at one per 30 s)."""


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class EquityHistory:
    """The account's equity and unrealized PnL over time, sampled by ``botkit serve`` whenever
    it reads the account afresh (the reads are cached for a few seconds, so any number of
    pages polling cost one exchange read per cache period). Kept in memory, at most
    :data:`MAX_POINTS` samples: the series starts when ``botkit serve`` does."""

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self._points: deque[tuple[int, str | None, str | None]] = deque(maxlen=max_points)
        self._lock = threading.Lock()

    def record(self, read_ms: int, equity: str | None, upl: str | None) -> None:
        with self._lock:
            if self._points and self._points[-1][0] >= read_ms:
                return
            self._points.append((read_ms, equity, upl))

    def points(self) -> list[dict[str, Any]]:
        with self._lock:
            return [{"ts_ms": t, "equity": e, "upl": u} for t, e, u in self._points]


def add_dashboard_routes(
    router: Router, exchange: ExchangeReads, history: EquityHistory | None = None
) -> EquityHistory:
    """Register the page (``GET /``, ``/static/NAME``, ``/favicon.ico``: public) and the equity
    series (``GET /api/equity``, behind the token) on ``router``; the series is returned."""
    series = history if history is not None else EquityHistory()
    files = {name: (_asset(name), kind) for name, kind in ASSETS.items()}

    def page(_r: Request) -> Response:
        body, kind = files["index.html"]
        return Response(200, body, kind, _PAGE_HEADERS)

    def static(request: Request) -> Response:
        found = files.get(request.params["name"])
        if found is None or found[1].startswith("text/html"):
            raise ApiError(404, "no such asset")
        return Response(200, found[0], found[1], _PAGE_HEADERS)

    def favicon(_r: Request) -> Response:
        body, kind = files["favicon.svg"]
        return Response(200, body, kind, _PAGE_HEADERS)

    def equity(_r: Request) -> Response:
        account = exchange.account()
        balance = account["balance"]
        series.record(
            int(account["read_ms"]),
            None if balance.eq is None else str(balance.eq),
            None if balance.upl is None else str(balance.upl),
        )
        return json_response(200, {"points": series.points()})

    router.add("GET", "/", page, public=True)
    router.add("GET", "/static/{name}", static, public=True)
    router.add("GET", "/favicon.ico", favicon, public=True)
    router.add("GET", "/api/equity", equity)
    return series
