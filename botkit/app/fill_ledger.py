"""Each strategy's share of each open position, from the exchange's fills, kept between reads.

``/api/positions`` attributes every open position (per symbol and leg) to the strategies whose
orders built it: the position's fills since it opened, replayed by average cost
(:class:`botkit.runner.pnl.Book`). The fills endpoint answers at most 100 a page, newest first
(``direct=NEXT`` walks back from the id ``from``), so :class:`FillLedger` keeps what it learnt:

* **The first read** (and a start-over, below) takes the exchange's positions and walks back
  from the newest fill, page by page, undoing each fill from its position until every open
  position is back at zero — the fill that opened it (of a fill that went through zero, only
  the part beyond zero) — or the history ends (the exchange looks back 90 days by default), or
  :data:`MAX_HISTORY_FILLS` fills were read. At most ``pages_per_read`` pages an account read:
  a longer walk goes on at the next reads, and the answer says how far it got meanwhile.
* **Every later read** asks only for the fills newer than the newest it holds (one page, with
  nothing new most of the time) and applies them in order: a position that reaches zero ends
  its life (its books are dropped), the next fill on it opens a new one.
* **A check** at each read: after the positions, a one-fill page says whether a fill landed
  meanwhile; when none did, the fills must add up to the exchange's positions. When they do
  not (a fill missed, a position changed without a fill, more new fills than a read may page
  through), the ledger starts over with a walk back, and says so in the log.

Memory: the books of the open positions and, during a walk back, the fills of those positions
(at most :data:`MAX_HISTORY_FILLS`, a few numbers each). Money stays ``Decimal``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal

from loguru import logger

from botkit.errors import MalformedResponse
from botkit.exchange.models import Fill, OrderSide, Position, PosSide
from botkit.exchange.queries import FillQuery
from botkit.rules.ids import parse_client_order_id
from botkit.runner.pnl import Book
from botkit.timeparse import format_time

__all__ = [
    "MAX_HISTORY_FILLS",
    "PAGE",
    "PAGES_PER_READ",
    "FillLedger",
    "Key",
    "Share",
    "signed_positions",
]

PAGE = 100
"""Fills a page: the exchange's maximum."""
PAGES_PER_READ = 10
"""Pages one account read may ask for while walking back (the newest fills come first)."""
MAX_HISTORY_FILLS = 20_000
"""The most fills a walk back reads: a position older than that is counted from there."""
MAX_CHECK_RESTARTS = 3
"""Starts over in a row after which the check stops (a wrong check must not loop)."""

ZERO = Decimal(0)
Key = tuple[str, PosSide]
"""(symbol, leg): one position at the exchange."""
Fetch = Callable[[FillQuery], Sequence[Fill]]


@dataclass(frozen=True, slots=True)
class _Exec:
    """A fill as the ledger keeps it."""

    id: int
    key: Key
    tag: str
    """The strategy tag of its client order id ("" for an order botkit did not make)."""
    side: OrderSide
    qty: Decimal
    px: Decimal | None
    fee: Decimal
    ms: int

    @property
    def signed(self) -> Decimal:
        return self.qty if self.side is OrderSide.BUY else -self.qty

    def part(self, qty: Decimal) -> _Exec:
        """The share ``qty`` of this fill, its fee in proportion."""
        fee = self.fee * qty / self.qty
        if self.fee:
            fee = fee.quantize(Decimal(1).scaleb(_exponent(self.fee)), ROUND_HALF_EVEN)
        return replace(self, qty=qty, fee=fee)


def _exponent(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return exponent if isinstance(exponent, int) else 0


def _exec(fill: Fill) -> _Exec:
    try:
        ident = int(fill.id)
    except ValueError:
        raise MalformedResponse(
            f"a fill's id is not a number ({fill.id[:24]!r}): its history cannot be paged"
        ) from None
    parsed = parse_client_order_id(fill.clOrdId) if fill.clOrdId else None
    return _Exec(
        ident,
        (fill.symbol, fill.posSide or PosSide.BOTH),
        parsed.strategy_tag if parsed is not None else "",
        fill.side,
        fill.qty or ZERO,
        fill.px,
        fill.feeAmt or ZERO,
        fill.cTime or 0,
    )


def signed_positions(positions: Iterable[Position]) -> dict[Key, Decimal]:
    """The open positions as signed contracts by (symbol, leg): a short is negative (one-way
    mode sends it signed; hedge mode sends each leg's size)."""
    out: dict[Key, Decimal] = {}
    for p in positions:
        if not p.qty:
            continue
        if p.posSide is PosSide.LONG:
            qty = abs(p.qty)
        elif p.posSide is PosSide.SHORT:
            qty = -abs(p.qty)
        else:
            qty = p.qty
        out[(p.symbol, p.posSide)] = qty
    return out


@dataclass
class _Life:
    """One open position since it opened: each strategy's book (by strategy tag)."""

    ct_val: Callable[[str], Decimal]
    since_ms: int | None
    complete: bool
    why: str = ""
    """What the figures miss when not complete."""
    books: dict[str, Book] = field(default_factory=dict)
    fills: int = 0

    def apply(self, e: _Exec) -> None:
        self.fills += 1
        if self.since_ms is None:
            self.since_ms = e.ms
        if not e.tag or e.px is None:
            return
        book = self.books.get(e.tag)
        if book is None:
            symbol, leg = e.key
            book = self.books[e.tag] = Book(symbol, leg, self.ct_val(symbol))
        book.apply(e.side, e.qty, e.px, e.fee)


@dataclass(frozen=True, slots=True)
class Share:
    """What ``/api/positions`` shows of one open position: each strategy's book, and what the
    figures cover."""

    symbol: str
    leg: PosSide
    since_ms: int | None
    """The time of the first fill counted (``None``: none read yet)."""
    complete: bool
    """The fills counted reach back to the fill that opened the position."""
    why: str
    """When not complete, why (the history ends, or the most serve reads)."""
    fills: int
    books: tuple[tuple[str, Book], ...]
    """(strategy tag, book), copies."""


@dataclass
class _Walk:
    """A walk back from the positions at ``anchor`` (their newest fill: the ledger's cursor
    when the walk began)."""

    anchor: dict[Key, Decimal]
    remaining: dict[Key, Decimal]
    """The part of each position the fills read so far do not explain yet."""
    kept: dict[Key, list[_Exec]]
    """The fills of each open position, newest first."""
    from_id: int | None = None
    """The oldest fill read: the next page starts below it."""
    read: int = 0
    oldest_ms: int | None = None
    later: list[tuple[_Exec, Decimal]] = field(default_factory=list)
    """Fills newer than the anchor, oldest first, with the position before each."""


class FillLedger:
    """Each strategy's share of each open position, kept up to date from the exchange's fills
    (see the module docstring). Not thread-safe: its caller holds a lock."""

    def __init__(
        self,
        *,
        pages_per_read: int = PAGES_PER_READ,
        max_history_fills: int = MAX_HISTORY_FILLS,
    ) -> None:
        self.pages_per_read = pages_per_read
        self.max_history_fills = max_history_fills
        self._ct_vals: dict[str, Decimal] = {}
        self.pages_read = 0
        """Every page asked for (for tests and the log)."""
        self.restarts = 0
        """Walks back after the first."""
        self._left = 0
        self._cursor: int | None = None
        self._qty: dict[Key, Decimal] = {}
        self._lives: dict[Key, _Life] = {}
        self._walk: _Walk | None = None
        self._failed_checks = 0

    # --- reading ------------------------------------------------------------------------

    def refresh(
        self,
        fetch: Fetch,
        read_positions: Callable[[], list[Position]],
        ct_vals: dict[str, Decimal],
    ) -> list[Position]:
        """One account read: the new fills, the positions (returned) and the check, and the
        walk back goes on where it is under way. ``ct_vals``: contract values by symbol."""
        self._ct_vals = ct_vals
        self._left = self.pages_per_read
        if self._cursor is None:
            positions = self._anchor(fetch, read_positions)
        else:
            fresh = self._newer(fetch)
            if fresh is None:
                positions = self._start_over(
                    fetch, read_positions, "more new fills than one read pages through"
                )
            else:
                for e in fresh:
                    self._take(e)
                positions = read_positions()
                problem = self._check(fetch, positions)
                if problem:
                    positions = self._start_over(fetch, read_positions, problem)
        self._left = self.pages_per_read  # the walk back's own pages
        while self._walk is not None and self._left > 0:
            self._walk_page(self._page(fetch, self._walk.from_id, PAGE))
        return positions

    def _page(self, fetch: Fetch, from_id: int | None, limit: int) -> list[_Exec]:
        self._left -= 1
        self.pages_read += 1
        page = fetch(
            FillQuery(limit=limit, from_id=None if from_id is None else str(from_id), direct="NEXT")
        )
        return [_exec(fill) for fill in page]

    def _anchor(self, fetch: Fetch, read_positions: Callable[[], list[Position]]) -> list[Position]:
        """The positions and the newest fill they include: a fill landing between the two reads
        makes it try again (three times; then the check at the next read catches it)."""
        for _ in range(3):
            first = self._page(fetch, None, PAGE)
            positions = read_positions()
            again = self._page(fetch, None, 1)
            newest = first[0].id if first else 0
            if (again[0].id if again else 0) == newest:
                break
        else:
            logger.info("positions by strategy: fills keep landing; the next read checks")
        held = signed_positions(positions)
        self._cursor = newest
        self._qty = dict(held)
        self._lives = {}
        self._walk = _Walk(held, dict(held), {k: [] for k in held})
        self._walk_page(first)
        return positions

    def _start_over(
        self, fetch: Fetch, read_positions: Callable[[], list[Position]], why: str
    ) -> list[Position]:
        self.restarts += 1
        logger.warning("positions by strategy: {}; reading the fill history again", why)
        self._cursor = None
        return self._anchor(fetch, read_positions)

    def _newer(self, fetch: Fetch) -> list[_Exec] | None:
        """The fills newer than the cursor, oldest first; None when they take more pages than
        this read has left (or the exchange pages wrongly)."""
        assert self._cursor is not None
        out: list[_Exec] = []
        from_id: int | None = None
        while self._left > 0:
            page = self._page(fetch, from_id, PAGE)
            for e in page:
                if e.id <= self._cursor:
                    return out[::-1]
                out.append(e)
            if len(page) < PAGE:
                return out[::-1]
            if from_id is not None and page[-1].id >= from_id:
                return None
            from_id = page[-1].id
        return None

    def _check(self, fetch: Fetch, positions: list[Position]) -> str:
        """Why the fills do not add up to ``positions`` ("" when they do, or when a fill landed
        after the positions were read and the check waits for the next read)."""
        if self._failed_checks >= MAX_CHECK_RESTARTS:
            return ""
        again = self._page(fetch, None, 1)
        if (again[0].id if again else 0) != self._cursor:
            return ""
        held = signed_positions(positions)
        if held == self._qty:
            self._failed_checks = 0
            return ""
        self._failed_checks += 1
        if self._failed_checks >= MAX_CHECK_RESTARTS:
            logger.warning(
                "positions by strategy: the fills still do not add up to the positions after"
                " {} readings; no more checks until serve restarts",
                MAX_CHECK_RESTARTS,
            )
        differ = sorted(k for k in {*held, *self._qty} if held.get(k) != self._qty.get(k))
        symbol, leg = differ[0]
        return (
            f"the fills add up to {self._qty.get((symbol, leg), ZERO)} {symbol} {leg.value}, the"
            f" exchange holds {held.get((symbol, leg), ZERO)}"
        )

    # --- applying -------------------------------------------------------------------------

    def _ct_val(self, symbol: str) -> Decimal:
        return self._ct_vals.get(symbol, Decimal(1))

    def _take(self, e: _Exec) -> None:
        """A fill newer than the cursor."""
        assert self._cursor is not None
        self._cursor = max(self._cursor, e.id)
        if not e.qty:
            return
        before = self._qty.get(e.key, ZERO)
        after = before + e.signed
        if after:
            self._qty[e.key] = after
        else:
            self._qty.pop(e.key, None)
        if self._walk is not None:
            self._walk.later.append((e, before))
        else:
            self._advance(e, before)

    def _advance(self, e: _Exec, before: Decimal) -> None:
        """Apply ``e`` to its position's life, ``before`` the position it found."""
        after = before + e.signed
        life = self._lives.get(e.key)
        if before == 0 or life is None:
            complete = before == 0
            why = "" if complete else "a position the fills did not open"
            life = self._lives[e.key] = _Life(self._ct_val, e.ms, complete, why)
            life.apply(e)
        elif after == 0:
            del self._lives[e.key]
        elif (after > 0) != (before > 0):  # through zero: the rest opens a new position
            life = self._lives[e.key] = _Life(self._ct_val, e.ms, True)
            life.apply(e.part(abs(after)))
        else:
            life.apply(e)

    def _walk_page(self, page: list[_Exec]) -> None:
        walk = self._walk
        assert walk is not None
        fresh = [e for e in page if walk.from_id is None or e.id < walk.from_id]
        for e in fresh:  # newest first
            walk.read += 1
            if e.ms:
                walk.oldest_ms = e.ms
            rem = walk.remaining.get(e.key)
            if rem is None or not e.qty:
                continue
            before = rem - e.signed  # the position before this fill
            if before == 0 or (before > 0) != (rem > 0):  # the fill that opened it
                walk.kept[e.key].append(e if before == 0 else e.part(abs(rem)))
                del walk.remaining[e.key]
            else:
                walk.kept[e.key].append(e)
                walk.remaining[e.key] = before
        if fresh:
            walk.from_id = fresh[-1].id
        if not walk.remaining:
            self._finish("")
        elif len(page) < PAGE or not fresh:
            reach = (
                f"reaches back to {_when(walk.oldest_ms)} only"
                if walk.oldest_ms is not None
                else "holds none of its fills"
            )
            self._finish(
                f"the exchange's fill history (by default its last 90 days) {reach}, and the"
                " position opened before"
            )
        elif walk.read >= self.max_history_fills:
            self._finish(
                f"serve reads at most the newest {self.max_history_fills:,} fills (back to"
                f" {_when(walk.oldest_ms)}), and the position opened before"
            )

    def _finish(self, why: str) -> None:
        walk = self._walk
        assert walk is not None
        self._walk = None
        for key in walk.anchor:
            kept = walk.kept[key][::-1]
            complete = key not in walk.remaining
            life = self._lives[key] = _Life(
                self._ct_val, kept[0].ms if kept else None, complete, "" if complete else why
            )
            for e in kept:
                life.apply(e)
        for e, before in walk.later:
            self._advance(e, before)

    # --- the answer ------------------------------------------------------------------------

    def shares(self) -> list[Share]:
        """Each open position's share by strategy, in (symbol, leg) order (copies)."""
        return [
            Share(
                symbol,
                leg,
                life.since_ms,
                life.complete,
                life.why,
                life.fills,
                tuple((tag, replace(book)) for tag, book in sorted(life.books.items())),
            )
            for (symbol, leg), life in sorted(self._lives.items(), key=lambda kv: kv[0])
        ]

    def reading(self) -> int | None:
        """While a walk back is under way, how many fills it read so far; else None."""
        return None if self._walk is None else self._walk.read


def _when(ms: int | None) -> str:
    return "?" if ms is None else format_time(ms)
