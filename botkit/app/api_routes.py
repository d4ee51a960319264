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

__all__ = ["build_router"]


def build_router(
    settings: Settings,
    *,
    max_age_s: float,
    exchange_ttl_s: float = 2.0,
    keep_equity: bool = False,
) -> Router:
    """Every endpoint of ``botkit serve``. ``keep_equity``: the equity samples in the file
    beside the journal (serve's own; else in memory)."""
    from botkit import __version__

    router = Router()
    equity = (
        EquityLog(equity_path(settings.journal), account=account_label(settings))
        if keep_equity
        else EquityLog(None)
    )
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
