"""``botkit serve``'s dashboard: one page (``/``) and its assets (``/static/...``).

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

from importlib import resources

from botkit.app.api import ApiError, Request, Response, Router

__all__ = ["ASSETS", "CSP", "POLLED", "STATIC", "add_dashboard_routes"]

ASSETS: dict[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
"""The files under ``static/`` the page serves, with their content types."""
STATIC = ("/static/dashboard.css", "/static/dashboard.js", "/static/favicon.svg")
"""What the page loads once, besides itself."""
POLLED = (
    "/api/health",
    "/api/controls",
    "/api/strategies",
    "/api/positions",
    "/api/equity",
    "/api/orders",
    "/api/decisions",
    "/api/events",
)
"""Every endpoint the page reads at each refresh (``ENDPOINTS`` in ``frontend/src/dashboard.js``;
a test holds them equal): what ``bench/bench_dashboard.py`` polls."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_PAGE_HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
)


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def add_dashboard_routes(router: Router) -> None:
    """Register the page on ``router``: ``GET /``, ``/static/NAME`` and ``/favicon.ico``, all
    public (the figures come from the API's endpoints, behind the token)."""
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

    router.add("GET", "/", page, public=True)
    router.add("GET", "/static/{name}", static, public=True)
    router.add("GET", "/favicon.ico", favicon, public=True)
