"""The account snapshot: everything the rules may read in one cycle.

A snapshot is a value the rule engine and the pipeline only read. Tests build one by hand from
values (``Snapshot(now_ms, balance, instruments, tickers, ...)``). The engine builds it with
:meth:`Snapshot.deferred` over a :class:`Reads` (its reader, for one cycle): one typed read per
:class:`Part`, made **the first time something asks for that part** and kept for the rest of
the cycle — every endpoint is read at most once per cycle however many strategies look at it,
and not at all when nothing does (a condition that stops at ``position.qty == 0`` reads the
positions and nothing else; a quiet cycle never reads the price band the planner would check
orders against).

What is read when is explicit: each part is declared once, a typed attribute that reads
through its own typed method of :class:`Reads` (no lookup by name), and the engine asks for
the parts it must have before it acts with :meth:`Snapshot.prefetch` (the planner's parts,
before anything is sent).

A read that fails raises :class:`~botkit.errors.ReadFailed` (the one read-failure error; its
``part`` says which read) from the access or the prefetch; the engine ends the cycle as a
failed read, as it would have had the read been made up front. A failed read is not kept: the
next access tries again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from enum import StrEnum
from typing import Any, Generic, NoReturn, Protocol, TypeVar, overload

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

__all__ = ["Candles", "Part", "Reads", "Snapshot"]

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
    CANDLES = "candles"


class Candles(Protocol):
    """The closed candles and indicator series of one cycle (:mod:`botkit.runner.candles`):
    ``series(spec)`` is a bound :class:`~botkit.rules.series.Spec`'s
    :class:`~botkit.rules.series.Series`, its (symbol, interval) read up to the last candle
    closed at the snapshot's time (never the one in progress)."""

    def series(self, spec: Any) -> Any: ...


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
    def candles(self) -> Candles: ...


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not read>"


_UNSET: Any = _Unset()


class _NoReads:
    """The reads of a snapshot built from values: there is nothing left to read."""

    def __getattr__(self, name: str) -> NoReturn:
        raise AssertionError(f"a snapshot built from values has every part ({name})")


class _Lazy(Generic[T]):
    """One part of a :class:`Snapshot`, declared once: a typed attribute read through the
    snapshot's :class:`Reads` on first access, then kept; a read that raises is not kept, so
    the next access tries again."""

    __slots__ = ("_at", "_read", "part")

    def __init__(self, part: Part, read: Callable[[Reads], T]) -> None:
        self.part = part
        self._read = read
        self._at = len(_LAZY)  # its place among the snapshot's values: Part order
        _LAZY[part] = self

    @overload
    def __get__(self, snapshot: None, owner: type[Snapshot]) -> _Lazy[T]: ...
    @overload
    def __get__(self, snapshot: Snapshot, owner: type[Snapshot]) -> T: ...
    def __get__(self, snapshot: Snapshot | None, owner: type[Snapshot]) -> T | _Lazy[T]:
        if snapshot is None:
            return self
        values = snapshot._values
        value: T = values[self._at]
        if value is _UNSET:
            value = values[self._at] = self._read(snapshot._reads)
        return value

    def fetched(self, snapshot: Snapshot) -> bool:
        return snapshot._values[self._at] is not _UNSET


_LAZY: dict[Part, _Lazy[Any]] = {}
"""Each part's declaration, in :class:`Part` order (filled as :class:`Snapshot` is made)."""


class Snapshot:
    """The account and market as seen at ``now_ms`` (exchange time, Unix ms)."""

    __slots__ = ("_reads", "_values", "instruments", "now_ms")

    now_ms: int
    instruments: dict[str, Instrument]
    _reads: Reads
    _values: list[Any]
    """The parts' values in :class:`Part` order (``_UNSET`` until read)."""

    balance = _Lazy(Part.BALANCE, lambda reads: reads.balance())
    tickers = _Lazy(Part.TICKERS, lambda reads: reads.tickers())
    positions = _Lazy(Part.POSITIONS, lambda reads: reads.positions())
    open_orders = _Lazy(Part.OPEN_ORDERS, lambda reads: reads.open_orders())
    order_history = _Lazy(Part.ORDER_HISTORY, lambda reads: reads.order_history())
    fills = _Lazy(Part.FILLS, lambda reads: reads.fills())
    position_history = _Lazy(Part.POSITION_HISTORY, lambda reads: reads.position_history())
    limit_prices = _Lazy(Part.LIMIT_PRICES, lambda reads: reads.limit_prices())
    position_mode = _Lazy(Part.POSITION_MODE, lambda reads: reads.position_mode())
    candles = _Lazy(Part.CANDLES, lambda reads: reads.candles())

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
        candles: Candles | None = None,
    ) -> None:
        values = [
            balance,
            tickers,
            [] if positions is None else positions,
            [] if open_orders is None else open_orders,
            [] if order_history is None else order_history,
            [] if fills is None else fills,
            [] if position_history is None else position_history,
            {} if limit_prices is None else limit_prices,
            position_mode,
            _NO_CANDLES if candles is None else candles,
        ]
        self._set(now_ms, instruments, _NO_READS, values)

    @classmethod
    def deferred(cls, now_ms: int, instruments: dict[str, Instrument], reads: Reads) -> Snapshot:
        """A snapshot whose parts are read through ``reads`` on first access (each at most
        once) or when :meth:`prefetch` asks for them."""
        snapshot = cls.__new__(cls)
        snapshot._set(now_ms, instruments, reads, [_UNSET] * len(_LAZY))
        return snapshot

    def _set(
        self, now_ms: int, instruments: dict[str, Instrument], reads: Reads, values: list[Any]
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "now_ms", now_ms)
        setattr_(self, "instruments", instruments)
        setattr_(self, "_reads", reads)
        setattr_(self, "_values", values)

    def prefetch(self, *parts: Part) -> None:
        """Read ``parts`` now, in the order given, those not read yet: the engine's way of
        saying what it needs before it acts. Raises the first
        :class:`~botkit.errors.ReadFailed`."""
        for part in parts:
            _LAZY[part].__get__(self, Snapshot)

    def fetched(self, part: Part) -> bool:
        """Whether ``part`` holds its value already (given, or read this cycle): looking at it
        then reads nothing."""
        return _LAZY[part].fetched(self)

    def _copy(self, values: dict[Part, Any]) -> Snapshot:
        """A copy sharing every part but ``values`` (``_UNSET``: to be read again)."""
        snapshot = Snapshot.__new__(Snapshot)
        mine = list(self._values)
        for part, value in values.items():
            mine[_LAZY[part]._at] = value
        snapshot._set(self.now_ms, self.instruments, self._reads, mine)
        return snapshot

    def with_position_mode(self, mode: PositionMode) -> Snapshot:
        """A copy of this snapshot in position mode ``mode`` (the mode a switch sent this cycle
        put the account in); the other parts are shared."""
        return self._copy({Part.POSITION_MODE: mode})

    def without_orders(self, cl_ord_ids: Collection[str]) -> Snapshot:
        """A copy of this snapshot whose open orders leave out ``cl_ord_ids`` (orders this cycle
        cancelled, so the guards no longer count them); the other parts are shared."""
        kept = [o for o in self.open_orders if o.clOrdId not in cl_ord_ids]
        return self._copy({Part.OPEN_ORDERS: kept})

    def reread(self, *parts: Part) -> Snapshot:
        """A copy of this snapshot that reads ``parts`` again on their next access (something
        this cycle sent may have changed them); the other parts are shared."""
        return self._copy(dict.fromkeys(parts, _UNSET))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"a Snapshot is read-only ({name})")

    def __repr__(self) -> str:
        read = ", ".join(part.value for part, lazy in _LAZY.items() if lazy.fetched(self))
        return f"Snapshot(now_ms={self.now_ms}, read: {read or 'nothing yet'})"


class _NoCandles:
    """The candles of a snapshot built from values without any."""

    def series(self, spec: Any) -> NoReturn:
        raise LookupError(f"no candles in this snapshot ({spec.text()})")


_NO_READS: Any = _NoReads()
_NO_CANDLES: Any = _NoCandles()
assert list(_LAZY) == list(Part), "Snapshot declares each Part once, in Part order"
