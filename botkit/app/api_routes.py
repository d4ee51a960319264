"""The status API's route table: reads, controls, the OpenAPI description. The dashboard
page adds its routes to the same :class:`~botkit.app.api.Router` (see :func:`build_router`)."""

from __future__ import annotations

from botkit.app.api import Request, Response, Router, json_response
from botkit.app.api_control import add_control_routes
from botkit.app.api_openapi import openapi
from botkit.app.api_read import ExchangeReads, add_read_routes
from botkit.app.dashboard import add_dashboard_routes
from botkit.app.equity_log import EquityLog, account_label, equity_path
from botkit.settings import Settings

__all__ = ["build_router", "serve_equity"]


def serve_equity(settings: Settings) -> EquityLog:
    """``botkit serve``'s equity samples: in the file beside the journal (closed by the caller:
    it holds the file's lock)."""
    return EquityLog(equity_path(settings.journal), account=account_label(settings))


def build_router(
    settings: Settings,
    *,
    max_age_s: float,
    exchange_ttl_s: float = 2.0,
    equity: EquityLog | None = None,
) -> Router:
    """Every endpoint of ``botkit serve``. ``equity``: where the samples are kept
    (:func:`serve_equity`; by default in memory only)."""
    from botkit import __version__

    router = Router()
    if equity is None:
        equity = EquityLog(None)
    add_read_routes(
        router,
        settings,
        max_age_s=max_age_s,
        exchange=ExchangeReads(settings, ttl_s=exchange_ttl_s, equity=equity),
    )
    add_control_routes(router, settings)
    description = openapi(__version__)

    def get_openapi(_r: Request) -> Response:
        return json_response(200, description)

    router.add("GET", "/api/openapi.json", get_openapi)
    add_dashboard_routes(router)  # the page (/) and its assets: public, no data in them
    return router
