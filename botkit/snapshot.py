"""The account snapshot: everything the rules may read in one cycle.

A snapshot is a value the rule engine and the pipeline only read. Tests build one by hand from
values (``Snapshot(now_ms, balance, instruments, tickers, ...)``). The runner builds it with
:meth:`Snapshot.deferred`: each part is then read from the exchange **the first time something
asks for it** and kept for the rest of the cycle — every endpoint is read at most once per cycle
however many strategies look at it, and not at all when nothing does (a condition that stops at
``position.qty == 0`` reads the positions and nothing else; a quiet cycle never reads the price
band the planner would check orders against).

A deferred read that fails raises its :class:`~botkit.errors.ExchangeError` from the access
(the reader has already retried it); the runner ends the cycle as a failed read, as it would
have had the read been made up front.
"""

from __future__ import annotations

from typing import Any, NoReturn, Protocol

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

__all__ = ["PARTS", "PartSource", "Snapshot"]

PARTS = (
    "balance",
    "tickers",
    "positions",
    "open_orders",
    "order_history",
    "fills",
    "position_history",
    "limit_prices",
    "position_mode",
)
"""The parts a snapshot may defer (everything but ``now_ms`` and ``instruments``)."""
_PART_SET = frozenset(PARTS)


class PartSource(Protocol):
    """Where a deferred snapshot's parts come from (the runner's reader, for one cycle)."""

    def read_part(self, name: str) -> Any:
        """Read part ``name`` (one of :data:`PARTS`) now; raise its ``ExchangeError`` if it
        cannot be read."""
        ...


class _NoSource:
    def read_part(self, name: str) -> Any:
        raise KeyError(name)


_NO_SOURCE = _NoSource()


class Snapshot:
    """The account and market as seen at ``now_ms`` (exchange time, Unix ms)."""

    __slots__ = ("_source", "_values", "instruments", "now_ms")

    now_ms: int
    instruments: dict[str, Instrument]
    _values: dict[str, Any]
    _source: PartSource

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
        values: dict[str, Any] = {
            "balance": balance,
            "tickers": tickers,
            "positions": [] if positions is None else positions,
            "open_orders": [] if open_orders is None else open_orders,
            "order_history": [] if order_history is None else order_history,
            "fills": [] if fills is None else fills,
            "position_history": [] if position_history is None else position_history,
            "limit_prices": {} if limit_prices is None else limit_prices,
            "position_mode": position_mode,
        }
        self._init(now_ms, instruments, values, _NO_SOURCE)

    def _init(
        self,
        now_ms: int,
        instruments: dict[str, Instrument],
        values: dict[str, Any],
        source: PartSource,
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "now_ms", now_ms)
        setattr_(self, "instruments", instruments)
        setattr_(self, "_values", values)
        setattr_(self, "_source", source)

    @classmethod
    def deferred(
        cls, now_ms: int, instruments: dict[str, Instrument], source: PartSource, **values: Any
    ) -> Snapshot:
        """A snapshot whose parts are read from ``source`` on first access (each at most once),
        except those given in ``values``."""
        if values and not _PART_SET.issuperset(values):
            raise TypeError(f"Snapshot.deferred: unknown parts {sorted(set(values) - _PART_SET)}")
        snapshot = cls.__new__(cls)
        snapshot._init(now_ms, instruments, values, source)
        return snapshot

    def with_parts(self, **values: Any) -> Snapshot:
        """A copy of this snapshot with ``values`` in place of those parts (e.g. the position
        mode a switch sent this cycle put the account in); the other parts are shared."""
        if not _PART_SET.issuperset(values):
            raise TypeError(f"Snapshot.with_parts: unknown parts {sorted(set(values) - _PART_SET)}")
        snapshot = Snapshot.__new__(Snapshot)
        snapshot._init(self.now_ms, self.instruments, {**self._values, **values}, self._source)
        return snapshot

    def reread(self, *names: str) -> Snapshot:
        """A copy of this snapshot that reads the parts ``names`` again on their next access
        (something this cycle sent may have changed them); the other parts are shared."""
        if not _PART_SET.issuperset(names):
            raise TypeError(f"Snapshot.reread: unknown parts {sorted(set(names) - _PART_SET)}")
        kept = {k: v for k, v in self._values.items() if k not in names}
        snapshot = Snapshot.__new__(Snapshot)
        snapshot._init(self.now_ms, self.instruments, kept, self._source)
        return snapshot

    def _part(self, name: str) -> Any:
        values = self._values
        if name in values:
            return values[name]
        value = self._source.read_part(name)  # raises ExchangeError when the read failed
        values[name] = value
        return value

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"a Snapshot is read-only ({name})")

    def __repr__(self) -> str:
        read = ", ".join(n for n in PARTS if n in self._values)
        return f"Snapshot(now_ms={self.now_ms}, read: {read or 'nothing yet'})"

    @property
    def balance(self) -> Balance:
        value: Balance = self._part("balance")
        return value

    @property
    def tickers(self) -> dict[str, Ticker]:
        value: dict[str, Ticker] = self._part("tickers")
        return value

    @property
    def positions(self) -> list[Position]:
        value: list[Position] = self._part("positions")
        return value

    @property
    def open_orders(self) -> list[OpenOrder]:
        value: list[OpenOrder] = self._part("open_orders")
        return value

    @property
    def order_history(self) -> list[Order]:
        value: list[Order] = self._part("order_history")
        return value

    @property
    def fills(self) -> list[Fill]:
        value: list[Fill] = self._part("fills")
        return value

    @property
    def position_history(self) -> list[PositionHistory]:
        value: list[PositionHistory] = self._part("position_history")
        return value

    @property
    def limit_prices(self) -> dict[str, LimitPrice]:
        value: dict[str, LimitPrice] = self._part("limit_prices")
        return value

    @property
    def position_mode(self) -> PositionMode:
        value: PositionMode = self._part("position_mode")
        return value
