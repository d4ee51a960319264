"""Reading request parameters the way the exchange does: lenient in letter case, strict in value.

Query values arrive as strings; JSON bodies are parsed with ``parse_float=Decimal``, so a number
may arrive as ``Decimal`` or ``int`` and an amount as a string. Enum words are accepted in any
letter case (the spec's example sends ``buy``). A wrong value raises ``SimError`` 400
``Param error: <name> ...`` naming the parameter and what it accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any, TypeVar

from botkit.exchange.models import MarginMode, OrderSide, OrderType, PosSide, StpMode, TimeInForce
from botkit.sim import codes
from botkit.sim.codes import SimError
from botkit.sim.orders import OrderInput
from botkit.sim.placing import Rejected

__all__ = [
    "cancel_items",
    "decimal_param",
    "enum_param",
    "flag_param",
    "id_int_param",
    "id_param",
    "int_param",
    "merged",
    "parse_order",
    "str_param",
    "symbol_param",
]

E = TypeVar("E", bound=Enum)

_ORDER_KEYS = frozenset(
    {
        "symbol",
        "side",
        "mgnMode",
        "posSide",
        "type",
        "clOrdId",
        "px",
        "sz",
        "reduceOnly",
        "timeInForce",
        "stpMode",
    }
)


def str_param(source: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = source.get(name)
    if value is None or value == "":
        if required:
            raise SimError.param(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise SimError.param(f"{name} must be a string")
    return value


def enum_param(
    source: Mapping[str, Any], name: str, kind: type[E], *, required: bool = False
) -> E | None:
    text = str_param(source, name, required=required)
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        words = ", ".join(str(m.value) for m in kind)
        raise SimError.param(f"{name} must be one of {words}, got {text!r}") from None


def int_param(source: Mapping[str, Any], name: str) -> int | None:
    value = source.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise SimError.param(f"{name} must be an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise SimError.param(f"{name} must be an integer, got {value!r}")


def decimal_param(source: Mapping[str, Any], name: str) -> Decimal | None:
    value = source.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | Decimal):
        raise SimError.param(f'{name} must be a decimal number (a string such as "1.5")')
    try:
        number = Decimal(value) if not isinstance(value, Decimal) else value
    except InvalidOperation:
        raise SimError.param(f"{name} must be a decimal number, got {value!r}") from None
    if not number.is_finite():
        raise SimError.param(f"{name} must be a finite number, got {value!r}")
    return number


def flag_param(source: Mapping[str, Any], name: str) -> bool:
    value = source.get(name)
    if value is None or value == "":
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise SimError.param(f"{name} must be true or false, got {value!r}")


T = TypeVar("T")


def _required(name: str, value: T | None) -> T:
    if value is None:
        raise SimError.param(f"{name} is required")
    return value


def parse_order(raw: Any) -> OrderInput | Rejected:
    """One order object of a batch → the typed order, or its rejection (code 400)."""
    if not isinstance(raw, dict):
        return Rejected("", codes.BAD_PARAM, "Param error: each order must be a JSON object")
    cl = raw.get("clOrdId")
    cl_text = cl if isinstance(cl, str) else ""
    try:
        unknown = sorted(set(raw) - _ORDER_KEYS)
        if unknown:
            raise SimError.param(f"unknown order field {unknown[0]!r}")
        side = _required("side", enum_param(raw, "side", OrderSide))
        kind = _required("type", enum_param(raw, "type", OrderType))
        symbol = _required("symbol", str_param(raw, "symbol"))
        sz = _required("sz", decimal_param(raw, "sz"))
        px = decimal_param(raw, "px")
        return OrderInput(
            symbol=symbol.upper(),
            side=side,
            type=kind,
            sz=sz,
            px=px,
            mgn_mode=enum_param(raw, "mgnMode", MarginMode),
            pos_side=enum_param(raw, "posSide", PosSide),
            cl_ord_id=str_param(raw, "clOrdId"),
            reduce_only=flag_param(raw, "reduceOnly"),
            tif=enum_param(raw, "timeInForce", TimeInForce) or TimeInForce.GTC,
            stp=enum_param(raw, "stpMode", StpMode) or StpMode.NONE,
            sz_text=_text(raw.get("sz")),
            px_text=None if px is None else _text(raw.get("px")),
        )
    except SimError as exc:
        return Rejected(cl_text, exc.code, exc.msg)


def _text(value: Any) -> str:
    """An amount as written: a JSON string as is, a JSON number as its text."""
    return value if isinstance(value, str) else str(value)


def merged(query: Mapping[str, Any], body: Any) -> dict[str, Any]:
    merged: dict[str, Any] = dict(query)
    if isinstance(body, dict):
        merged.update(body)
    elif body is not None:
        raise SimError.param("the body must be a JSON object")
    return merged


def symbol_param(query: Mapping[str, Any]) -> str | None:
    symbol = str_param(query, "symbol")
    return symbol.upper() if symbol else None


def id_param(source: Mapping[str, Any], name: str) -> str | None:
    value = source.get(name)
    if value is None or value == "":
        return None
    text = str(value)
    if not text.isdigit():
        raise SimError.param(f"{name} must be a numeric order id, got {value!r}")
    return text


def id_int_param(source: Mapping[str, Any], name: str) -> int | None:
    text = id_param(source, name)
    return int(text) if text is not None else None


def cancel_items(query: Mapping[str, Any], body: Any) -> list[tuple[str, str | None, str | None]]:
    """``{symbol, ordIds: [...], clOrdIds: [...]}`` or ``[{symbol, ordId | clOrdId}, ...]``."""
    if isinstance(body, list):
        items = []
        for raw in body:
            if not isinstance(raw, dict):
                raise SimError.param("each cancel must be a JSON object {symbol, ordId|clOrdId}")
            symbol = (str_param(raw, "symbol", required=True) or "").upper()
            items.append((symbol, id_param(raw, "ordId"), str_param(raw, "clOrdId")))
        return items
    args = merged(query, body)
    symbol = (str_param(args, "symbol", required=True) or "").upper()
    ord_ids, cl_ids = args.get("ordIds") or [], args.get("clOrdIds") or []
    if not isinstance(ord_ids, list) or not isinstance(cl_ids, list):
        raise SimError.param("ordIds and clOrdIds must be JSON arrays")
    if not ord_ids and not cl_ids:
        raise SimError.param("ordIds or clOrdIds is required")
    out: list[tuple[str, str | None, str | None]] = [
        (symbol, id_param({"ordId": o}, "ordId"), None) for o in ord_ids
    ]
    out += [(symbol, None, str(c)) for c in cl_ids]
    return out
