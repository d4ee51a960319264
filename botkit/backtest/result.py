"""The value a backtest run produces, from which the report and the figures are computed.

The driver fills a :class:`BacktestResult`: the period, the equity curve (sampled by the
driver, e.g. once a candle), the price it replayed, every order with its outcome (the
journal's :class:`~botkit.journal.records.Outcome` words), every fill, the counts of local
refusals by reason and exchange rejections by code, the final positions, the money
figures and the run's notes (gaps allowed through, warnings). :func:`order_rows` (from the
journal's plain rows), :meth:`FillRow.from_fill` and
:meth:`PositionRow.from_position` build rows from what the journal and the exchange port
return. Everything is a plain frozen value; amounts are ``Decimal``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from sys import intern
from typing import TYPE_CHECKING

from botkit.frozen import quick_init

if TYPE_CHECKING:
    from botkit.exchange.models import Fill, Position
    from botkit.journal.queries import OrderCells

__all__ = ["BacktestResult", "EquityPoint", "FillRow", "OrderRow", "PositionRow", "order_rows"]

_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class EquityPoint:
    """Account equity at ``time_ms``; ``exposure`` is the gross open size (sum of |qty| of
    every position) then — zero means flat. Exposure time counts the time it is not zero."""

    time_ms: int
    equity: Decimal
    exposure: Decimal = _ZERO


@quick_init
@dataclass(frozen=True, slots=True)
class OrderRow:
    """One order the strategies made and what became of it.

    ``outcome``: ``accepted`` (the exchange took it), ``rejected_local`` (refused before it
    left; ``reasons``), ``rejected`` (the exchange refused it; ``code``, ``msg``), ``failed``.
    """

    time_ms: int
    strategy: str
    rule: str
    cl_ord_id: str
    symbol: str
    side: str
    type: str
    px: Decimal | None
    sz: Decimal
    outcome: str
    code: str = ""
    msg: str = ""
    reasons: tuple[str, ...] = ()


def order_rows(cells: Iterable[OrderCells]) -> Iterator[OrderRow]:
    """The :class:`OrderRow` of each order the journal's
    :meth:`~botkit.journal.db.Journal.iter_order_cells` gives: the price and size sent, else
    the intended ones; the message, else the error (no record is built per order and read
    once: a year of orders paid about a third of the result for it)."""
    new = OrderRow
    for cell in cells:
        (
            _, ts_ms, strategy, rule, cl_ord_id, symbol, side, type_, px, sz, outcome, code, msg,
            why,
        ) = cell  # fmt: skip
        yield new(
            ts_ms,
            intern(strategy),
            intern(rule),
            cl_ord_id,
            intern(symbol),
            intern(side),
            intern(type_),
            Decimal(px) if px else None,
            _size(sz),
            intern(outcome) if outcome else "unsettled",
            "" if code is None else str(code),
            msg,  # type: ignore[arg-type]  # the message, else the error: NULL only as both are
            () if why is None else why,
        )


@lru_cache(maxsize=256)
def _size(text: str) -> Decimal:
    """An order size as a Decimal, one shared object per distinct text (sizes repeat)."""
    return Decimal(text)


@quick_init
@dataclass(frozen=True, slots=True)
class FillRow:
    """One execution: ``role`` is ``maker`` or ``taker``; ``fee`` as the exchange reports it."""

    time_ms: int
    cl_ord_id: str
    side: str
    px: Decimal
    qty: Decimal
    fee: Decimal
    role: str
    symbol: str = ""
    value: Decimal | None = None
    """The traded value in the settlement currency (px · qty · contract value) as the exchange
    reports it; ``None``: ``px · qty`` (one contract = one unit)."""
    pos_side: str = ""
    """The exchange's position side (``BOTH`` one-way, ``LONG`` / ``SHORT`` hedge)."""
    strategy: str = ""
    rule: str = ""
    """The strategy and rule whose order this executed (from the journal; ``""`` unknown)."""

    @classmethod
    def from_fill(cls, fill: Fill, strategy: str = "", rule: str = "") -> FillRow:
        """The row of an execution of ``/v3/trade/order/trades``, tagged with the strategy and
        rule that placed its order."""
        pos_side = fill.posSide
        # positional, in the fields' order, and each member's own value (``.value`` is a
        # property): a year's fills paid for both
        return cls(
            fill.cTime or 0,  # time_ms
            fill.clOrdId,  # cl_ord_id
            fill.side._value_,  # side
            fill.px or _ZERO,  # px
            fill.qty or _ZERO,  # qty
            fill.feeAmt or _ZERO,  # fee
            fill.role.lower(),  # role
            fill.symbol,  # symbol
            fill.value,  # value
            pos_side._value_ if pos_side is not None else "",  # pos_side
            strategy,  # strategy
            rule,  # rule
        )


@dataclass(frozen=True, slots=True)
class PositionRow:
    """A position still open at the end: ``qty`` signed (negative short) in one-way mode."""

    symbol: str
    pos_side: str
    qty: Decimal
    avg_px: Decimal | None
    unrealized_pnl: Decimal

    @classmethod
    def from_position(cls, position: Position) -> PositionRow:
        return cls(
            symbol=position.symbol,
            pos_side=position.posSide.value,
            qty=position.qty or _ZERO,
            avg_px=position.openAvgPx,
            unrealized_pnl=position.upl or _ZERO,
        )


@dataclass(frozen=True, slots=True)
class BacktestResult:
    """Everything a run produced. ``end_ms`` is exclusive (the end of the last candle);
    ``prices`` are the (time, price) points replayed — or one a candle, e.g. the close."""

    symbol: str
    interval_ms: int
    start_ms: int
    end_ms: int
    candles: int
    starting_balance: Decimal
    currency: str = "USDT"
    equity: Sequence[EquityPoint] = ()
    prices: Sequence[tuple[int, Decimal]] = ()
    orders: Sequence[OrderRow] = ()
    fills: Sequence[FillRow] = ()
    refused_by_reason: Mapping[str, int] = field(default_factory=dict)
    rejected_by_code: Mapping[str, int] = field(default_factory=dict)
    final_positions: Sequence[PositionRow] = ()
    realized_pnl: Decimal = _ZERO
    unrealized_pnl: Decimal = _ZERO
    fees: Decimal = _ZERO
    mark: Decimal | None = None
    """The price at the end (the last candle's close): what a trade still open is valued at."""
    marks: Mapping[str, Decimal] = field(default_factory=dict)
    """A portfolio run's price at the end per symbol (each file's last close; ``mark`` is then
    ``None``): what its trades still open are valued at."""
    by_rule: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """Per ``strategy/rule``: orders ``placed`` (the exchange accepted them), ``cancelled`` (by
    a cancel action, a ``keep:`` reconcile or a removed file) and ``replaced`` (a kept order
    cancelled and sent again because it drifted)."""
    meta: Mapping[str, str] = field(default_factory=dict)
    """What the run was (data file, strategies, settings, seed): shown as given, in order."""
    notes: Sequence[str] = ()
    """What the reader of the result should know, one line each: the gaps in the data the run
    was allowed through (``file:line: N missing between A and B``), strategies ``--symbol``
    left out, a strategy due more often than a candle closes."""
