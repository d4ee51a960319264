"""Compact columns of candles and samples: numpy arrays instead of one object per value.

A year of minute candles is half a million bars; as :class:`~botkit.backtest.bars.Bar` tuples
of ``Decimal`` it took about 400 MB. Here a series keeps its open times as one ``int64`` array
and each price column as small integer codes into one shared table of the distinct ``Decimal``
values (a year of a 0.1-tick market has some 400,000 distinct prices among its 2.1 million),
or, past two million distinct values, as exact fixed-point keys (coefficient and places) turned
back into ``Decimal`` a chunk at a time. Either way every value comes back as the very
``Decimal`` the file spelled (same coefficient, same exponent): results stay identical.

:class:`BarColumns` is a read-only ``Sequence[Bar]``: indexing gives a ``Bar``, slicing a view,
iterating builds the bars a chunk at a time (4,096), so a replay never holds more than that.
:class:`EquityCurve` keeps the equity samples of a replay the same way.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from decimal import Context, Decimal
from itertools import repeat
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from botkit.backtest.bars import Bar
from botkit.backtest.result import EquityPoint

__all__ = [
    "CHUNK",
    "BarColumns",
    "BarsAtHand",
    "DecimalColumn",
    "EquityCurve",
    "PathReach",
    "decimals_from_keys",
    "equity_columns",
    "share_keys",
]

CHUNK = 4096
"""Bars (or samples) built at a time when iterating."""

PLACES_BITS = 5
"""A fixed-point key is ``coefficient << 5 | places``: places 0-31, coefficients below 2**58."""

MAX_KEY_DIGITS = 17
"""Digits a key's coefficient may have (10**17 < 2**58)."""

MAX_TABLE = 1 << 21
"""A shared table holds at most this many distinct values (some 220 MB of ``Decimal``); more,
and the keys are kept and turned into ``Decimal`` a chunk at a time."""

IntArray = npt.NDArray[np.int64]
_new_bar = tuple.__new__


def _key_decimal(key: int) -> Decimal:
    # the string constructor is exact whatever the context: 600000E-1 is Decimal('60000.0')
    return Decimal(f"{key >> PLACES_BITS}E-{key & 31}")


def decimals_from_keys(keys: Sequence[int]) -> list[Decimal]:
    """The ``Decimal`` of each fixed-point key."""
    return list(map(_key_decimal, keys))


class DecimalColumn(Sequence[Decimal]):
    """One column of ``Decimal`` values, stored as codes into a shared table, as fixed-point
    keys, or (values that have no key, e.g. from JSON) as the objects themselves."""

    __slots__ = ("_codes", "_floats", "_keys", "_objects", "_table")

    def __init__(
        self,
        *,
        codes: npt.NDArray[np.int32] | None = None,
        table: list[Decimal] | None = None,
        keys: IntArray | None = None,
        objects: Sequence[Decimal] | None = None,
        floats: npt.NDArray[np.float64] | None = None,
    ) -> None:
        self._codes = codes
        self._table = table
        self._keys = keys
        self._objects = objects
        self._floats = floats
        """``float`` of each value of the table (shared with the table), when known."""

    def __len__(self) -> int:
        if self._codes is not None:
            return len(self._codes)
        if self._keys is not None:
            return len(self._keys)
        assert self._objects is not None
        return len(self._objects)

    @overload
    def __getitem__(self, index: int) -> Decimal: ...
    @overload
    def __getitem__(self, index: slice) -> DecimalColumn: ...
    def __getitem__(self, index: int | slice) -> Decimal | DecimalColumn:
        if isinstance(index, slice):
            if self._codes is not None:
                return DecimalColumn(
                    codes=self._codes[index], table=self._table, floats=self._floats
                )
            if self._keys is not None:
                return DecimalColumn(keys=self._keys[index])
            assert self._objects is not None
            return DecimalColumn(objects=self._objects[index])
        if self._codes is not None:
            assert self._table is not None
            return self._table[int(self._codes[index])]
        if self._keys is not None:
            return _key_decimal(int(self._keys[index]))
        assert self._objects is not None
        return self._objects[index]

    def take(self, start: int, stop: int) -> list[Decimal]:
        """The values ``[start, stop)`` as a list."""
        if self._codes is not None:
            assert self._table is not None
            return list(map(self._table.__getitem__, self._codes[start:stop].tolist()))
        if self._keys is not None:
            return decimals_from_keys(self._keys[start:stop].tolist())
        assert self._objects is not None
        return list(self._objects[start:stop])

    def lookup(self, start: int, stop: int) -> tuple[Sequence[int], Sequence[Decimal]]:
        """``(index, values)`` such that value ``start + k`` is ``values[index[k]]`` for ``k``
        in ``range(stop - start)``: a shared table's codes as a list (no ``Decimal`` touched
        until one is asked for), else the values themselves."""
        if self._codes is not None:
            assert self._table is not None
            return self._codes[start:stop].tolist(), self._table
        values = self.take(start, stop)
        return range(len(values)), values

    def floats(self, start: int, stop: int) -> npt.NDArray[np.float64]:
        """``float(v)`` of the values ``[start, stop)`` (correctly rounded, so monotone: ``a <=
        b`` gives ``float(a) <= float(b)``); a shared table is converted once."""
        if self._codes is not None:
            assert self._table is not None
            if self._floats is None:
                self._floats = np.fromiter(map(float, self._table), np.float64, len(self._table))
            return self._floats[self._codes[start:stop]]
        if self._keys is not None:
            return key_floats(self._keys[start:stop])
        values = self.take(start, stop)
        return np.fromiter(map(float, values), np.float64, len(values))

    def __iter__(self) -> Iterator[Decimal]:
        for begin in range(0, len(self), CHUNK):
            yield from self.take(begin, begin + CHUNK)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays (the table's or the objects' ``Decimal`` values not counted)."""
        array = self._codes if self._codes is not None else self._keys
        return 0 if array is None else int(array.nbytes)


def _distinct(values: IntArray) -> IntArray:
    """The distinct values, sorted (a sort and a mask: numpy's hashing ``np.unique`` is ten
    times slower on these)."""
    if not len(values):
        return values
    ordered = np.sort(values)
    keep = np.empty(len(ordered), dtype=np.bool_)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def share_keys(columns: Sequence[IntArray]) -> list[DecimalColumn]:
    """Columns of fixed-point keys as :class:`DecimalColumn` values sharing one table of their
    distinct values (at most :data:`MAX_TABLE` of them), else keeping the keys."""
    total = sum(len(c) for c in columns)
    if not total:
        return [DecimalColumn(keys=c) for c in columns]
    encoded = _encode(columns)
    if encoded is None:
        return [DecimalColumn(keys=c) for c in columns]
    parts, codes = encoded
    table: list[Decimal] = []
    for places, coefficients in parts:
        table.extend(_place_decimals(coefficients.tolist(), places))
    floats = key_floats(np.concatenate([(c << PLACES_BITS) | p for p, c in parts]))
    return [DecimalColumn(codes=c, table=table, floats=floats) for c in codes]


_EXACT = Context(prec=MAX_KEY_DIGITS + 1)
"""Wide enough for any key's coefficient: scaling by a power of ten never rounds."""


def _place_decimals(coefficients: list[int], places: int) -> Iterator[Decimal]:
    """The ``Decimal`` of each key of ``coefficients`` and ``places`` (:func:`_key_decimal`'s,
    coefficient and exponent), without writing and parsing a text for each."""
    decimals = map(Decimal, coefficients)  # exact whatever the context
    return map(_EXACT.scaleb, decimals, repeat(-places)) if places else decimals


def _encode(
    columns: Sequence[IntArray],
) -> tuple[list[tuple[int, IntArray]], list[npt.NDArray[np.int32]]] | None:
    """(the distinct keys of ``columns`` as (places, sorted coefficients) in the order of
    their places, each column's codes into them in that order); ``None`` past
    :data:`MAX_TABLE` distinct keys. The keys of one number of places are numbered together:
    by a table over the range of their coefficients when it is narrow (prices on a tick: a
    scatter and a gather, no sort), else by sorting."""
    total = sum(len(c) for c in columns)
    places = [c & 31 for c in columns]
    coefficients = [c >> PLACES_BITS for c in columns]
    present = [np.bincount(p, minlength=32) for p in places]
    codes = [np.empty(len(c), dtype=np.int32) for c in columns]
    parts: list[tuple[int, IntArray]] = []
    offset = 0
    for place in np.flatnonzero(sum(present)).tolist():
        picks: list[npt.NDArray[np.bool_] | None] = []
        values: list[IntArray] = []
        for i, column in enumerate(coefficients):
            held = int(present[i][place])
            if not held:
                continue
            whole = held == len(column)
            pick = None if whole else places[i] == place
            picks.append(pick)
            values.append(column if pick is None else column[pick])
        distinct, numbers = _numbered(values, total)
        taken = iter(numbers)
        for i in range(len(columns)):
            if not present[i][place]:
                continue
            pick = picks.pop(0)
            number = next(taken) + offset
            if pick is None:
                codes[i][:] = number
            else:
                codes[i][pick] = number
        parts.append((place, distinct))
        offset += len(distinct)
        if offset > MAX_TABLE:
            return None
    return parts, codes


def _numbered(
    values: Sequence[IntArray], total: int
) -> tuple[IntArray, list[npt.NDArray[np.integer[Any]]]]:
    """(the distinct values of ``values``, sorted; each array's indexes into them). Over a
    range of at most ``total`` values a table of the range numbers them (5 bytes a value of
    the range); over a wider one, sorting."""
    low = min(int(v.min()) for v in values)
    span = max(int(v.max()) for v in values) - low + 1
    if span > total:
        distinct = _distinct(np.concatenate([_distinct(v) for v in values]))
        return distinct, [np.searchsorted(distinct, v) for v in values]
    seen = np.zeros(span, dtype=np.bool_)
    for v in values:
        seen[v - low] = True
    rank = np.cumsum(seen, dtype=np.int32)
    rank -= 1
    return np.flatnonzero(seen) + low, [rank[v - low] for v in values]


def key_floats(keys: IntArray) -> npt.NDArray[np.float64]:
    """``float(Decimal)`` of each fixed-point key, correctly rounded: a coefficient below
    2**53 and a power of ten up to 10**22 are exact doubles, and IEEE division rounds their
    exact quotient correctly; any other key is converted through its ``Decimal``."""
    coefficients = keys >> PLACES_BITS
    places = keys & 31
    out = coefficients.astype(np.float64) / np.power(10.0, places.astype(np.float64))
    odd = np.flatnonzero((coefficients >= 1 << 53) | (places > 22))
    for i in odd.tolist():
        out[i] = float(_key_decimal(int(keys[i])))
    return out


class BarColumns(Sequence[Bar]):
    """Candles as columns (see the module doc); a read-only ``Sequence[Bar]``."""

    __slots__ = ("_columns", "_times")

    def __init__(self, times: IntArray, columns: Sequence[DecimalColumn]) -> None:
        if len(columns) != 5 or any(len(c) != len(times) for c in columns):
            raise ValueError("a candle needs five columns as long as its times")
        self._times = times
        self._columns = tuple(columns)

    @classmethod
    def from_bars(cls, bars: Sequence[Bar]) -> BarColumns:
        """Columns holding the values of ``bars`` (for the rarer paths that build bars)."""
        times = np.fromiter((b.time_ms for b in bars), dtype=np.int64, count=len(bars))
        columns = [
            DecimalColumn(objects=[b.open for b in bars]),
            DecimalColumn(objects=[b.high for b in bars]),
            DecimalColumn(objects=[b.low for b in bars]),
            DecimalColumn(objects=[b.close for b in bars]),
            DecimalColumn(objects=[b.volume for b in bars]),
        ]
        return cls(times, columns)

    def lows(self, start: int, stop: int) -> list[Decimal]:
        """The lows of bars ``[start, stop)``."""
        return self._columns[2].take(start, stop)

    def highs(self, start: int, stop: int) -> list[Decimal]:
        """The highs of bars ``[start, stop)``."""
        return self._columns[1].take(start, stop)

    def closes(self, start: int, stop: int) -> list[Decimal]:
        """The closes of bars ``[start, stop)``."""
        return self._columns[3].take(start, stop)

    def prices(
        self, start: int, stop: int
    ) -> tuple[list[Decimal], list[Decimal], list[Decimal], list[Decimal]]:
        """The opens, highs, lows and closes of bars ``[start, stop)``."""
        o, h, lo, c = (column.take(start, stop) for column in self._columns[:4])
        return o, h, lo, c

    def tops(self, start: int, stop: int) -> list[Decimal]:
        """The highest of open, high, low and close of each bar ``[start, stop)``: its path's
        highest point."""
        return list(map(max, *self.prices(start, stop)))

    def first_extreme(self, start: int, stop: int, *, high: bool) -> int:
        """The index of the first bar of ``[start, stop)`` with the lowest low (``high``: the
        highest high), the one ``min`` (``max``) over the ``Decimal`` values picks: their
        floats (correctly rounded, so monotone) narrow it to the bars at the extreme float,
        whose ``Decimal`` values decide (distinct values may share a float)."""
        column = self._columns[1 if high else 2]
        floats = column.floats(start, stop)
        tied = np.flatnonzero(floats == (floats.max() if high else floats.min())).tolist()
        if len(tied) == 1:
            return start + tied[0]
        values = [column[start + i] for i in tied]
        return start + tied[values.index(max(values) if high else min(values))]

    def price_columns(
        self, start: int, stop: int
    ) -> tuple[
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
    ]:
        """``float`` of the open, high, low and close of bars ``[start, stop)``."""
        o, h, lo, c = (self._columns[n].floats(start, stop) for n in range(4))
        return o, h, lo, c

    def price_floats(
        self, start: int, stop: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The lowest and the highest of open, high, low and close of each bar ``[start,
        stop)``, as ``float`` (correctly rounded: see :meth:`DecimalColumn.floats`)."""
        o, h, lo, c = self.price_columns(start, stop)
        return np.minimum(np.minimum(o, lo), c), np.maximum(np.maximum(o, h), c)

    @property
    def times(self) -> IntArray:
        """The open times (Unix ms), as a read-only array."""
        view = self._times.view()
        view.flags.writeable = False
        return view

    def __len__(self) -> int:
        return len(self._times)

    @overload
    def __getitem__(self, index: int) -> Bar: ...
    @overload
    def __getitem__(self, index: slice) -> BarColumns: ...
    def __getitem__(self, index: int | slice) -> Bar | BarColumns:
        if isinstance(index, slice):
            return BarColumns(self._times[index], [c[index] for c in self._columns])
        if index < 0:
            index += len(self._times)
        if not 0 <= index < len(self._times):
            raise IndexError("bar index out of range")
        values: list[Any] = [int(self._times[index])]
        values.extend(c[index] for c in self._columns)
        return Bar(*values)

    def __iter__(self) -> Iterator[Bar]:
        for begin in range(0, len(self._times), CHUNK):
            end = begin + CHUNK
            values = [c.take(begin, end) for c in self._columns]
            rows = zip(self._times[begin:end].tolist(), *values, strict=True)
            yield from map(_new_bar, repeat(Bar), rows)

    def __reversed__(self) -> Iterator[Bar]:
        for i in range(len(self._times) - 1, -1, -1):
            yield self[i]

    def at_hand(self, start: int, stop: int) -> BarsAtHand:
        """Bars ``[start, stop)`` built one at a time when asked for (see :class:`BarsAtHand`)."""
        return BarsAtHand(self, start, stop)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays (shared tables and objects not counted)."""
        return int(self._times.nbytes) + sum(c.nbytes for c in self._columns)


class PathReach:
    """Which candles of :class:`BarColumns` have a path that may reach a band: the lowest and
    the highest point of each candle's path as floats (:meth:`BarColumns.price_floats`),
    worked out a block of ``block`` candles at a time, the last two blocks kept. The replay
    checks the band again and again over the same candles ahead (at least 256 of them for
    each stretch passed at once, which lasts about 45 candles in scenario B), so a block's
    floats are worked out once instead of at each check."""

    __slots__ = ("_block", "_columns", "_kept")

    def __init__(self, columns: BarColumns, block: int = CHUNK) -> None:
        self._columns = columns
        self._block = block
        self._kept: tuple[tuple[int, npt.NDArray[np.float64], npt.NDArray[np.float64]], ...] = ()

    def first(self, start: int, end: int, low: float, high: float) -> int:
        """The first candle in ``[start, end)`` whose path's lowest point is at or under
        ``low`` or at or under 0, or whose highest point is at or over ``high`` (or ``end``):
        with the band's bid and ask as floats (correctly rounded, so monotone), the first
        whose path may reach the band (the floats can only stop early)."""
        pos = start
        while pos < end:
            first, lows, highs = self._floats(pos)
            upto = min(end, first + len(lows))
            if upto <= pos:  # past the last candle: nothing there reaches it
                return end
            lows, highs = lows[pos - first : upto - first], highs[pos - first : upto - first]
            reach = (lows <= low) | (highs >= high) | (lows <= 0.0)
            if reach.any():
                return pos + int(np.argmax(reach))
            pos = upto
        return end

    def _floats(self, at: int) -> tuple[int, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The block holding candle ``at``: (its first candle, the lows, the highs). The two
        blocks used last are kept: a check near the end of a block looks into the next one,
        and the one after it starts in the first again."""
        first = at - at % self._block
        kept = self._kept
        for block in kept:
            if block[0] == first:
                return block
        upto = min(first + self._block, len(self._columns))
        block = (first, *self._columns.price_floats(first, upto))
        self._kept = (block, *kept[:1])
        return block


class BarsAtHand(Sequence[Bar]):
    """Bars ``[start, stop)`` of :class:`BarColumns`, each built when it is asked for: the
    replay walks a block of candles but passes most of them at once without a bar, so it
    builds only those it steps through (a block's codes are listed once; a bar is then a
    lookup per column). The same bars as indexing the columns gives."""

    __slots__ = ("_columns", "_len", "_times")

    def __init__(self, columns: BarColumns, start: int, stop: int) -> None:
        stop = max(start, min(stop, len(columns)))
        self._times: list[int] = columns._times[start:stop].tolist()
        self._columns = [c.lookup(start, stop) for c in columns._columns]
        self._len = stop - start

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Bar: ...
    @overload
    def __getitem__(self, index: slice) -> list[Bar]: ...
    def __getitem__(self, index: int | slice) -> Bar | list[Bar]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("bar index out of range")
        (oi, ov), (hi, hv), (li, lv), (ci, cv), (vi, vv) = self._columns
        return _new_bar(
            Bar,
            (self._times[index], ov[oi[index]], hv[hi[index]], lv[li[index]], cv[ci[index]],
             vv[vi[index]]),
        )  # fmt: skip


class EquityCurve(Sequence[EquityPoint]):
    """The equity curve as columns: times in one ``array('q')``, the equity values and the
    exposures in two lists where equal neighbours share one object (a position held for a
    month is one ``Decimal``, not 43,200). About a third of a list of
    :class:`~botkit.backtest.result.EquityPoint` objects; a read-only
    ``Sequence[EquityPoint]`` once sampled (:meth:`append`)."""

    __slots__ = ("equities", "exposures", "times")

    def __init__(self) -> None:
        self.times = array("q")
        self.equities: list[Decimal] = []
        self.exposures: list[Decimal] = []

    def append(self, time_ms: int, equity: Decimal, exposure: Decimal) -> None:
        """Sample the curve at ``time_ms``."""
        self.times.append(time_ms)
        equities = self.equities
        if equities and equities[-1] == equity:  # flat: one object for the whole stretch
            equity = equities[-1]
        equities.append(equity)
        kept = self.exposures
        if kept and kept[-1] == exposure:
            exposure = kept[-1]
        kept.append(exposure)

    def extend(self, times: Iterable[int], equities: Iterable[Decimal], exposure: Decimal) -> None:
        """:meth:`append` of each of ``times`` with its equity and the one ``exposure``, the
        same objects kept as :meth:`append` keeps them."""
        self.times.extend(times)
        kept = self.equities
        last = kept[-1] if kept else None
        add = kept.append
        for equity in equities:
            if last is not None and last == equity:
                equity = last
            add(equity)
            last = equity
        exposures = self.exposures
        count = len(self.times) - len(exposures)
        if exposures and exposures[-1] == exposure:
            exposure = exposures[-1]
        exposures.extend(repeat(exposure, count))

    @classmethod
    def of(cls, points: Iterable[EquityPoint]) -> EquityCurve:
        """A curve holding ``points``."""
        curve = cls()
        for p in points:
            curve.append(p.time_ms, p.equity, p.exposure)
        return curve

    def __len__(self) -> int:
        return len(self.times)

    @overload
    def __getitem__(self, index: int) -> EquityPoint: ...
    @overload
    def __getitem__(self, index: slice) -> EquityCurve: ...
    def __getitem__(self, index: int | slice) -> EquityPoint | EquityCurve:
        if isinstance(index, slice):
            part = EquityCurve()
            part.times = self.times[index]
            part.equities = self.equities[index]
            part.exposures = self.exposures[index]
            return part
        return EquityPoint(self.times[index], self.equities[index], self.exposures[index])

    def __iter__(self) -> Iterator[EquityPoint]:
        return map(EquityPoint, self.times, self.equities, self.exposures)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EquityCurve):
            return (self.times, self.equities, self.exposures) == (
                other.times,
                other.equities,
                other.exposures,
            )
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EquityCurve({len(self)} points)"


def equity_columns(
    equity: Sequence[EquityPoint],
) -> tuple[Sequence[int], Sequence[Decimal], Sequence[Decimal]]:
    """(times, equity values, exposures) of any equity sequence; a curve's own columns."""
    if isinstance(equity, EquityCurve):
        return equity.times, equity.equities, equity.exposures
    return [p.time_ms for p in equity], [p.equity for p in equity], [p.exposure for p in equity]
