"""Round trips from fills, and which rule made or lost the money. Pure.

A **trade** is a round trip of one position: it opens when the position of its symbol (and, in
hedge mode, its position side) leaves zero and closes when it is back at zero. Fills in the
position's direction add to it (a ladder's rungs join the trade their first rung opened);
fills against it reduce it (a partial close keeps the trade open). A one-way fill that goes
through zero — it closes the position and opens the opposite one — is split in two at the
quantity that closes: its closing part ends the trade, its rest opens the next; its value and
fee are split in the same proportion (the closing share rounded to 1e-8, the rest is the
remainder, so nothing is lost or counted twice).

Each fill is tagged with the strategy and rule whose order it executed (by the order's client
id in the journal). A trade's **entry** is the rule of its first fill and its **exit** the rule
of its last; ``entry_rules`` lists every rule that added to it.

Money, per trade, in the settlement currency: ``gross`` is the price PnL from the fills'
traded values (``value`` = px · qty · contract value as the exchange reports it): for a long,
Σ exit values − Σ entry values; for a short the opposite; ``fees`` is Σ of the trade's fill
fees (a rebate is negative); ``net`` = gross − fees. A trade still open at the end is valued at
the final ``mark`` (its remaining quantity as if closed there, no fee) and marked ``open``.

Σ net over every trade is the account's net PnL: the exchange's realized PnL + unrealized
PnL − fees (the equity's change), up to the exchange's own rounding of its average price and of
each realized amount to 1e-8. Funding is not part of any trade: the simulator books none;
a live account's funding would be the one difference between Σ net and the equity's change.

:func:`attribute` sums trades into a table per rule (by the rule that opened them, and by the
rule that closed them; each table adds up to Σ net) and per strategy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

from botkit.backtest.result import FillRow

__all__ = ["RuleRow", "Tag", "Trade", "attribute", "build_trades"]

_ZERO = Decimal(0)
_PLACES = Decimal("1e-8")


@dataclass(frozen=True, slots=True)
class Tag:
    """The strategy and rule that placed an order (``""`` when the journal does not know it,
    e.g. an order placed by hand)."""

    strategy: str = ""
    rule: str = ""

    def label(self) -> str:
        if not self.strategy and not self.rule:
            return "(unknown)"
        return f"{self.strategy}/{self.rule}"


@dataclass(frozen=True, slots=True)
class Trade:
    """One round trip (see the module doc). ``side`` is ``long`` or ``short``; ``pos_side`` the
    exchange's (``BOTH`` in one-way mode); times in epoch ms; ``exit_ms`` is the end of the run
    for an ``open`` trade; ``qty`` the largest size it reached; prices are average prices."""

    number: int
    symbol: str
    pos_side: str
    side: str
    status: str
    entry: Tag
    exit: Tag
    entry_rules: tuple[str, ...]
    entry_ms: int
    exit_ms: int
    qty: Decimal
    entry_px: Decimal
    exit_px: Decimal
    fills: int
    gross: Decimal
    fees: Decimal
    net: Decimal

    @property
    def holding_ms(self) -> int:
        return self.exit_ms - self.entry_ms


@dataclass(slots=True)
class _Open:
    symbol: str
    pos_side: str
    direction: int
    entry: Tag
    entry_ms: int
    entry_rules: list[str] = field(default_factory=list)
    position: Decimal = _ZERO
    peak: Decimal = _ZERO
    entry_qty: Decimal = _ZERO
    entry_value: Decimal = _ZERO
    entry_px_qty: Decimal = _ZERO
    exit_qty: Decimal = _ZERO
    exit_value: Decimal = _ZERO
    exit_px_qty: Decimal = _ZERO
    fees: Decimal = _ZERO
    fills: int = 0
    contract: Decimal = Decimal(1)
    last: Tag = field(default_factory=Tag)
    last_ms: int = 0

    def add(self, tag: Tag, fill: FillRow, qty: Decimal, value: Decimal, fee: Decimal) -> None:
        self.fills += 1
        self.fees += fee
        self.entry_qty += qty
        self.entry_value += value
        self.entry_px_qty += fill.px * qty
        self.position += qty
        self.peak = max(self.peak, self.position)
        if fill.px and qty:
            self.contract = value / (fill.px * qty)
        label = tag.label()
        if label not in self.entry_rules:
            self.entry_rules.append(label)
        self.last, self.last_ms = tag, fill.time_ms

    def reduce(self, tag: Tag, fill: FillRow, qty: Decimal, value: Decimal, fee: Decimal) -> None:
        self.fills += 1
        self.fees += fee
        self.exit_qty += qty
        self.exit_value += value
        self.exit_px_qty += fill.px * qty
        self.position -= qty
        self.last, self.last_ms = tag, fill.time_ms

    def trade(self, number: int, end_ms: int, mark: Decimal | None) -> Trade:
        status = "closed"
        exit_value, exit_qty, exit_px_qty, exit_ms = (
            self.exit_value, self.exit_qty, self.exit_px_qty, self.last_ms
        )  # fmt: skip
        if self.position:
            status, exit_ms = "open", end_ms
            if mark is not None:
                exit_value += self.position * mark * self.contract
                exit_px_qty += self.position * mark
                exit_qty += self.position
        gross = (exit_value - self.entry_value) * self.direction
        if status == "open" and mark is None:
            gross = _ZERO
        return Trade(
            number=number,
            symbol=self.symbol,
            pos_side=self.pos_side,
            side="long" if self.direction > 0 else "short",
            status=status,
            entry=self.entry,
            exit=self.last if status == "closed" else Tag(),
            entry_rules=tuple(self.entry_rules),
            entry_ms=self.entry_ms,
            exit_ms=exit_ms,
            qty=self.peak,
            entry_px=_avg(self.entry_px_qty, self.entry_qty),
            exit_px=_avg(exit_px_qty, exit_qty),
            fills=self.fills,
            gross=gross,
            fees=self.fees,
            net=gross - self.fees,
        )


def _avg(px_qty: Decimal, qty: Decimal) -> Decimal:
    if not qty:
        return _ZERO
    return (px_qty / qty).quantize(_PLACES, rounding=ROUND_HALF_EVEN)


def _split(amount: Decimal, part: Decimal, whole: Decimal) -> tuple[Decimal, Decimal]:
    """``amount`` split as ``part / whole`` (rounded to 1e-8) and the exact rest."""
    share = (amount * part / whole).quantize(_PLACES, rounding=ROUND_HALF_EVEN)
    return share, amount - share


def build_trades(
    fills: Iterable[FillRow],
    *,
    end_ms: int,
    marks: Mapping[str, Decimal] | None = None,
    default_symbol: str = "",
) -> list[Trade]:
    """The round trips of ``fills`` (in time order), by entry time then symbol and side.

    Each fill's :class:`Tag` is its ``strategy`` and ``rule`` (the driver takes them from the
    journal by the order's client id); ``marks`` the final price per symbol (for trades still
    open at ``end_ms``); a fill without a symbol is ``default_symbol``'s."""
    marks = marks or {}
    open_: dict[tuple[str, str], _Open] = {}
    done: list[_Open] = []
    for fill in fills:
        if fill.qty <= 0:
            continue
        symbol = fill.symbol or default_symbol
        pos_side = fill.pos_side or "BOTH"
        tag = Tag(fill.strategy, fill.rule)
        buy = fill.side.lower() == "buy"
        if pos_side == "LONG":
            direction = 1
            adds = buy
        elif pos_side == "SHORT":
            direction = -1
            adds = not buy
        else:
            direction = 1 if buy else -1
            adds = True  # unless a position in the other direction is open (below)
        key = (symbol, pos_side)
        value = fill.value if fill.value is not None else fill.px * fill.qty
        qty, fee = fill.qty, fill.fee
        current = open_.get(key)
        if current is not None and pos_side == "BOTH":
            adds = current.direction == direction
        if current is not None and not adds:
            closing = min(qty, current.position)
            if closing < qty:
                close_value, value = _split(value, closing, qty)
                close_fee, fee = _split(fee, closing, qty)
            else:
                close_value, close_fee = value, fee
            current.reduce(tag, fill, closing, close_value, close_fee)
            if not current.position:
                done.append(open_.pop(key))
            qty -= closing
            if not qty:
                continue
            current = None
            if pos_side != "BOTH":  # a hedge leg cannot go through zero; the rest is dropped
                continue
        if current is None:
            current = _Open(symbol, pos_side, direction, tag, fill.time_ms)
            open_[key] = current
        current.add(tag, fill, qty, value, fee)
    done.extend(open_.values())
    done.sort(key=lambda t: (t.entry_ms, t.symbol, t.pos_side))
    return [t.trade(i, end_ms, marks.get(t.symbol)) for i, t in enumerate(done, 1)]


@dataclass(frozen=True, slots=True)
class RuleRow:
    """Trades summed by one key: how many, how many won (net > 0), their net PnL and fees."""

    key: str
    trades: int
    wins: int
    net: Decimal
    fees: Decimal

    @property
    def win_rate(self) -> Decimal:
        if not self.trades:
            return _ZERO
        return (Decimal(self.wins) / self.trades).quantize(_PLACES, rounding=ROUND_HALF_EVEN)


def attribute(trades: Sequence[Trade], by: str) -> list[RuleRow]:
    """Trades summed per ``by``: ``entry`` (the rule that opened them), ``exit`` (the rule that
    closed them; ``(open)`` for those still open) or ``strategy`` (the strategy that opened
    them); best net first, then by key. Every table adds up to Σ net of ``trades``."""
    sums: dict[str, tuple[int, int, Decimal, Decimal]] = {}
    for t in trades:
        if by == "entry":
            key = t.entry.label()
        elif by == "exit":
            key = t.exit.label() if t.status == "closed" else "(open)"
        else:
            key = t.entry.strategy or "(unknown)"
        n, wins, net, fees = sums.get(key, (0, 0, _ZERO, _ZERO))
        sums[key] = (n + 1, wins + (t.net > 0), net + t.net, fees + t.fees)
    rows = [RuleRow(k, *v) for k, v in sums.items()]
    rows.sort(key=lambda r: (-r.net, r.key))
    return rows
