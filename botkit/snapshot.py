"""The account snapshot: everything the rules may read in one cycle.

A snapshot is a value the rule engine and the pipeline only read. Tests build one by hand from
values (``Snapshot(now_ms, balance, instruments, tickers, ...)``). The engine builds it with
:meth:`Snapshot.deferred` over a :class:`Reads` (its reader, for one cycle): one typed read per
:class:`Part`, made **the first time something asks for that part** and kept for the rest of
the cycle — every endpoint is read at most once per cycle however many strategies look at it,
and not at all when nothing does (a condition that stops at ``position.qty == 0`` reads the
positions and nothing else; a quiet cycle never reads the price band the planner would check
orders against).

What is read when is explicit: each part is a typed attribute backed by its own
:class:`Lazy` cell (no lookup by name), and the engine asks for the parts it must have before
it acts with :meth:`Snapshot.prefetch` (the planner's parts, before anything is sent).

A read that fails raises :class:`~botkit.errors.ReadFailed` (the one read-failure error; its
``part`` says which read) from the access or the prefetch; the engine ends the cycle as a
failed read, as it would have had the read been made up front. A failed read is not kept: the
next access tries again.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Generic, NoReturn, Protocol, TypeVar

from botkit.exchange.models import (
    Balance,
    Fill,
    Instrument,
    LimitPrice,
    OpenOrder,
    Order,
    Position,
    PositionHistory,
    PositionMode,
    Ticker,
)

__all__ = ["Lazy", "Part", "Reads", "Snapshot"]

T = TypeVar("T")


class Part(StrEnum):
    """The parts of a snapshot read from the exchange each cycle (everything but ``now_ms`` and
    the instruments, which the engine caches across cycles)."""

    BALANCE = "balance"
    TICKERS = "tickers"
    POSITIONS = "positions"
    OPEN_ORDERS = "open_orders"
    ORDER_HISTORY = "order_history"
    FILLS = "fills"
    POSITION_HISTORY = "position_history"
    LIMIT_PRICES = "limit_prices"
    POSITION_MODE = "position_mode"


class Reads(Protocol):
    """Where a deferred snapshot's parts come from (the engine's reader, for one cycle): one
    typed read per :class:`Part`, each raising :class:`~botkit.errors.ReadFailed` when it
    cannot be made."""

    def balance(self) -> Balance: ...
    def tickers(self) -> dict[str, Ticker]: ...
    def positions(self) -> list[Position]: ...
    def open_orders(self) -> list[OpenOrder]: ...
    def order_history(self) -> list[Order]: ...
    def fills(self) -> list[Fill]: ...
    def position_history(self) -> list[PositionHistory]: ...
    def limit_prices(self) -> dict[str, LimitPrice]: ...
    def position_mode(self) -> PositionMode: ...


class _Unset:
    __slots__ = ()


_UNSET: Any = _Unset()


class Lazy(Generic[T]):
    """One part of a snapshot: its value, or the read that makes it on the first :meth:`get`
    (then kept; a read that raises is not kept)."""

    __slots__ = ("_read", "_value")

    def __init__(self, read: Callable[[], T] | None = None, value: T = _UNSET) -> None:
        self._read = read
        self._value: T = value

    @classmethod
    def of(cls, value: T) -> Lazy[T]:
        """A part that holds ``value`` already."""
        return cls(None, value)

    def get(self) -> T:
        value = self._value
        if value is _UNSET:
            read = self._read
            assert read is not None  # a cell is made with a value or a read
            value = self._value = read()
        return value

    @property
    def fetched(self) -> bool:
        """Whether the value is here (given, or read): :meth:`get` then reads nothing."""
        return self._value is not _UNSET

    def again(self) -> Lazy[T]:
        """A fresh cell over the same read (a given value is kept: there is nothing to read)."""
        return self if self._read is None else Lazy(self._read)


class Snapshot:
    """The account and market as seen at ``now_ms`` (exchange time, Unix ms)."""

    __slots__ = (
        "_balance",
        "_fills",
        "_limit_prices",
        "_open_orders",
        "_order_history",
        "_position_history",
        "_position_mode",
        "_positions",
        "_tickers",
        "instruments",
        "now_ms",
    )

    now_ms: int
    instruments: dict[str, Instrument]
    _balance: Lazy[Balance]
    _tickers: Lazy[dict[str, Ticker]]
    _positions: Lazy[list[Position]]
    _open_orders: Lazy[list[OpenOrder]]
    _order_history: Lazy[list[Order]]
    _fills: Lazy[list[Fill]]
    _position_history: Lazy[list[PositionHistory]]
    _limit_prices: Lazy[dict[str, LimitPrice]]
    _position_mode: Lazy[PositionMode]

    def __init__(
        self,
        now_ms: int,
        balance: Balance,
        instruments: dict[str, Instrument],
        tickers: dict[str, Ticker],
        positions: list[Position] | None = None,
        open_orders: list[OpenOrder] | None = None,
        order_history: list[Order] | None = None,
        fills: list[Fill] | None = None,
        position_history: list[PositionHistory] | None = None,
        limit_prices: dict[str, LimitPrice] | None = None,
        position_mode: PositionMode = PositionMode.ONE_WAY,
    ) -> None:
        given = (
            balance,
            tickers,
            [] if positions is None else positions,
            [] if open_orders is None else open_orders,
            [] if order_history is None else order_history,
            [] if fills is None else fills,
            [] if position_history is None else position_history,
            {} if limit_prices is None else limit_prices,
            position_mode,
        )
        self._set(now_ms, instruments, tuple(Lazy.of(value) for value in given))

    @classmethod
    def deferred(cls, now_ms: int, instruments: dict[str, Instrument], reads: Reads) -> Snapshot:
        """A snapshot whose parts are read through ``reads`` on first access (each at most
        once) or when :meth:`prefetch` asks for them."""
        snapshot = cls.__new__(cls)
        snapshot._set(
            now_ms,
            instruments,
            (
                Lazy(reads.balance),
                Lazy(reads.tickers),
                Lazy(reads.positions),
                Lazy(reads.open_orders),
                Lazy(reads.order_history),
                Lazy(reads.fills),
                Lazy(reads.position_history),
                Lazy(reads.limit_prices),
                Lazy(reads.position_mode),
            ),
        )
        return snapshot

    def _set(
        self, now_ms: int, instruments: dict[str, Instrument], cells: tuple[Lazy[Any], ...]
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "now_ms", now_ms)
        setattr_(self, "instruments", instruments)
        for part, cell in zip(_SLOTS, cells, strict=True):
            setattr_(self, part, cell)

    def _cells(self) -> tuple[Lazy[Any], ...]:
        """The cells in :class:`Part` order."""
        return (
            self._balance,
            self._tickers,
            self._positions,
            self._open_orders,
            self._order_history,
            self._fills,
            self._position_history,
            self._limit_prices,
            self._position_mode,
        )

    def _cell(self, part: Part) -> Lazy[Any]:
        return self._cells()[_INDEX[part]]

    def _with(self, cells: tuple[Lazy[Any], ...]) -> Snapshot:
        snapshot = Snapshot.__new__(Snapshot)
        snapshot._set(self.now_ms, self.instruments, cells)
        return snapshot

    def prefetch(self, *parts: Part) -> None:
        """Read ``parts`` now, in the order given, those not read yet: the engine's way of
        saying what it needs before it acts. Raises the first
        :class:`~botkit.errors.ReadFailed`."""
        for part in parts:
            self._cell(part).get()

    def fetched(self, part: Part) -> bool:
        """Whether ``part`` holds its value already (given, or read this cycle): looking at it
        then reads nothing."""
        return self._cell(part).fetched

    def with_position_mode(self, mode: PositionMode) -> Snapshot:
        """A copy of this snapshot in position mode ``mode`` (the mode a switch sent this cycle
        put the account in); the other parts are shared."""
        cells = list(self._cells())
        cells[_INDEX[Part.POSITION_MODE]] = Lazy.of(mode)
        return self._with(tuple(cells))

    def reread(self, *parts: Part) -> Snapshot:
        """A copy of this snapshot that reads ``parts`` again on their next access (something
        this cycle sent may have changed them); the other parts are shared."""
        again = {_INDEX[p] for p in parts}
        return self._with(
            tuple(c.again() if i in again else c for i, c in enumerate(self._cells()))
        )

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"a Snapshot is read-only ({name})")

    def __repr__(self) -> str:
        read = ", ".join(p.value for p, c in zip(Part, self._cells(), strict=True) if c.fetched)
        return f"Snapshot(now_ms={self.now_ms}, read: {read or 'nothing yet'})"

    @property
    def balance(self) -> Balance:
        return self._balance.get()

    @property
    def tickers(self) -> dict[str, Ticker]:
        return self._tickers.get()

    @property
    def positions(self) -> list[Position]:
        return self._positions.get()

    @property
    def open_orders(self) -> list[OpenOrder]:
        return self._open_orders.get()

    @property
    def order_history(self) -> list[Order]:
        return self._order_history.get()

    @property
    def fills(self) -> list[Fill]:
        return self._fills.get()

    @property
    def position_history(self) -> list[PositionHistory]:
        return self._position_history.get()

    @property
    def limit_prices(self) -> dict[str, LimitPrice]:
        return self._limit_prices.get()

    @property
    def position_mode(self) -> PositionMode:
        return self._position_mode.get()


_INDEX = {part: i for i, part in enumerate(Part)}
"""Each part's place among :meth:`Snapshot._cells` (the order of :class:`Part`)."""
_SLOTS = tuple(f"_{part.value}" for part in Part)
"""The slot of each part's cell, in :class:`Part` order (for :meth:`Snapshot._set`)."""
