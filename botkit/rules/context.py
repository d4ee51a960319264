"""The read-only expression context: what ``account``, ``position``, ``price``... mean.

Two faces of one description. Statically, every view class declares ``FIELDS`` (name → type and
one line of documentation); the expression compiler checks names against them and the reference
documentation is generated from them. At run time a :class:`Ctx` built from a
:class:`~botkit.snapshot.Snapshot` hands out the views, computed lazily and once per evaluation.
All numbers are :class:`~decimal.Decimal`; a missing price is an error, a missing position is
zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from botkit.exchange.models import (
    Balance,
    BalanceDetail,
    Fill,
    Instrument,
    InstrumentStatus,
    Order,
    OrderHistoryState,
    OrderSide,
    Position,
    PositionHistory,
    PosSide,
)
from botkit.intents import Activity, RuleActivity
from botkit.rules.durations import parse_duration
from botkit.rules.ids import parse_client_order_id, rule_tag, strategy_tag
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

    def __init__(self, position: Position | None, now_ms: int) -> None:
        self._p = position
        self._now = now_ms
        qty = ZERO if position is None else _d(position.qty)
        if position is not None and (
            position.side is OrderSide.SELL or position.posSide is PosSide.SHORT
        ):
            qty = -abs(qty)
        elif position is not None and position.side is OrderSide.BUY:
            qty = abs(qty)
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
            return ctx.position(PosSide.LONG)
        if name == "short":
            return ctx.position(PosSide.SHORT)
        if name == "net":
            return ctx.position(PosSide.BOTH)
        opens = [p for p in ctx.snapshot.positions if _d(p.qty) != 0]
        if name == "count":
            return Decimal(len(opens))
        if name in ("upl", "im"):
            return sum((_d(getattr(p, name)) for p in opens), ZERO)
        raise AttributeError(name)


# --- history ---------------------------------------------------------------------------------


class RecordView(View):
    """One history record; every field is zero when there is none (``exists`` false)."""

    NUMS: ClassVar[dict[str, str]] = {}
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {}
    __slots__ = ("_r",)

    def __init__(self, record: Any | None) -> None:
        self._r = record

    def __getattr__(self, name: str) -> Any:
        if name == "exists":
            return self._r is not None
        if name == "is_buy":
            return self._r is not None and self._r.side is OrderSide.BUY
        if name.startswith("_") or name not in self.FIELDS:
            raise AttributeError(name)
        if self._r is None:
            return ZERO
        return self.value(self._r, name)

    @staticmethod
    def value(record: Any, name: str) -> Decimal:
        raw = getattr(record, name)
        if raw is None:
            return ZERO
        return raw if isinstance(raw, Decimal) else Decimal(raw)


def _record_fields(nums: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    return {
        **{k: (NUM, v) for k, v in nums.items()},
        "exists": (BOOL, "there is such a record"),
        "is_buy": (BOOL, "the record's side is BUY"),
    }


class FillRecord(RecordView):
    DOC = "one fill (spec 2.6)"
    NUMS: ClassVar[dict[str, str]] = {
        "px": "fill price",
        "qty": "filled contracts",
        "value": "filled value",
        "feeAmt": "fee",
        "feeRate": "fee rate",
        "cTime": "time (ms)",
    }
    FIELDS = _record_fields(NUMS)
    __slots__ = ()


class OrderRecord(RecordView):
    DOC = "one closed order (spec 2.5)"
    NUMS: ClassVar[dict[str, str]] = {
        "px": "limit price",
        "sz": "size",
        "avgPx": "average fill price",
        "execQty": "filled contracts",
        "execAmt": "filled amount",
        "feeAmt": "fee",
        "lever": "leverage",
        "cTime": "created (ms)",
        "uTime": "closed (ms)",
    }
    FIELDS = _record_fields(NUMS)
    __slots__ = ()


class ClosedPositionRecord(RecordView):
    DOC = "one closed position (spec 2.7)"
    NUMS: ClassVar[dict[str, str]] = {
        "openAvgPx": "average entry price",
        "closeAvgPx": "average exit price",
        "qty": "size",
        "closedQty": "closed size",
        "pnl": "realized PnL",
        "fee": "fees",
        "cTime": "opened (ms)",
        "uTime": "closed (ms)",
    }
    FIELDS = _record_fields(NUMS)
    __slots__ = ()


def _fill_time(r: Fill) -> int:
    return r.cTime or r.uTime or 0


def _closed_time(r: Order | PositionHistory) -> int:
    return r.uTime or r.cTime or 0


class RecordsView(View):
    """A list of history records of the strategy's symbol, newest last, with window helpers."""

    RECORD: ClassVar[type[RecordView]] = RecordView
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {}
    __slots__ = ("_items", "_now", "_strategy", "_time")

    def __init__(
        self, items: Sequence[Any], now_ms: int, time: Callable[[Any], int], strategy: str
    ) -> None:
        self._items = sorted(items, key=time)
        self._now = now_ms
        self._time = time
        self._strategy = strategy

    def _sub(self, keep: Callable[[Any], bool]) -> RecordsView:
        return type(self)(
            [r for r in self._items if keep(r)], self._now, self._time, self._strategy
        )

    def _window(self, window: str) -> list[Any]:
        since = self._now - parse_duration(window)
        return [r for r in self._items if self._time(r) >= since]

    def count(self, window: str) -> Decimal:
        return Decimal(len(self._window(window)))

    def sum(self, name: str, window: str) -> Decimal:
        return sum((self.RECORD.value(r, name) for r in self._window(window)), ZERO)

    def avg(self, name: str, window: str) -> Decimal:
        items = self._window(window)
        if not items:
            return ZERO
        return sum((self.RECORD.value(r, name) for r in items), ZERO) / len(items)

    def min(self, name: str, window: str) -> Decimal:
        return min((self.RECORD.value(r, name) for r in self._window(window)), default=ZERO)

    def max(self, name: str, window: str) -> Decimal:
        return max((self.RECORD.value(r, name) for r in self._window(window)), default=ZERO)

    def __getattr__(self, name: str) -> Any:
        if name == "last":
            return self.RECORD(self._items[-1] if self._items else None)
        if name == "last_ago":
            return Decimal(self._now - self._time(self._items[-1])) if self._items else NEVER
        if name == "mine":
            tag = strategy_tag(self._strategy)
            return self._sub(lambda r: _has_tag(getattr(r, "clOrdId", ""), tag))
        if name == "buys":
            return self._sub(lambda r: r.side is OrderSide.BUY)
        if name == "sells":
            return self._sub(lambda r: r.side is OrderSide.SELL)
        raise AttributeError(name)


def _has_tag(cl_ord_id: str, tag: str) -> bool:
    parsed = parse_client_order_id(cl_ord_id) if cl_ord_id else None
    return parsed is not None and parsed.strategy_tag == tag


def _records_fields(
    view: type[RecordsView], record: type[RecordView], what: str, mine: bool
) -> dict[str, tuple[Any, str]]:
    fields: dict[str, tuple[Any, str]] = {
        "count": (Method(("window",), NUM, f"{what} in the window, e.g. count('1h')"), ""),
        "sum": (
            Method(("field", "window"), NUM, f"sum of a field, e.g. sum('{_first(record)}', '1d')"),
            "",
        ),
        "avg": (Method(("field", "window"), NUM, "average of a field (0 when none)"), ""),
        "min": (Method(("field", "window"), NUM, "smallest value of a field (0 when none)"), ""),
        "max": (Method(("field", "window"), NUM, "largest value of a field (0 when none)"), ""),
        "last": (record, f"the latest of the {what}"),
        "last_ago": (NUM, "ms since the latest (Infinity when none)"),
        "buys": (view, "only BUY side"),
        "sells": (view, "only SELL side"),
    }
    if mine:
        fields["mine"] = (view, "only this strategy's orders (by client order id)")
    return fields


def _first(record: type[RecordView]) -> str:
    return next(iter(record.NUMS))


class FillsView(RecordsView):
    DOC = "fills of the strategy's symbol"
    RECORD = FillRecord
    __slots__ = ()


class OrdersView(RecordsView):
    DOC = "closed orders of the strategy's symbol"
    RECORD = OrderRecord
    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name == "filled":
            return self._sub(lambda r: r.state is OrderHistoryState.FILLED)
        return super().__getattr__(name)


class ClosedPositionsView(RecordsView):
    DOC = "closed positions of the strategy's symbol"
    RECORD = ClosedPositionRecord
    __slots__ = ()


FillsView.FIELDS = _records_fields(FillsView, FillRecord, "fills", mine=True)
OrdersView.FIELDS = {
    **_records_fields(OrdersView, OrderRecord, "closed orders", mine=True),
    "filled": (OrdersView, "only fully filled orders"),
}
ClosedPositionsView.FIELDS = _records_fields(
    ClosedPositionsView, ClosedPositionRecord, "closed positions", mine=False
)


class HistoryView(View):
    DOC = "what happened on the strategy's symbol (as far as the snapshot reaches back)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        "fills": (FillsView, "fills"),
        "orders": (OrdersView, "closed orders"),
        "positions": (ClosedPositionsView, "closed positions"),
    }
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        ctx = self._ctx
        snap, sym, now, name_ = ctx.snapshot, ctx.symbol, ctx.now_ms, ctx.strategy
        if name == "fills":
            return FillsView([f for f in snap.fills if f.symbol == sym], now, _fill_time, name_)
        if name == "orders":
            items = [o for o in snap.order_history if o.symbol == sym]
            return OrdersView(items, now, _closed_time, name_)
        if name == "positions":
            closed = [p for p in snap.position_history if p.symbol == sym]
            return ClosedPositionsView(closed, now, _closed_time, name_)
        raise AttributeError(name)


# --- instrument and price --------------------------------------------------------------------


class InstrumentView(View):
    DOC = "the strategy's instrument and its order limits (spec 2.9; absent limits are 0)"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        **{
            name: (NUM, doc)
            for name, doc in {
                "tSz": "price tick",
                "lotSz": "size step (contracts)",
                "minSz": "minimum order size",
                "ctVal": "contract value in the base currency",
                "minPx": "lowest order price",
                "maxPx": "highest order price",
                "limitMaxQty": "largest limit order",
                "marketMaxQty": "largest market order",
                "maxLever": "maximum leverage",
                "lever": "default leverage",
                "ordPxRange": "allowed distance from the mark (fraction)",
                "iM": "initial margin rate",
                "mM": "maintenance margin rate",
            }.items()
        },
        "is_open": (BOOL, "status is OPEN"),
    }
    __slots__ = ("_i",)

    def __init__(self, instrument: Instrument) -> None:
        self._i = instrument

    def __getattr__(self, name: str) -> Any:
        if name == "is_open":
            return self._i.status is InstrumentStatus.OPEN
        if name.startswith("_") or name not in self.FIELDS:
            raise AttributeError(name)
        value = getattr(self._i, name)
        return ZERO if value is None else Decimal(value)


_TICKER = {
    "last": ("c", "last trade price"),
    "mark": ("mPx", "mark price"),
    "index": ("iPx", "index price"),
    "bid": ("bPx", "best bid"),
    "ask": ("aPx", "best ask"),
    "open_24h": ("o", "price 24 hours ago"),
    "high_24h": ("h", "24h high"),
    "low_24h": ("l", "24h low"),
    "volume_24h": ("qty", "24h volume (contracts)"),
}


class PriceView(View):
    DOC = "prices of the strategy's symbol (tickers, limit price); a missing one is an error"
    FIELDS: ClassVar[dict[str, tuple[Any, str]]] = {
        **{name: (NUM, doc) for name, (_, doc) in _TICKER.items()},
        "mid": (NUM, "(bid + ask) / 2"),
        "change_24h": (NUM, "last / open_24h - 1 (0.05 = +5%)"),
        "buy_limit": (NUM, "highest BUY price allowed now (limitPrice)"),
        "sell_limit": (NUM, "lowest SELL price allowed now (limitPrice)"),
    }
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def _missing(self, what: str) -> ContextError:
        return ContextError(f"price.{what} is not available for {self._ctx.symbol} now")

    def __getattr__(self, name: str) -> Decimal:
        ctx = self._ctx
        if name in _TICKER:
            ticker = ctx.snapshot.tickers.get(ctx.symbol)
            value = None if ticker is None else getattr(ticker, _TICKER[name][0])
            if value is None:
                raise self._missing(name)
            return Decimal(value)
        if name == "mid":
            return (self.bid + self.ask) / 2
        if name == "change_24h":
            opened = self.open_24h
            if opened == 0:
                raise self._missing(name)
            return self.last / opened - 1
        if name in ("buy_limit", "sell_limit"):
            band = ctx.snapshot.limit_prices.get(ctx.symbol)
            value = None if band is None else (band.buyLmt if name == "buy_limit" else band.sellLmt)
            if value is None:
                raise self._missing(name)
            return Decimal(value)
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
    }
    __slots__ = ("_ctx",)

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Decimal:
        mine = self._ctx.my_open_orders()
        if name == "open_orders":
            return Decimal(len(mine))
        if name == "open_buys":
            return Decimal(sum(1 for o in mine if o.side is OrderSide.BUY))
        if name == "open_sells":
            return Decimal(sum(1 for o in mine if o.side is OrderSide.SELL))
        raise AttributeError(name)


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
            self._mine = [o for o in self.snapshot.open_orders if _has_tag(o.clOrdId, tag)]
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
            return self.position(PosSide(scope or "BOTH"))
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
