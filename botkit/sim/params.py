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
from botkit.sim.engine import Rejected
from botkit.sim.orders import OrderInput

__all__ = [
    "decimal_param",
    "enum_param",
    "flag_param",
    "int_param",
    "parse_order",
    "str_param",
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
        return OrderInput(
            symbol=symbol.upper(),
            side=side,
            type=kind,
            sz=sz,
            px=decimal_param(raw, "px"),
            mgn_mode=enum_param(raw, "mgnMode", MarginMode),
            pos_side=enum_param(raw, "posSide", PosSide),
            cl_ord_id=str_param(raw, "clOrdId"),
            reduce_only=flag_param(raw, "reduceOnly"),
            tif=enum_param(raw, "timeInForce", TimeInForce) or TimeInForce.GTC,
            stp=enum_param(raw, "stpMode", StpMode) or StpMode.NONE,
        )
    except SimError as exc:
        return Rejected(cl_text, exc.code, exc.msg)
