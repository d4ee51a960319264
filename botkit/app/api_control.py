"""The status API's control endpoints (``POST /api/control/...``): the stop controls, and
cancel / flatten filed for the service. Each is behind the token, the CSRF check and the rate
limit (:mod:`botkit.app.api`), and goes through :mod:`botkit.app.control` — the code the CLI
runs — with the token's name as who asked."""

from __future__ import annotations

from typing import Any

from botkit.app import control
from botkit.app.api import ApiError, Request, Response, Router, json_response
from botkit.app.api_read import control_state
from botkit.errors import BotkitError
from botkit.settings import Settings

__all__ = ["add_control_routes"]


def _only(body: dict[str, Any], allowed: tuple[str, ...]) -> dict[str, Any]:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(map(repr, unknown))[:200]}")
    return body


def _engage(request: Request) -> bool:
    body = _only(request.json(), ("engage",))
    engage = body.get("engage")
    if not isinstance(engage, bool):
        raise ApiError(400, 'send {"engage": true} to engage, {"engage": false} to release')
    return engage


def _selection(request: Request) -> dict[str, Any]:
    body = _only(request.json(), ("strategy", "symbol", "all"))
    given = {k: body.get(k) for k in ("strategy", "symbol", "all") if body.get(k) is not None}
    if len(given) != 1:
        raise ApiError(
            400, 'name exactly one of {"strategy": NAME}, {"symbol": SYMBOL}, {"all": true}'
        )
    ((key, value),) = given.items()
    if key == "all":
        if value is not True:
            raise ApiError(400, '"all" must be true')
        return {}
    if not isinstance(value, str) or not 0 < len(value) <= 100:
        raise ApiError(400, f"{key} must be a name of at most 100 characters")
    return {key: value}


def add_control_routes(router: Router, settings: Settings) -> None:
    """Register the control endpoints on ``router``."""

    def stop_control(which: control.Control) -> Any:
        def handle(request: Request) -> Response:
            engage = _engage(request)
            try:
                done = control.switch(settings, which, engage=engage, by=f"api:{request.caller}")
            except BotkitError as exc:
                raise ApiError(409, str(exc)) from None
            return json_response(200, {"done": done, "controls": control_state(settings)})

        return handle

    def manual(action: control.Action) -> Any:
        def handle(request: Request) -> Response:
            chosen = _selection(request)
            try:
                request_id = control.file_request(
                    settings, action, by=f"api:{request.caller}", **chosen
                )
            except BotkitError as exc:
                raise ApiError(500, str(exc)) from None
            return json_response(
                202,
                {
                    "request": request_id,
                    "status": "pending",
                    "href": f"/api/control/requests/{request_id}",
                    "note": "the service runs it at the end of its next cycle",
                },
                ("Location", f"/api/control/requests/{request_id}"),
            )

        return handle

    def get_request(request: Request) -> Response:
        found = control.request_state(settings, request.params["request_id"])
        if found is None:
            raise ApiError(404, "no such request")
        return json_response(200, found)

    router.add("POST", "/api/control/kill-switch", stop_control("kill_switch"), control=True)
    router.add("POST", "/api/control/halt", stop_control("halt"), control=True)
    router.add("POST", "/api/control/cancel", manual("cancel"), control=True)
    router.add("POST", "/api/control/flatten", manual("flatten"), control=True)
    router.add("GET", "/api/control/requests/{request_id}", get_request)
