"""Per-strategy position and PnL from fills, by average cost (pure, Decimal).

The exchange keeps one position per symbol (per leg in hedge mode); two strategies trading the
same symbol share it. Attributing each fill to the strategy whose client order id it carries and
replaying the fills by average cost gives each strategy its own position, realized PnL and fees.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from botkit.exchange.models import Fill, OrderSide, PosSide

__all__ = ["Book", "attribute"]

ZERO = Decimal(0)


@dataclass
class Book:
    """One strategy's running position on one symbol and leg."""

    symbol: str
    leg: PosSide
    ct_val: Decimal
    qty: Decimal = ZERO
    """Signed contracts: positive long, negative short."""
    avg_px: Decimal = ZERO
    realized: Decimal = ZERO
    fees: Decimal = ZERO
    fills: int = 0
    volume: Decimal = ZERO
    """Traded value (qty × ctVal × px), both sides."""

    def apply(self, side: OrderSide, qty: Decimal, px: Decimal, fee: Decimal) -> None:
        signed = qty if side is OrderSide.BUY else -qty
        self.fills += 1
        self.fees += fee
        self.volume += qty * self.ct_val * px
        if self.qty == 0 or (self.qty > 0) == (signed > 0):  # opening or adding
            total = self.qty + signed
            self.avg_px = (self.avg_px * abs(self.qty) + px * qty) / abs(total)
            self.qty = total
            return
        closing = min(qty, abs(self.qty))
        direction = 1 if self.qty > 0 else -1
        self.realized += (px - self.avg_px) * closing * self.ct_val * direction
        self.qty += signed
        if self.qty == 0:
            self.avg_px = ZERO
        elif (self.qty > 0) != (direction > 0):  # flipped through zero: the rest opens anew
            self.avg_px = px

    def unrealized(self, mark: Decimal | None) -> Decimal:
        if mark is None or self.qty == 0:
            return ZERO
        return (mark - self.avg_px) * self.qty * self.ct_val


def attribute(
    fills: Iterable[Fill],
    owner: Mapping[str, str],
    ct_vals: Mapping[str, Decimal],
) -> dict[tuple[str, str, PosSide], Book]:
    """Books by (strategy, symbol, leg). ``owner`` maps a client order id to its strategy;
    fills of orders no strategy owns are left out. Fills are replayed oldest first."""
    books: dict[tuple[str, str, PosSide], Book] = {}
    ordered = sorted(fills, key=lambda f: (f.cTime or 0, f.id))
    for fill in ordered:
        strategy = owner.get(fill.clOrdId)
        if strategy is None or not fill.qty or fill.px is None:
            continue
        leg = fill.posSide or PosSide.BOTH
        key = (strategy, fill.symbol, leg)
        book = books.get(key)
        if book is None:
            book = books[key] = Book(fill.symbol, leg, ct_vals.get(fill.symbol, Decimal(1)))
        book.apply(fill.side, fill.qty, fill.px, fill.feeAmt or ZERO)
    return books
