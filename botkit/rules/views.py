"""The context views an expression reads: their static schema (``FIELDS``) and run-time values.

Every view class declares ``FIELDS`` (name → type and one line of documentation): the expression
compiler checks names against them and the reference documentation is generated from them. At
run time the views wrap the snapshot's models. All numbers are :class:`~decimal.Decimal`; an
absent position reads as zeros.

This module: the base types, ``account``, ``position`` / ``positions``, ``rule`` and ``strategy``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from botkit.exchange.models import (
    Balance,
    BalanceDetail,
    OrderSide,
    Position,
    PosSide,
)
from botkit.intents import RuleActivity
from botkit.rules.durations import parse_duration
from botkit.rules.ids import parse_client_order_id, rule_tag

if TYPE_CHECKING:
    from botkit.rules.context import Ctx

__all__ = [
    "BOOL",
    "NEVER",
    "NUM",
    "ZERO",
    "AccountView",
    "AnyKey",
    "ContextError",
    "Method",
    "PositionView",
    "PositionsView",
    "RuleView",
    "StrategyView",
    "View",
    "has_strategy_tag",
]

NUM = "number"
BOOL = "boolean"
ZERO = Decimal(0)
NEVER = Decimal("Infinity")


class ContextError(Exception):
    """A value the expression asked for does not exist now (no ticker, no instrument)."""


@dataclass(frozen=True, slots=True)
class Method:
    """A view method called with literal arguments: ``'window'`` (a duration) or ``'field'``."""

    args: tuple[str, ...]
    returns: str
    doc: str


@dataclass(frozen=True, slots=True)
class AnyKey:
    """A view whose attributes are data keys (``account.ccy.USDT``, ``params.drop``)."""

    of: Any
    doc: str


class View:
    """Base of the context views. ``FIELDS`` maps attribute → (type, doc)."""

    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {}
    DOC: ClassVar[str] = ""
    __slots__ = ()


def _d(value: Decimal | None) -> Decimal:
    return ZERO if value is None else value


# --- account ---------------------------------------------------------------------------------


class CurrencyView(View):
    DOC = "one currency of the account (balance details)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        name: (NUM, doc)
        for name, doc in {
            "eq": "equity in this currency",
            "isoEq": "isolated-margin equity",
            "avail": "available balance",
            "trdHold": "held by open orders",
            "upl": "unrealized PnL",
            "isoAvail": "isolated available",
            "isoHold": "isolated held",
            "isoUpl": "isolated unrealized PnL",
            "im": "initial margin",
            "mm": "maintenance margin",
            "mmr": "maintenance margin rate",
            "imr": "initial margin rate",
        }.items()
    }
    __slots__ = ("_d",)

    def __init__(self, detail: BalanceDetail | None) -> None:
        self._d = detail

    def __getattr__(self, name: str) -> Decimal:
        if name.startswith("_") or name not in self.FIELDS:
            raise AttributeError(name)
        return ZERO if self._d is None else _d(getattr(self._d, name))


class CurrencyMap(View):
    DOC = "per-currency details: account.ccy.USDT.avail (zeros for an absent currency)"
    __slots__ = ("_by",)

    def __init__(self, details: Iterable[BalanceDetail]) -> None:
        self._by = {d.ccy.upper(): d for d in details}

    def key(self, name: str) -> CurrencyView:
        return CurrencyView(self._by.get(name.upper()))


class AccountView(View):
    DOC = "the futures account (balance, spec 2.10)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        "eq": (NUM, "total equity"),
        "isoEq": (NUM, "isolated-margin equity"),
        "availMgn": (NUM, "available margin"),
        "im": (NUM, "initial margin in use"),
        "mm": (NUM, "maintenance margin"),
        "mmr": (NUM, "maintenance margin ratio"),
        "upl": (NUM, "unrealized PnL"),
        "ccy": (AnyKey(CurrencyView, "a currency code"), "per currency: account.ccy.USDT.avail"),
    }
    __slots__ = ("_b",)

    def __init__(self, balance: Balance) -> None:
        self._b = balance

    def __getattr__(self, name: str) -> Any:
        if name == "ccy":
            return CurrencyMap(self._b.details)
        if name.startswith("_") or name not in self.FIELDS:
            raise AttributeError(name)
        return _d(getattr(self._b, name))


# --- positions -------------------------------------------------------------------------------


_POSITION_FIELDS = {
    "availQty": "size that can be closed now (contracts, unsigned)",
    "openAvgPx": "average entry price",
    "markPx": "mark price the exchange used",
    "liqPx": "estimated liquidation price",
    "lever": "leverage",
    "im": "initial margin",
    "mm": "maintenance margin",
    "mgn": "margin",
    "upl": "unrealized PnL",
    "uplRatio": "unrealized PnL ratio",
    "pnl": "realized PnL",
    "fee": "fees paid",
    "mgnRatio": "margin ratio",
}


_BUY, _SELL = OrderSide.BUY, OrderSide.SELL
_LONG, _SHORT, _BOTH = PosSide.LONG, PosSide.SHORT, PosSide.BOTH
"""Enum members read once: ``OrderSide.SELL`` is a slow class-attribute lookup on Python 3.11."""


class PositionView(View):
    DOC = "a position on the strategy's symbol (all zeros when flat)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        "qty": (NUM, "signed size in contracts: > 0 long, < 0 short, 0 flat"),
        "size": (NUM, "unsigned size in contracts"),
        **{name: (NUM, doc) for name, doc in _POSITION_FIELDS.items()},
        "age": (NUM, "ms since the position was opened (0 when flat)"),
        "is_open": (BOOL, "a position exists"),
        "is_long": (BOOL, "qty > 0"),
        "is_short": (BOOL, "qty < 0"),
    }
    __slots__ = ("_now", "_p", "qty")

    def __init__(self, position: Position | None, now_ms: int, qty: Decimal) -> None:
        """``qty``: the signed size, as :meth:`Ctx.position_qty` computes it."""
        self._p = position
        self._now = now_ms
        self.qty = qty

    def __getattr__(self, name: str) -> Any:
        if name == "size":
            return abs(self.qty)
        if name == "is_open":
            return self.qty != 0
        if name == "is_long":
            return self.qty > 0
        if name == "is_short":
            return self.qty < 0
        if name == "age":
            opened = None if self._p is None else self._p.cTime
            return ZERO if opened is None or self.qty == 0 else Decimal(self._now - opened)
        if name.startswith("_") or name not in self.FIELDS:
            raise AttributeError(name)
        if self._p is None:
            return ZERO
        value = _d(getattr(self._p, name))
        return abs(value) if name == "availQty" else value


class PositionsView(View):
    DOC = "the legs of the strategy's symbol and account-wide totals"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        "long": (PositionView, "the LONG leg (hedge mode)"),
        "short": (PositionView, "the SHORT leg (hedge mode)"),
        "net": (PositionView, "the one-way (BOTH) position"),
        "count": (NUM, "open positions in the whole account"),
        "upl": (NUM, "unrealized PnL of all open positions"),
        "im": (NUM, "initial margin of all open positions"),
    }
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        ctx = self._ctx
        if name == "long":
            return ctx.position(_LONG)
        if name == "short":
            return ctx.position(_SHORT)
        if name == "net":
            return ctx.position(_BOTH)
        opens = [p for p in ctx.snapshot.positions if _d(p.qty) != 0]
        if name == "count":
            return Decimal(len(opens))
        if name in ("upl", "im"):
            return sum((_d(getattr(p, name)) for p in opens), ZERO)
        raise AttributeError(name)


# --- the rule's and the strategy's own activity ----------------------------------------------


class RuleView(View):
    DOC = "this rule's own recent activity (from the journal and the open orders)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        "orders": (Method(("window",), NUM, "orders this rule placed in the window"), ""),
        "fires": (Method(("window",), NUM, "times this rule fired in the window"), ""),
        "last_fire_ago": (NUM, "ms since this rule last fired (Infinity when never)"),
        "open_orders": (NUM, "this rule's orders resting now"),
    }
    __slots__ = ("_act", "_ctx", "_rule")

    def __init__(self, ctx: Ctx, rule: str) -> None:
        self._ctx = ctx
        self._rule = rule
        self._act = ctx.activity.get(rule) or RuleActivity()

    def orders(self, window: str) -> Decimal:
        since = self._ctx.now_ms - parse_duration(window)
        return Decimal(sum(1 for t, _ in self._act.orders if t >= since))

    def fires(self, window: str) -> Decimal:
        since = self._ctx.now_ms - parse_duration(window)
        return Decimal(sum(1 for t in self._act.fire_times_ms if t >= since))

    def __getattr__(self, name: str) -> Decimal:
        if name == "last_fire_ago":
            last = self._act.last_fire_ms
            return NEVER if last is None else Decimal(self._ctx.now_ms - last)
        if name == "open_orders":
            return Decimal(self._ctx.open_by_rule().get(rule_tag(self._rule), 0))
        raise AttributeError(name)


class StrategyView(View):
    DOC = "this strategy's resting orders (attributed by client order id)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        "open_orders": (NUM, "orders of this strategy resting now"),
        "open_buys": (NUM, "of which BUY"),
        "open_sells": (NUM, "of which SELL"),
        "oldest_open_ago": (NUM, "ms since the oldest of them was placed (0 when none)"),
    }
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Decimal:
        mine = self._ctx.my_open_orders()
        if name == "open_orders":
            return Decimal(len(mine))
        if name == "open_buys":
            return Decimal(sum(1 for o in mine if o.side is _BUY))
        if name == "open_sells":
            return Decimal(sum(1 for o in mine if o.side is _SELL))
        if name == "oldest_open_ago":
            now = self._ctx.now_ms
            oldest = min((o.cTime if o.cTime is not None else now for o in mine), default=now)
            return Decimal(max(0, now - oldest))
        raise AttributeError(name)


def has_strategy_tag(cl_ord_id: str, tag: str) -> bool:
    """Whether a client order id is one of botkit's with this strategy tag."""
    parsed = parse_client_order_id(cl_ord_id) if cl_ord_id else None
    return parsed is not None and parsed.strategy_tag == tag
