"""The read-only expression context: what ``account``, ``position``, ``price``... mean.

:data:`ROOTS` declares the names an expression may start with, once each: their kind, one line
of documentation and how to read them (their views, and each view's fields, are declared in
:mod:`~botkit.rules.views`, :mod:`~botkit.rules.market` and :mod:`~botkit.rules.history`). A
:class:`Ctx` built from a :class:`~botkit.snapshot.Snapshot` holds what one evaluation of one
strategy shares (the positions found, the strategy's open orders), computed lazily and once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, ClassVar

from botkit.exchange.models import OrderSide, Position, PosSide
from botkit.intents import Activity
from botkit.rules.history import HistoryView
from botkit.rules.ids import parse_client_order_id, strategy_tag
from botkit.rules.market import InstrumentView, PriceView
from botkit.rules.views import (
    BOOL,
    NUM,
    ZERO,
    AccountView,
    AnyKey,
    ContextError,
    Field,
    Method,
    PositionsView,
    PositionView,
    RuleView,
    StrategyView,
    View,
)
from botkit.snapshot import Snapshot

__all__ = [
    "BOOL",
    "NUM",
    "ROOTS",
    "SIDES",
    "AnyKey",
    "ContextError",
    "Ctx",
    "Field",
    "Method",
    "Root",
    "View",
]


@dataclass(frozen=True, slots=True)
class Root:
    """A name an expression may start with, declared once: ``kind`` (a :class:`View` class,
    ``NUM`` or an :class:`AnyKey`), one line of documentation, and ``read``: (the evaluation's
    :class:`Ctx`, the scope: the rule's pos_side or name) → its view or value (None for
    ``params``, folded into constants at load)."""

    kind: Any
    doc: str
    read: Callable[[Ctx, str | None], Any] | None = None


class Ctx:
    """Everything one evaluation of one strategy may read, with per-evaluation caches."""

    __slots__ = (
        "_legs",
        "_open",
        "_views",
        "activity",
        "mgn_mode",
        "now_ms",
        "snapshot",
        "strategy",
        "symbol",
    )

    def __init__(
        self,
        snapshot: Snapshot,
        strategy: str,
        symbol: str,
        activity: Activity,
        now_ms: int,
        mgn_mode: Any = None,
    ) -> None:
        self.snapshot = snapshot
        self.strategy = strategy
        self.symbol = symbol
        self.mgn_mode = mgn_mode
        self.activity = activity
        self.now_ms = now_ms
        self._open: tuple[Sequence[Any], Mapping[str, int]] | None = None
        """This strategy's open orders and their count by rule tag, once read."""
        self._views: dict[PosSide, PositionView] = {}
        """Position views by PosSide: each made once per evaluation."""
        self._legs: dict[PosSide, tuple[Position | None, Decimal]] = {}
        """(position, signed qty) by PosSide, once found."""

    def position(self, pos_side: PosSide) -> PositionView:
        """The view of the strategy's position on ``pos_side`` (zeros when flat)."""
        view: PositionView | None = self._views.get(pos_side)
        if view is None:
            qty = self.position_qty(pos_side)
            found = self._legs[pos_side][0]
            view = self._views[pos_side] = PositionView(found, self.now_ms, qty)
        return view

    def position_qty(self, pos_side: PosSide) -> Decimal:
        """``position.qty`` on ``pos_side``: the signed size (> 0 long, < 0 short, 0 flat).

        Nearly every condition reads it first, so it is found here without building the view
        (one call instead of four, the biggest single cost of a quiet evaluation); the view
        takes it from here. The position is the symbol's on ``pos_side`` (the strategy's margin
        mode preferred when there are two); its qty is signed by its side (SELL or a SHORT leg
        negative), whatever sign the exchange sent."""
        leg = self._legs.get(pos_side)
        if leg is not None:
            return leg[1]
        found: Position | None = None
        symbol, mgn_mode = self.symbol, self.mgn_mode
        for p in self.snapshot.positions:
            if (
                p.symbol == symbol
                and p.posSide is pos_side
                and (found is None or (mgn_mode is not None and p.mgnMode is mgn_mode))
            ):
                found = p
        qty = ZERO
        if found is not None:
            raw = found.qty
            if raw is not None:
                qty = raw
            side = found.side
            if side is _SELL or found.posSide is _SHORT:
                qty = -abs(qty)
            elif side is _BUY:
                qty = abs(qty)
        self._legs[pos_side] = (found, qty)
        return qty

    def my_open_orders(self) -> Sequence[Any]:
        """The resting orders of this strategy (by the strategy tag of their client id)."""
        found = self._open
        if found is None:
            self.open_by_rule()
            found = self._open
            assert found is not None
        return found[0]

    def open_by_rule(self) -> Mapping[str, int]:
        """Resting orders of this strategy counted by rule tag (read with
        :meth:`my_open_orders` in one pass over the open orders, once)."""
        found = self._open
        if found is not None:
            return found[1]
        orders = self.snapshot.open_orders
        if not orders:
            self._open = _NO_OPEN
            return _NO_OPEN[1]
        mine: list[Any] = []
        counts: dict[str, int] = {}
        tag = strategy_tag(self.strategy)
        for order in orders:
            cl_ord_id = order.clOrdId
            parsed = parse_client_order_id(cl_ord_id) if cl_ord_id else None
            if parsed is not None and parsed.strategy_tag == tag:
                mine.append(order)
                counts[parsed.rule_tag] = counts.get(parsed.rule_tag, 0) + 1
        self._open = (mine, counts)
        return counts


_NO_OPEN: tuple[Sequence[Any], Mapping[str, int]] = ((), MappingProxyType({}))
"""No resting orders (shared, read-only)."""
SIDES = {side.value: side for side in PosSide}
"""PosSide by its word, for ``position`` scopes."""
_BUY, _SELL, _SHORT = OrderSide.BUY, OrderSide.SELL, PosSide.SHORT
"""Enum members read once: a class-attribute lookup of an enum is slow on Python 3.11."""


def _instrument(ctx: Ctx, _scope: str | None) -> InstrumentView:
    instrument = ctx.snapshot.instruments.get(ctx.symbol)
    if instrument is None:
        raise ContextError(f"instrument {ctx.symbol} is not in the snapshot")
    return InstrumentView(instrument)


class SymbolView(View):
    DOC = "another symbol, by name: its prices, instrument and (one-way) position"
    FIELDS: ClassVar[Mapping[str, Field]] = {}
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx


class SymbolsView(View):
    """``symbols.NAME``: the view of symbol NAME (checked against the instruments at load)."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def key(self, symbol: str) -> SymbolView:
        c = self._ctx
        return SymbolView(Ctx(c.snapshot, c.strategy, symbol, c.activity, c.now_ms, c.mgn_mode))


SymbolView.FIELDS = {
    "price": Field(PriceView, "its prices, as `price.…`", lambda v: PriceView(v._ctx)),
    "instrument": Field(
        InstrumentView, "its instrument, as `instrument.…`", lambda v: _instrument(v._ctx, None)
    ),
    "position": Field(
        PositionView,
        "its one-way (BOTH) position, as `position.…`",
        lambda v: v._ctx.position(PosSide.BOTH),
    ),
}


ROOTS: dict[str, Root] = {
    "account": Root(AccountView, AccountView.DOC, lambda ctx, _: AccountView(ctx.snapshot.balance)),
    "position": Root(
        PositionView,
        "the position this rule works on (its pos_side; zeros when flat)",
        lambda ctx, scope: ctx.position(SIDES[scope or "BOTH"]),
    ),
    "positions": Root(PositionsView, PositionsView.DOC, lambda ctx, _: PositionsView(ctx)),
    "history": Root(HistoryView, HistoryView.DOC, lambda ctx, _: HistoryView(ctx)),
    "instrument": Root(InstrumentView, InstrumentView.DOC, _instrument),
    "price": Root(PriceView, PriceView.DOC, lambda ctx, _: PriceView(ctx)),
    "now": Root(NUM, "the evaluation time, Unix ms", lambda ctx, _: Decimal(ctx.now_ms)),
    "rule": Root(RuleView, RuleView.DOC, lambda ctx, scope: RuleView(ctx, scope or "")),
    "strategy": Root(StrategyView, StrategyView.DOC, lambda ctx, _: StrategyView(ctx)),
    "params": Root(AnyKey(NUM, "a name of the strategy's params"), "the strategy's params"),
    "symbols": Root(
        AnyKey(SymbolView, "a symbol's name"),
        "other symbols by name: symbols.ETH_USDT_PERP.price.mark",
        lambda ctx, _: SymbolsView(ctx),
    ),
}
"""The names an expression may start with."""


def reference() -> str:
    """The reference of the context (docs/strategies.md, "The context"), made from
    :data:`ROOTS` and the views' ``FIELDS``: a heading and a table per view, each view once
    (``tests/rules/test_docs.py`` holds the page to it)."""
    sections: list[str] = []
    seen: set[type[View]] = set()
    for name, root in ROOTS.items():
        if isinstance(root.kind, type) and issubclass(root.kind, View):
            _section(name, root.kind, sections, seen)
        elif root.kind == NUM:
            sections.append(f"**`{name}`** — {root.doc}\n")
        elif isinstance(root.kind, AnyKey) and isinstance(root.kind.of, type):
            _section(f"{name}.SYMBOL", root.kind.of, sections, seen)
    return "\n".join(sections)


_TYPE_WORD = {NUM: "number", BOOL: "true/false"}
_ARG_EXAMPLE = {"window": "'1h'", "field": "'FIELD'"}


def _section(path: str, view: type[View], out: list[str], seen: set[type[View]]) -> None:
    seen.add(view)
    rows = [f"**`{path}`** — {view.DOC}\n", "| name | type | meaning |", "|---|---|---|"]
    below: list[tuple[str, type[View]]] = []
    for name, field in view.FIELDS.items():
        kind = field.kind
        if isinstance(kind, Method):
            args = ", ".join(_ARG_EXAMPLE[a] for a in kind.args)
            rows.append(f"| `{path}.{name}({args})` | {_TYPE_WORD[kind.returns]} | {kind.doc} |")
        elif isinstance(kind, AnyKey):
            rows.append(f"| `{path}.{name}.CODE.…` | — | {field.doc} |")
            below.append((f"{path}.{name}.CODE", kind.of))
        elif isinstance(kind, type):
            rows.append(f"| `{path}.{name}.…` | — | {field.doc} |")
            below.append((f"{path}.{name}", kind))
        else:
            rows.append(f"| `{path}.{name}` | {_TYPE_WORD[kind]} | {field.doc} |")
    out.append("\n".join(rows) + "\n")
    for sub_path, sub in below:
        if sub not in seen:
            _section(sub_path, sub, out, seen)
