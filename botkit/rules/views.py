"""The context views an expression reads, each field declared once.

Every view class declares ``FIELDS``: name → :class:`Field` (its type, one line of documentation
and how to read it from the view). That one table is what the expression compiler checks names
against (with a did-you-mean), what the compiled expressions read through (the field's ``read``,
called directly), what attribute access on a view answers (:meth:`View.__getattr__`) and what
the reference documentation names (``tests/rules/test_docs.py``): adding a field is one entry.
At run time the views wrap the snapshot's models. All numbers are :class:`~decimal.Decimal`; an
absent position reads as zeros.

This module: the base types, ``account``, ``position`` / ``positions``, ``rule`` and ``strategy``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
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
    "Field",
    "Method",
    "PositionView",
    "PositionsView",
    "RuleView",
    "StrategyView",
    "View",
    "has_strategy_tag",
    "numbers",
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


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a view, declared once: ``kind`` (``NUM``, ``BOOL``, a :class:`View` class,
    an :class:`AnyKey` or a :class:`Method`), one line of documentation, and ``read``: the
    view → the value (None for a :class:`Method`, which is the view's method of that name)."""

    kind: Any
    doc: str
    read: Callable[[Any], Any] | None = None


class View:
    """Base of the context views. ``FIELDS`` maps attribute → :class:`Field`."""

    FIELDS: ClassVar[Mapping[str, Field]] = {}
    DOC: ClassVar[str] = ""
    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        """A field read as an attribute (``position.availQty`` in the actions): its ``read``."""
        field = type(self).FIELDS.get(name)
        if field is None or field.read is None:
            raise AttributeError(name)
        return field.read(self)


def _d(value: Decimal | None) -> Decimal:
    return ZERO if value is None else value


def _num(get: Callable[[Any], Decimal | None]) -> Callable[[Any], Decimal]:
    """The number ``get`` reads, 0 when absent."""

    def read(model: Any) -> Decimal:
        value = get(model)
        return ZERO if value is None else value

    return read


def numbers(
    read: Callable[[str], Callable[[Any], Any]], docs: Mapping[str, str]
) -> dict[str, Field]:
    """Number fields: each name of ``docs`` (name → doc) read by ``read(name)``."""
    return {name: Field(NUM, doc, read(name)) for name, doc in docs.items()}


# --- account ---------------------------------------------------------------------------------


def _currency_num(name: str) -> Callable[[CurrencyView], Decimal]:
    get = _num(operator.attrgetter(name))

    def read(view: CurrencyView) -> Decimal:
        detail = view._d
        return ZERO if detail is None else get(detail)

    return read


class CurrencyView(View):
    DOC = "one currency of the account (balance details)"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_d",)

    def __init__(self, detail: BalanceDetail | None) -> None:
        self._d = detail


CurrencyView.FIELDS = numbers(
    _currency_num,
    {
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
    },
)


class CurrencyMap(View):
    DOC = "per-currency details: account.ccy.USDT.avail (zeros for an absent currency)"
    __slots__ = ("_by",)

    def __init__(self, details: Iterable[BalanceDetail]) -> None:
        self._by = {d.ccy.upper(): d for d in details}

    def key(self, name: str) -> CurrencyView:
        return CurrencyView(self._by.get(name.upper()))


def _balance_num(name: str) -> Callable[[AccountView], Decimal]:
    get = _num(operator.attrgetter(name))

    def read(view: AccountView) -> Decimal:
        return get(view._b)

    return read


class AccountView(View):
    DOC = "the futures account (balance, spec 2.10)"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_b",)

    def __init__(self, balance: Balance) -> None:
        self._b = balance


AccountView.FIELDS = {
    **numbers(
        _balance_num,
        {
            "eq": "total equity",
            "isoEq": "isolated-margin equity",
            "availMgn": "available margin",
            "im": "initial margin in use",
            "mm": "maintenance margin",
            "mmr": "maintenance margin ratio",
            "upl": "unrealized PnL",
        },
    ),
    "ccy": Field(
        AnyKey(CurrencyView, "a currency code"),
        "per currency: account.ccy.USDT.avail",
        lambda view: CurrencyMap(view._b.details),
    ),
}


# --- positions -------------------------------------------------------------------------------


_BUY, _SELL = OrderSide.BUY, OrderSide.SELL
_LONG, _SHORT, _BOTH = PosSide.LONG, PosSide.SHORT, PosSide.BOTH
"""Enum members read once: ``OrderSide.SELL`` is a slow class-attribute lookup on Python 3.11."""


class PositionView(View):
    DOC = "a position on the strategy's symbol (all zeros when flat)"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_now", "_p", "qty")

    def __init__(self, position: Position | None, now_ms: int, qty: Decimal) -> None:
        """``qty``: the signed size, as :meth:`Ctx.position_qty` computes it."""
        self._p = position
        self._now = now_ms
        self.qty = qty


def _position_num(name: str, unsigned: bool = False) -> Callable[[PositionView], Decimal]:
    get = _num(operator.attrgetter(name))

    def read(view: PositionView) -> Decimal:
        position = view._p
        if position is None:
            return ZERO
        value = get(position)
        return abs(value) if unsigned else value

    return read


def _position_age(view: PositionView) -> Decimal:
    opened = None if view._p is None else view._p.cTime
    return ZERO if opened is None or view.qty == 0 else Decimal(view._now - opened)


PositionView.FIELDS = {
    "qty": Field(
        NUM, "signed size in contracts: > 0 long, < 0 short, 0 flat", operator.attrgetter("qty")
    ),
    "size": Field(NUM, "unsigned size in contracts", lambda view: abs(view.qty)),
    "availQty": Field(
        NUM,
        "size that can be closed now (contracts, unsigned)",
        _position_num("availQty", unsigned=True),
    ),
    **numbers(
        _position_num,
        {
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
        },
    ),
    "age": Field(NUM, "ms since the position was opened (0 when flat)", _position_age),
    "is_open": Field(BOOL, "a position exists", lambda view: view.qty != 0),
    "is_long": Field(BOOL, "qty > 0", lambda view: view.qty > 0),
    "is_short": Field(BOOL, "qty < 0", lambda view: view.qty < 0),
}


class PositionsView(View):
    DOC = "the legs of the strategy's symbol and account-wide totals"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def opens(self) -> list[Position]:
        """The open positions of the whole account."""
        return [p for p in self._ctx.snapshot.positions if _d(p.qty) != 0]


def _positions_sum(name: str) -> Callable[[PositionsView], Decimal]:
    get = _num(operator.attrgetter(name))

    def read(view: PositionsView) -> Decimal:
        return sum((get(p) for p in view.opens()), ZERO)

    return read


PositionsView.FIELDS = {
    "long": Field(PositionView, "the LONG leg (hedge mode)", lambda v: v._ctx.position(_LONG)),
    "short": Field(PositionView, "the SHORT leg (hedge mode)", lambda v: v._ctx.position(_SHORT)),
    "net": Field(PositionView, "the one-way (BOTH) position", lambda v: v._ctx.position(_BOTH)),
    "count": Field(
        NUM, "open positions in the whole account", lambda view: Decimal(len(view.opens()))
    ),
    "upl": Field(NUM, "unrealized PnL of all open positions", _positions_sum("upl")),
    "im": Field(NUM, "initial margin of all open positions", _positions_sum("im")),
}


# --- the rule's and the strategy's own activity ----------------------------------------------


class RuleView(View):
    DOC = "this rule's own recent activity (from the journal and the open orders)"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_act", "_ctx", "_rule")

    def __init__(self, ctx: Ctx, rule: str) -> None:
        self._ctx = ctx
        self._rule = rule
        self._act = ctx.activity.get(rule) or RuleActivity()

    def orders(self, window: str) -> Decimal:
        since = self._ctx.now_ms - parse_duration(window)
        return Decimal(self._act.orders_since(since))

    def fires(self, window: str) -> Decimal:
        since = self._ctx.now_ms - parse_duration(window)
        return Decimal(self._act.fires_since(since))


def _last_fire_ago(view: RuleView) -> Decimal:
    last = view._act.last_fire_ms
    return NEVER if last is None else Decimal(view._ctx.now_ms - last)


def _rule_open_orders(view: RuleView) -> Decimal:
    return Decimal(view._ctx.open_by_rule().get(rule_tag(view._rule), 0))


RuleView.FIELDS = {
    "orders": Field(Method(("window",), NUM, "orders this rule placed in the window"), ""),
    "fires": Field(Method(("window",), NUM, "times this rule fired in the window"), ""),
    "last_fire_ago": Field(
        NUM, "ms since this rule last fired (Infinity when never)", _last_fire_ago
    ),
    "open_orders": Field(NUM, "this rule's orders resting now", _rule_open_orders),
}


class StrategyView(View):
    DOC = "this strategy's resting orders (attributed by client order id)"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx


def _oldest_open_ago(view: StrategyView) -> Decimal:
    now = view._ctx.now_ms
    mine = view._ctx.my_open_orders()
    oldest = min((o.cTime if o.cTime is not None else now for o in mine), default=now)
    return Decimal(max(0, now - oldest))


def _mine_on(side: OrderSide) -> Callable[[StrategyView], Decimal]:
    def read(view: StrategyView) -> Decimal:
        return Decimal(sum(1 for o in view._ctx.my_open_orders() if o.side is side))

    return read


StrategyView.FIELDS = {
    "open_orders": Field(
        NUM,
        "orders of this strategy resting now",
        lambda view: Decimal(len(view._ctx.my_open_orders())),
    ),
    "open_buys": Field(NUM, "of which BUY", _mine_on(_BUY)),
    "open_sells": Field(NUM, "of which SELL", _mine_on(_SELL)),
    "oldest_open_ago": Field(
        NUM, "ms since the oldest of them was placed (0 when none)", _oldest_open_ago
    ),
}


def has_strategy_tag(cl_ord_id: str, tag: str) -> bool:
    """Whether a client order id is one of botkit's with this strategy tag."""
    parsed = parse_client_order_id(cl_ord_id) if cl_ord_id else None
    return parsed is not None and parsed.strategy_tag == tag
