"""pydantic validation errors → one located, operator-readable line each.

``file:line:column: what is wrong — what to do``: unknown keys get a did-you-mean (difflib),
missing keys an example, enums the allowed words, wrong types the expected shape.
"""

from __future__ import annotations

import types
import typing
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from botkit.errors import ConfigError
from botkit.rules.hints import did_you_mean
from botkit.rules.schema import StrategySpec
from botkit.rules.yamlsrc import Path, SourceMap

__all__ = ["did_you_mean", "validation_problems"]

_EXAMPLES = {
    "strategy": "strategy: btc-dip-ladder",
    "symbol": "symbol: BTC_USDT_PERP",
    "every": "every: 1m",
    "rules": "rules: followed by '- name: ...' items",
    "name": "name: buy-the-dip",
    "side": "side: BUY",
    "sz": "sz: 1",
    "count": "count: 10",
    "from_px": "from_px: price.mark * 0.99",
    "center": "center: price.mark",
    "step_px": "step_px: price.mark * 0.002",
    "levels": "levels: 5",
    "lever": "lever: 5",
    "per": "per: 1h",
}

_DURATIONS = ("every", "cooldown", "per")
_TYPE_WORDS = {
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "decimal_type": "expected a number",
    "decimal_parsing": "expected a number",
    "string_type": "expected text or an expression",
    "model_type": "expected a mapping ('key: value' lines or {key: value})",
    "model_attributes_type": "expected a mapping ('key: value' lines or {key: value})",
    "dict_type": "expected a mapping ('key: value' lines or {key: value})",
    "list_type": "expected a list ('- item' lines)",
    "too_short": "the list is empty",
}


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated and Optional; keep list/dict so an index can step into them."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = args[0]
        else:
            return annotation


def _model_at(path: Path) -> type[BaseModel] | None:
    current: Any = StrategySpec
    for part in path:
        current = _unwrap(current)
        if isinstance(part, int):
            if typing.get_origin(current) is not list:
                return None
            current = typing.get_args(current)[0]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part)
            if field is None:
                return None
            current = field.annotation
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _words(items: Any) -> str:
    return str(items).replace("'", "")


def _shown(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    return repr(value)


def _problem(err: ErrorDetails, smap: SourceMap) -> ConfigError:
    loc: Path = tuple(p for p in err["loc"] if isinstance(p, str | int))
    kind = err["type"]
    key = str(loc[-1]) if loc else "document"
    value = err.get("input")
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1])
        allowed = list(model.model_fields) if model is not None else []
        hint = did_you_mean(key, allowed)
        if any(c in key for c in "()*/+"):
            hint = (
                "a comma inside { ... } ends the value: quote the expression "
                '("floor(x, 1)") or write the mapping one key per line'
            )
        return ConfigError(f"unknown key '{key}'", where=smap.key_at(loc), hint=hint)
    if kind == "missing":
        example = _EXAMPLES.get(key, f"{key}: ...")
        return ConfigError(
            f"missing key '{key}'", where=smap.value_at(loc[:-1]), hint=f"add '{example}'"
        )
    where = smap.value_at(loc)
    ctx = err.get("ctx") or {}
    if kind == "enum":
        return ConfigError(
            f"{key}: {value!r} is not allowed",
            where=where,
            hint=f"use one of {_words(ctx.get('expected'))}",
        )
    if kind == "string_pattern_mismatch":
        if key in _DURATIONS:
            return ConfigError(
                f"{key}: {value!r} is not a duration",
                where=where,
                hint="write a number and a unit: 30s, 10m, 1h30m, 1d",
            )
        return ConfigError(
            f"{key}: {value!r} has characters that are not allowed",
            where=where,
            hint="use letters, digits, '_', '-' and '.'",
        )
    if kind == "value_error":
        message = str(ctx.get("error") or err["msg"])
        text, _, hint = message.partition(" — ")
        return ConfigError(f"{key}: {text}", where=where, hint=hint)
    if kind == "string_type" and key in _DURATIONS:
        return ConfigError(
            f"{key}: {_shown(value)} is not a duration",
            where=where,
            hint="write a number and a unit: 30s, 10m, 1h30m, 1d",
        )
    if kind in _TYPE_WORDS:
        shown = "" if isinstance(value, dict | list) else f" (got {_shown(value)})"
        if kind == "too_short":
            return ConfigError(
                f"{key}: {_TYPE_WORDS[kind]}", where=where, hint="add at least one item"
            )
        return ConfigError(f"{key}: {_TYPE_WORDS[kind]}{shown}", where=where)
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return ConfigError(f"{key}: {err['msg'].lower()} (got {value!r})", where=where)
    return ConfigError(f"{key}: {err['msg']}", where=where)


def validation_problems(exc: ValidationError, smap: SourceMap) -> list[ConfigError]:
    """One located problem per pydantic error, in file order."""
    problems = [_problem(err, smap) for err in exc.errors(include_url=False)]
    return sorted(problems, key=lambda p: (p.where.line or 0, p.where.column or 0))
