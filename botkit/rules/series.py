"""Candle series and indicators: what ``close('15m')``, ``ema(close('1h'), 20)`` mean.

An expression names a series with a call of literal arguments: a candle field of an interval
(and, optionally, of another symbol) — ``close('15m')``, ``hl2('1h', 'ETH_USDT_PERP')`` — or an
indicator over a series — ``ema(close('15m'), 20)``, ``rsi(ema(close('1h'), 5), 14)``. The
compiler turns each into a :class:`Spec` (a value: hashable, the same text gives the same
spec); in a number's place a series means its **last closed** value, ``prev(s, n)`` the value
``n`` closed candles before it, ``crosses_above(a, b)`` whether ``a`` went from at or below
``b`` on the candle before to above it on the last one.

:class:`Series` computes one spec's values **incrementally**: one :meth:`Series.push` per
closed candle, never a recomputation over the window. The indicators are talipp's
(``talipp.indicators``; README, "Design", says why), fed floats: a Decimal price enters as
``float(price)`` and a value leaves as ``Decimal(repr(value))`` — the float's shortest
round-tripping decimal (at most 17 significant digits), with no further rounding. VWAP over
``n`` candles and highest / lowest are plain window sums and extremes kept here (TA-Lib has no
VWAP; talipp's is anchored at the first candle it sees, which would depend on how much history
a start-up read). This module is pure: the candles come from the engine
(:mod:`botkit.runner.candles`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from talipp.indicators import BB, EMA, ROC, RSI, SMA, SMMA, WMA, StdDev

__all__ = [
    "BASE_FIELDS",
    "INDICATORS",
    "INTERVALS",
    "MAX_PERIOD",
    "Bar",
    "Indicator",
    "Series",
    "Spec",
    "WarmingUp",
]

MAX_PERIOD = 1000
"""The longest period an indicator may ask for (its warm-up is read at start-up)."""

INTERVALS: dict[str, int] = {
    "1m": 60_000,
    "5m": 300_000,
    "15m": 900_000,
    "30m": 1_800_000,
    "1h": 3_600_000,
    "2h": 7_200_000,
    "4h": 14_400_000,
    "6h": 21_600_000,
    "12h": 43_200_000,
    "1d": 86_400_000,
}
"""The interval words a series may name, by width in ms (the exchange serves each)."""

Bar = tuple[float, float, float, float, float]
"""One closed candle as the indicators see it: open, high, low, close, volume."""


class WarmingUp(Exception):
    """A series has fewer closed candles than its indicator needs: the rule reports
    ``warming_up`` (never a value computed on partial data)."""


BASE_FIELDS: dict[str, tuple[str, Callable[[Bar], float]]] = {
    "open": ("the open of each closed candle", lambda b: b[0]),
    "high": ("the high of each closed candle", lambda b: b[1]),
    "low": ("the low of each closed candle", lambda b: b[2]),
    "close": ("the close of each closed candle", lambda b: b[3]),
    "volume": ("the traded quantity of each closed candle", lambda b: b[4]),
    "hl2": ("(high + low) / 2 of each closed candle", lambda b: (b[1] + b[2]) / 2),
    "hlc3": ("(high + low + close) / 3", lambda b: (b[1] + b[2] + b[3]) / 3),
    "ohlc4": ("(open + high + low + close) / 4", lambda b: (b[0] + b[1] + b[2] + b[3]) / 4),
}
"""The candle fields a series may be made of: ``close('15m')``, ``hl2('1h', 'ETH_USDT_PERP')``."""


@dataclass(frozen=True, slots=True)
class Spec:
    """One series, as a value: a candle field (``fn`` in :data:`BASE_FIELDS`, no inputs) or an
    indicator over ``inputs`` (``atr``/``vwap`` read the candles themselves); ``args`` are the
    indicator's numbers. ``symbol`` None: the strategy's own."""

    fn: str
    interval: str
    symbol: str | None = None
    args: tuple[Decimal, ...] = ()
    inputs: tuple[Spec, ...] = ()

    @staticmethod
    def back(spec: Spec, ago: int) -> Spec:
        """The need to read ``spec`` ``ago`` closed candles before its last value (``prev``,
        ``crosses_*``): a spec for the warm-up only, never a series of its own."""
        return Spec("prev", spec.interval, spec.symbol, (Decimal(ago),), (spec,))

    def bind(self, symbol: str) -> Spec:
        """This spec with the strategy's ``symbol`` wherever it named none."""
        return Spec(
            self.fn,
            self.interval,
            self.symbol or symbol,
            self.args,
            tuple(i.bind(symbol) for i in self.inputs),
        )

    @property
    def ready_after(self) -> int:
        """Closed candles needed before the first value."""
        if self.fn == "prev":
            return self.inputs[0].ready_after + int(self.args[0])
        own = INDICATORS[self.fn].ready(self.args) if self.fn in INDICATORS else 1
        return own + max((i.ready_after - 1 for i in self.inputs), default=0)

    @property
    def lookback(self) -> int:
        """Closed candles to read at start-up: the first value's, plus settling time for the
        recursive ones (EMA, RSI, ATR, MACD forget their start slowly; TA-Lib calls it the
        unstable period)."""
        own = INDICATORS[self.fn].settle(self.args) if self.fn in INDICATORS else 0
        return (
            self.ready_after
            + own
            + max((i.lookback - i.ready_after for i in self.inputs), default=0)
        )

    def text(self) -> str:
        if self.fn in BASE_FIELDS or self.fn in ("atr", "vwap"):
            parts = [f"'{self.interval}'", *(str(a) for a in self.args)]
        else:
            parts = [*(i.text() for i in self.inputs), *(str(a) for a in self.args)]
        if self.symbol and not self.inputs:
            parts.append(f"'{self.symbol}'")
        return f"{self.fn}({', '.join(parts)})"


# --- the indicators ---------------------------------------------------------------------------


class _Talipp:
    """A talipp indicator fed one value (or one candle) per closed candle."""

    __slots__ = ("_ind", "_pick")

    def __init__(self, ind: Any, pick: Callable[[Any], float | None] | None = None) -> None:
        self._ind = ind
        self._pick = pick

    def push(self, x: Any) -> float | None:
        ind = self._ind
        ind.add(x)
        out = ind[-1]
        if len(ind) > 2 * MAX_PERIOD:
            ind.purge_oldest(MAX_PERIOD)
        if out is None:
            return None
        return self._pick(out) if self._pick is not None else float(out)


class _Atr:
    """TA-Lib's ATR: Wilder's smoothing (talipp's ``SMMA``) of the true range from the second
    candle on — the first has no previous close, so TA-Lib leaves it out, where talipp's
    ``ATR`` would count its high − low — the first value the mean of ``n`` true ranges."""

    __slots__ = ("_close", "_smma")

    def __init__(self, n: int) -> None:
        self._smma = _Talipp(SMMA(n))
        self._close: float | None = None

    def push(self, bar: Bar) -> float | None:
        close, self._close = self._close, bar[3]
        if close is None:
            return None
        return self._smma.push(max(bar[1], close) - min(bar[2], close))


class _Macd:
    """TA-Lib's MACD from talipp's ``EMA``s: the fast EMA starts ``slow − fast`` values late,
    so both averages start on the same candle (talipp's ``MACD`` starts the fast one at once,
    a different seed that takes a hundred candles to fade); line, signal and histogram all
    appear once the signal has its first value (the checker refuses a fast period that is not
    shorter than the slow one)."""

    __slots__ = ("_fast", "_late", "_pick", "_signal", "_slow")

    def __init__(self, args: tuple[Decimal, ...], pick: int) -> None:
        fast, slow = _n(args, 0), _n(args, 1)
        self._fast = _Talipp(EMA(fast))
        self._slow = _Talipp(EMA(slow))
        self._signal = _Talipp(EMA(_n(args, 2)))
        self._late = slow - fast
        """Values the fast EMA has still to skip."""
        self._pick = pick

    def push(self, x: float) -> float | None:
        slow = self._slow.push(x)
        if self._late:
            self._late -= 1
            return None
        fast = self._fast.push(x)
        if slow is None or fast is None:
            return None
        line = fast - slow
        signal = self._signal.push(line)
        if signal is None:
            return None
        return (line, signal, line - signal)[self._pick]


class _Window:
    """highest / lowest / rolling VWAP over the last ``n`` values (kept here: see the module)."""

    __slots__ = ("_how", "_n", "_vals")

    def __init__(self, n: int, how: str) -> None:
        self._n = n
        self._how = how
        self._vals: deque[Any] = deque(maxlen=n)

    def push(self, x: Any) -> float | None:
        vals = self._vals
        vals.append(x)
        if len(vals) < self._n:
            return None
        if self._how == "max":
            return float(max(vals))
        if self._how == "min":
            return float(min(vals))
        volume = sum(b[4] for b in vals)
        if volume == 0:
            return None
        return float(sum((b[1] + b[2] + b[3]) / 3 * b[4] for b in vals) / volume)


def _n(args: tuple[Decimal, ...], i: int = 0) -> int:
    return int(args[i])


@dataclass(frozen=True, slots=True)
class Indicator:
    """One indicator function: its arguments (``series``, ``interval``, ``period``,
    ``number``, ``symbol``; a trailing ``?`` marks an optional one), one line of
    documentation with an example, how many closed candles it needs for a first value
    (``ready``) and how many more to settle (``settle``), and ``make``: its incremental
    state from its numbers. ``candles``: it is fed whole candles, not a series."""

    args: tuple[str, ...]
    doc: str
    ready: Callable[[tuple[Decimal, ...]], int]
    make: Callable[[tuple[Decimal, ...]], Any]
    settle: Callable[[tuple[Decimal, ...]], int] = lambda _a: 0
    candles: bool = False


def _macd(pick: int) -> Callable[[tuple[Decimal, ...]], Any]:
    return lambda a: _Macd(a, pick)


def _bb(pick: Callable[[Any], float | None]) -> Callable[[tuple[Decimal, ...]], Any]:
    return lambda a: _Talipp(BB(_n(a, 0), float(a[1])), pick)


_SERIES_N = ("series", "period")
_MACD_ARGS = ("series", "period", "period", "period")
_BB_ARGS = ("series", "period", "number")


def _macd_ready(a: tuple[Decimal, ...]) -> int:
    return max(_n(a, 0), _n(a, 1)) + _n(a, 2) - 1


def _macd_settle(a: tuple[Decimal, ...]) -> int:
    return 5 * max(_n(a, 0), _n(a, 1))


INDICATORS: dict[str, Indicator] = {
    "sma": Indicator(_SERIES_N, "simple moving average: sma(close('1h'), 20)",
                     lambda a: _n(a), lambda a: _Talipp(SMA(_n(a)))),
    "ema": Indicator(_SERIES_N, "exponential moving average: ema(close('15m'), 50)",
                     lambda a: _n(a), lambda a: _Talipp(EMA(_n(a))), lambda a: 5 * _n(a)),
    "wma": Indicator(_SERIES_N, "weighted moving average: wma(close('1h'), 10)",
                     lambda a: _n(a), lambda a: _Talipp(WMA(_n(a)))),
    "rsi": Indicator(_SERIES_N, "relative strength index, 0..100: rsi(close('1h'), 14)",
                     lambda a: _n(a) + 1, lambda a: _Talipp(RSI(_n(a))), lambda a: 10 * _n(a)),
    "stddev": Indicator(_SERIES_N, "standard deviation (population): stddev(close('1h'), 20)",
                        lambda a: _n(a), lambda a: _Talipp(StdDev(_n(a)))),
    "roc": Indicator(_SERIES_N, "rate of change in %: roc(close('1d'), 10)",
                     lambda a: _n(a) + 1, lambda a: _Talipp(ROC(_n(a)))),
    "highest": Indicator(_SERIES_N, "highest value of the last N: highest(high('1h'), 24)",
                         lambda a: _n(a), lambda a: _Window(_n(a), "max")),
    "lowest": Indicator(_SERIES_N, "lowest value of the last N: lowest(low('1h'), 24)",
                        lambda a: _n(a), lambda a: _Window(_n(a), "min")),
    "macd": Indicator(_MACD_ARGS, "MACD line: macd(close('1h'), 12, 26, 9)",
                      _macd_ready, _macd(0), _macd_settle),
    "macd_signal": Indicator(_MACD_ARGS, "MACD signal line: macd_signal(close('1h'), 12, 26, 9)",
                             _macd_ready, _macd(1), _macd_settle),
    "macd_hist": Indicator(_MACD_ARGS, "MACD histogram: macd_hist(close('1h'), 12, 26, 9)",
                           _macd_ready, _macd(2), _macd_settle),
    "bb_upper": Indicator(_BB_ARGS, "upper Bollinger band: bb_upper(close('1h'), 20, 2)",
                          lambda a: _n(a), _bb(lambda v: v.ub)),
    "bb_middle": Indicator(_BB_ARGS, "middle Bollinger band: bb_middle(close('1h'), 20, 2)",
                           lambda a: _n(a), _bb(lambda v: v.cb)),
    "bb_lower": Indicator(_BB_ARGS, "lower Bollinger band: bb_lower(close('1h'), 20, 2)",
                          lambda a: _n(a), _bb(lambda v: v.lb)),
    "atr": Indicator(("interval", "period", "symbol?"),
                     "average true range: atr('15m', 14), atr('1h', 14, 'ETH_USDT_PERP')",
                     lambda a: _n(a) + 1, lambda a: _Atr(_n(a)), lambda a: 10 * _n(a), True),
    "vwap": Indicator(("interval", "period", "symbol?"),
                      "volume-weighted average of hlc3 over N candles: vwap('5m', 12)",
                      lambda a: _n(a), lambda a: _Window(_n(a), "vwap"), candles=True),
}  # fmt: skip
"""The indicators by name (each computed incrementally; README "Design" on the library)."""


class Series:
    """One bound :class:`Spec`'s values, one per closed candle of its (symbol, interval)
    (None while warming up), the newest ``keep`` kept."""

    __slots__ = ("_base", "_decimals", "_inputs", "_state", "spec", "values")

    def __init__(self, spec: Spec, inputs: tuple[Series, ...], keep: int) -> None:
        self.spec = spec
        self._inputs = inputs
        self.values: deque[float | None] = deque(maxlen=max(keep, 2))
        self._decimals: dict[int, Decimal] = {}
        """Values already turned into Decimals since the last push, by ``ago``."""
        indicator = INDICATORS.get(spec.fn)
        self._state = indicator.make(spec.args) if indicator is not None else None
        self._base = BASE_FIELDS[spec.fn][1] if spec.fn in BASE_FIELDS else None

    def push(self, bar: Bar) -> None:
        """Add the value of the candle ``bar`` just closed (its inputs pushed first)."""
        self._decimals.clear()
        base = self._base
        if base is not None:
            self.values.append(base(bar))
            return
        state = self._state
        assert state is not None
        if INDICATORS[self.spec.fn].candles:
            self.values.append(state.push(bar))
            return
        x = self._inputs[0].values[-1]
        self.values.append(None if x is None else state.push(x))

    def value(self, ago: int) -> Decimal:
        """The value ``ago`` closed candles before the last (0: the last); raises
        :class:`WarmingUp` when there is none yet."""
        found = self._decimals.get(ago)
        if found is not None:
            return found
        values = self.values
        if ago >= len(values) or (x := values[-1 - ago]) is None:
            have = len(values)
            raise WarmingUp(
                f"{self.spec.text()} is warming up ({have} of"
                f" {self.spec.ready_after + ago} closed {self.spec.interval} candles)"
            )
        found = self._decimals[ago] = Decimal(repr(x))
        return found


SERIES_FUNCTIONS: dict[str, str] = {
    **{
        name: f"{doc}: {name}('15m'), {name}('1h', 'ETH_USDT_PERP')"
        for name, (doc, _r) in BASE_FIELDS.items()
    },
    **{name: ind.doc for name, ind in INDICATORS.items()},
    "prev": "a series' value N closed candles before the last: prev(close('1h'), 1)",
    "crosses_above": "a series went from at or below another (or a number) to above it on the"
    " last closed candle: crosses_above(ema(close('15m'), 20), ema(close('15m'), 50))",
    "crosses_below": "a series went from at or above another (or a number) to below it on the"
    " last closed candle: crosses_below(rsi(close('1h'), 14), 70)",
}
"""Every function of a series, with its documentation and an example (``botkit check`` and
docs/strategies.md show these)."""


def reference() -> str:
    """The table of series functions for docs/strategies.md ("Candles and indicators"), made
    from :data:`SERIES_FUNCTIONS` and :data:`INDICATORS` (``tests/rules/test_docs.py`` holds the
    page to it)."""
    rows = ["| function | arguments | meaning |", "|---|---|---|"]
    for name, doc in SERIES_FUNCTIONS.items():
        if name in BASE_FIELDS:
            args = "interval, symbol?"
        elif name in INDICATORS:
            args = ", ".join(INDICATORS[name].args)
        elif name == "prev":
            args = "series, period"
        else:
            args = "series, series or number"
        rows.append(f"| `{name}` | {args} | {doc} |")
    return "\n".join(rows) + "\n\nIntervals: " + ", ".join(f"`{i}`" for i in INTERVALS) + ".\n"
