"""The read-only expression context: what ``account``, ``position``, ``price``... mean.

:data:`ROOTS` lists the names an expression may start with (their views live in
:mod:`~botkit.rules.views`, :mod:`~botkit.rules.market` and :mod:`~botkit.rules.history`).
A :class:`Ctx` built from a :class:`~botkit.snapshot.Snapshot` hands out the views, computed
lazily and once per evaluation.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from botkit.exchange.models import PosSide
from botkit.intents import Activity
from botkit.rules.history import HistoryView
from botkit.rules.ids import parse_client_order_id, strategy_tag
from botkit.rules.market import InstrumentView, PriceView
from botkit.rules.views import (
    BOOL,
    NUM,
    AccountView,
    AnyKey,
    ContextError,
    Method,
    PositionsView,
    PositionView,
    RuleView,
    StrategyView,
    View,
    has_strategy_tag,
)
from botkit.snapshot import Snapshot

__all__ = [
    "BOOL",
    "NUM",
    "ROOTS",
    "AnyKey",
    "ContextError",
    "Ctx",
    "Method",
    "View",
]

ROOTS: dict[str, tuple[Any, str]] = {
    "account": (AccountView, AccountView.DOC),
    "position": (PositionView, "the position this rule works on (its pos_side; zeros when flat)"),
    "positions": (PositionsView, PositionsView.DOC),
    "history": (HistoryView, HistoryView.DOC),
    "instrument": (InstrumentView, InstrumentView.DOC),
    "price": (PriceView, PriceView.DOC),
    "now": (NUM, "the evaluation time, Unix ms"),
    "rule": (RuleView, RuleView.DOC),
    "strategy": (StrategyView, StrategyView.DOC),
    "params": (AnyKey(NUM, "a name of the strategy's params"), "the strategy's params"),
}
"""The names an expression may start with."""


class Ctx:
    """Everything one evaluation of one strategy may read, with per-evaluation caches."""

    __slots__ = (
        "_by_rule",
        "_mine",
        "_positions",
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
        self._positions: dict[PosSide, PositionView] = {}
        self._mine: list[Any] | None = None
        self._by_rule: dict[str, int] | None = None
        self._views: dict[str, Any] = {}

    def position(self, pos_side: PosSide) -> PositionView:
        view = self._positions.get(pos_side)
        if view is None:
            found = None
            for p in self.snapshot.positions:
                if (
                    p.symbol == self.symbol
                    and p.posSide is pos_side
                    and (
                        found is None or (self.mgn_mode is not None and p.mgnMode is self.mgn_mode)
                    )
                ):
                    found = p
            view = self._positions[pos_side] = PositionView(found, self.now_ms)
        return view

    def my_open_orders(self) -> list[Any]:
        if self._mine is None:
            tag = strategy_tag(self.strategy)
            self._mine = [o for o in self.snapshot.open_orders if has_strategy_tag(o.clOrdId, tag)]
        return self._mine

    def open_by_rule(self) -> dict[str, int]:
        """Resting orders of this strategy counted by rule tag."""
        if self._by_rule is None:
            counts: dict[str, int] = {}
            for order in self.my_open_orders():
                parsed = parse_client_order_id(order.clOrdId)
                if parsed is not None:
                    counts[parsed.rule_tag] = counts.get(parsed.rule_tag, 0) + 1
            self._by_rule = counts
        return self._by_rule

    def root(self, name: str, scope: str | None) -> Any:
        """The view (or value) a root name stands for; ``scope`` is the rule or the pos_side."""
        if name == "position":
            return self.position(_SIDES[scope or "BOTH"])
        if name == "rule":
            return RuleView(self, scope or "")
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = self._make(name)
        return view

    def _make(self, name: str) -> Any:
        if name == "account":
            return AccountView(self.snapshot.balance)
        if name == "positions":
            return PositionsView(self)
        if name == "history":
            return HistoryView(self)
        if name == "price":
            return PriceView(self)
        if name == "strategy":
            return StrategyView(self)
        if name == "instrument":
            instrument = self.snapshot.instruments.get(self.symbol)
            if instrument is None:
                raise ContextError(f"instrument {self.symbol} is not in the snapshot")
            return InstrumentView(instrument)
        if name == "now":
            return Decimal(self.now_ms)
        raise ContextError(f"unknown context name {name!r}")


_SIDES = {side.value: side for side in PosSide}
