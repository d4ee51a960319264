"""The status API's OpenAPI 3.1 description (hand-written; served at ``/api/openapi.json``).

``tests/e2e/test_serve_openapi.py`` validates it, checks that it names every route the server
has, and checks the live answers of a server reading a real journal against its schemas."""

from __future__ import annotations

from typing import Any

__all__ = ["openapi"]

_S: dict[str, Any] = {"type": "string"}
_SN: dict[str, Any] = {"type": ["string", "null"]}
_I: dict[str, Any] = {"type": "integer"}
_IN: dict[str, Any] = {"type": ["integer", "null"]}
_B: dict[str, Any] = {"type": "boolean"}
_NUM: dict[str, Any] = {"type": ["string", "null"], "description": "a decimal number as text"}


def _obj(props: dict[str, Any], *, extra: bool = True) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": extra,
    }


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _arr(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


_RULE = _obj(
    {
        "rule": _S,
        "fired": _B,
        "status": {**_S, "description": "fired, condition_false, cooldown, ... (RuleStatus)"},
        "reason": _S,
        "inputs": {"type": "object", "additionalProperties": _S},
    }
)
_CONTROL = _obj(
    {
        "engaged": _B,
        "reason": _SN,
        "by_setting": _B,
        "file": _SN,
        "switchable": {**_B, "description": "the API can switch it (a file, no setting)"},
    }
)
_HEALTH = _obj(
    {
        "healthy": _B,
        "problem": _SN,
        "last_cycle": _IN,
        "last_cycle_age_s": {"type": ["number", "null"]},
        "last_cycle_error": _SN,
        "last_error": _SN,
        "last_error_cycle": _IN,
        "orders_today": _I,
        "unsettled": _I,
        "halt": _SN,
        "kill_switch": _SN,
    }
)
_ORDER = _obj(
    {
        "cl_ord_id": _S,
        "ord_id": _SN,
        "cycle_id": _IN,
        "ts_ms": _I,
        "dry": _B,
        "strategy": _S,
        "rule": _S,
        "symbol": _S,
        "side": _S,
        "type": _S,
        "pos_side": _S,
        "mgn_mode": _S,
        "reduce_only": _B,
        "intent_px": _NUM,
        "intent_sz": _S,
        "px": _NUM,
        "sz": _NUM,
        "notes": {**_arr(_S), "description": "rounding and adjustments, in order"},
        "inputs": {"type": "object", "additionalProperties": _S},
        "reasons": {**_arr(_S), "description": "why it was refused"},
        "state": _S,
        "outcome": _SN,
        "code": _IN,
        "msg": _SN,
        "error": _SN,
        "attempts": _I,
        "sent_ms": _IN,
        "outcome_ms": _IN,
    }
)
_EVENT = _obj(
    {
        "id": _I,
        "ts_ms": _I,
        "cycle_id": _IN,
        "kind": _S,
        "strategy": _SN,
        "rule": _SN,
        "cl_ord_id": _SN,
        "text": _S,
        "detail": {"type": "object"},
    }
)
_EVALUATION = _obj(
    {"strategy": _S, "version": _S, "cycle_id": _IN, "ts_ms": _I, "rules": _arr(_ref("Rule"))}
)
_JOURNALED_RULE = {
    "allOf": [_ref("Rule"), _obj({"cycle_id": _IN, "ts_ms": _I, "version": _S})],
}
_ERROR = _obj({"error": _S})
_REQUEST = _obj(
    {
        "id": _S,
        "action": {"enum": ["cancel", "flatten"]},
        "strategy": _SN,
        "symbol": _SN,
        "by": _S,
        "filed_ms": _I,
        "status": {"enum": ["pending", "done", "refused", "failed"]},
    }
)

_SCHEMAS: dict[str, Any] = {
    "Error": _ERROR,
    "Health": _HEALTH,
    "Status": {
        "allOf": [
            _ref("Health"),
            _obj(
                {
                    "journal": _S,
                    "not_owned": {
                        "oneOf": [
                            {"type": "null"},
                            _obj(
                                {
                                    "seen_ms": _I,
                                    "orders": _arr(_obj({"text": _S, "why": _S})),
                                }
                            ),
                        ]
                    },
                }
            ),
        ]
    },
    "Controls": _obj({"halt": _ref("Control"), "kill_switch": _ref("Control")}),
    "Control": _CONTROL,
    "Rule": _RULE,
    "JournaledRule": _JOURNALED_RULE,
    "Evaluation": _EVALUATION,
    "Strategies": _obj(
        {
            "strategies": _arr(
                _obj(
                    {
                        "name": _S,
                        "version": _S,
                        "loaded_ms": _I,
                        "removed_ms": _IN,
                        "active": _B,
                        "on_delete": _SN,
                        "last_evaluation": {"oneOf": [{"type": "null"}, _ref("Evaluation")]},
                    }
                )
            )
        }
    ),
    "Positions": _obj(
        {
            "read_ms": _I,
            "balance": _obj({"eq": _NUM, "upl": _NUM}),
            "positions": _arr(
                _obj(
                    {
                        "symbol": _S,
                        "pos_side": _S,
                        "mgn_mode": _SN,
                        "qty": _S,
                        "avg_px": _NUM,
                        "mark_px": _NUM,
                        "upl": _NUM,
                        "realized": _NUM,
                        "fees": _NUM,
                        "lever": _NUM,
                        "liq_px": _NUM,
                    }
                )
            ),
            "by_strategy": _arr(
                _obj(
                    {
                        "strategy": _S,
                        "symbol": _S,
                        "pos_side": _S,
                        "qty": _S,
                        "avg_px": _S,
                        "realized": _S,
                        "unrealized": _S,
                        "fees": _S,
                        "fills": _I,
                        "since_ms": _IN,
                        "complete": _B,
                    }
                )
            ),
            "by_strategy_from": _S,
            "coverage": _arr(
                _obj(
                    {
                        "symbol": _S,
                        "pos_side": _S,
                        "since_ms": _IN,
                        "fills": _I,
                        "complete": _B,
                        "short_of_it": _SN,
                    }
                )
            ),
        }
    ),
    "OpenOrders": _obj(
        {
            "read_ms": _I,
            "open": _arr(
                _obj(
                    {
                        "strategy": _SN,
                        "rule": _SN,
                        "cl_ord_id": _SN,
                        "ord_id": _S,
                        "symbol": _S,
                        "side": _S,
                        "type": _S,
                        "px": _NUM,
                        "sz": _NUM,
                        "state": _S,
                    }
                )
            ),
            "by_rule": _arr(_obj({"strategy": _SN, "rule": _SN, "orders": _I})),
        }
    ),
    "Equity": _obj({"samples": _arr(_obj({"ts_ms": _I, "eq": _NUM, "upl": _NUM})), "sampled": _S}),
    "Order": _ORDER,
    "OrderWithHistory": _obj({"order": _ref("Order"), "history": _arr(_ref("Event"))}),
    "Decisions": _obj(
        {
            "orders": _arr(_ref("Order")),
            "fires": _arr({"allOf": [_ref("JournaledRule"), _obj({"strategy": _S})]}),
        }
    ),
    "Event": _EVENT,
    "Events": _obj({"events": _arr(_ref("Event")), "last_id": _I}),
    "Switch": _obj({"engage": _B}, extra=False),
    "Switched": _obj({"done": _S, "controls": _ref("Controls")}),
    "Selection": {
        "type": "object",
        "description": "exactly one of strategy, symbol, all",
        "properties": {
            "strategy": {"type": "string", "minLength": 1, "maxLength": 100},
            "symbol": {"type": "string", "minLength": 1, "maxLength": 100},
            "all": {"const": True},
        },
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
    },
    "Filed": _obj({"request": _S, "status": {"const": "pending"}, "href": _S, "note": _S}),
    "Request": {
        "allOf": [
            _REQUEST,
            {
                "type": "object",
                "properties": {"ok": _B, "lines": _arr(_S), "finished_ms": _I},
            },
        ]
    },
}


def _answer(schema: str, description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(schema)}}}


_ERRORS = {
    "401": _answer("Error", "no token, or a wrong one"),
}
_CONTROL_ERRORS = {
    **_ERRORS,
    "400": _answer("Error", "a malformed body"),
    "403": _answer("Error", "the CSRF check failed, or no token is configured"),
    "429": _answer("Error", "too many control requests (see Retry-After)"),
}


def _get(summary: str, schema: str, *params: dict[str, Any], extra: bool = False) -> Any:
    op: dict[str, Any] = {
        "summary": summary,
        "responses": {"200": _answer(schema), **_ERRORS},
    }
    if params:
        op["parameters"] = list(params)
        if any(p["in"] == "query" for p in params):
            op["responses"]["400"] = _answer("Error", "a malformed parameter")
        if any(p["in"] == "path" for p in params):
            op["responses"]["404"] = _answer("Error", "no such one")
    if extra:
        op["responses"]["503"] = _answer("Error", "no journal yet")
    return {"get": op}


def _q(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema or _I,
            "description": description}  # fmt: skip


def _p(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": _S}


def _post(
    summary: str, body: str, schema: str, code: str = "200", more: dict[str, Any] | None = None
) -> Any:
    responses = {code: _answer(schema), **_CONTROL_ERRORS, **(more or {})}
    return {
        "post": {
            "summary": summary,
            "description": "Needs the token, the X-Botkit-Csrf header and a JSON body"
            " (docs/security.md); rate limited per token.",
            "parameters": [
                {"name": "X-Botkit-Csrf", "in": "header", "required": True, "schema": _S}
            ],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref(body)}},
            },
            "responses": responses,
        }
    }


def openapi(version: str) -> dict[str, Any]:
    """The description, for botkit ``version``."""
    limit = _q("limit", "how many (1-1000)", {"type": "integer", "minimum": 1, "maximum": 1000})
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "botkit status API",
            "version": version,
            "description": "botkit serve: reads the journal and the exchange; controls the"
            " stop switches and files cancel / flatten for the service (docs/operations.md).",
        },
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/health": _get("what botkit status says", "Health"),
            "/api/status": _get("botkit status --json", "Status"),
            "/api/controls": _get("the kill switch and the halt", "Controls"),
            "/api/strategies": _get(
                "strategies: version, last evaluation of each rule", "Strategies", extra=True
            ),
            "/api/positions": _get(
                "positions and PnL, per symbol and per strategy", "Positions", extra=True
            ),
            "/api/equity": _get("the account's equity over time, as serve sampled it", "Equity"),
            "/api/orders": _get("open orders, by strategy and rule", "OpenOrders", extra=True),
            "/api/orders/{cl_ord_id}": _get(
                "one journaled order with its explanation and history",
                "OrderWithHistory",
                _p("cl_ord_id"),
                extra=True,
            ),
            "/api/decisions": _get(
                "recent orders with their explanation, and recent fires",
                "Decisions",
                limit,
                _q("strategy", "only this strategy", _S),
                extra=True,
            ),
            "/api/events": _get(
                "journal events (newest, or after an id)",
                "Events",
                limit,
                _q("after", "only events after this id"),
                _q("kind", "only events of this kind", _S),
                extra=True,
            ),
            "/api/openapi.json": {
                "get": {
                    "summary": "this description",
                    "responses": {
                        "200": {
                            "description": "OK",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                        **_ERRORS,
                    },
                }
            },
            "/api/control/kill-switch": _post(
                "engage or release the kill switch (its file)",
                "Switch",
                "Switched",
                more={"409": _answer("Error", "no kill_switch_file, or held by the setting")},
            ),
            "/api/control/halt": _post(
                "engage or release the halt (its file)",
                "Switch",
                "Switched",
                more={"409": _answer("Error", "no halt_file, or held by the setting")},
            ),
            "/api/control/cancel": _post(
                "file a cancel of a strategy's, a symbol's or all open orders",
                "Selection",
                "Filed",
                "202",
            ),
            "/api/control/flatten": _post(
                "file a flatten (cancel, then close positions reduce-only)",
                "Selection",
                "Filed",
                "202",
            ),
            "/api/control/requests/{request_id}": _get(
                "a filed cancel / flatten: pending, or its outcome", "Request", _p("request_id")
            ),
        },
    }
