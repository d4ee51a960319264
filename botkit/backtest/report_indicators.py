"""The strategies' indicators, recomputed over the replayed candles for the interactive report.

Each strategy names its candle series (:attr:`botkit.rules.model.Strategy.series`, e.g.
``ema(close('15m'), 20)``); the report draws every indicator of the chart's symbol that the
candle file can give: the minute candles are aggregated into the series' interval (buckets
aligned to the epoch, as the exchange's candles are) and fed, one closed candle at a time, to
the very :class:`~botkit.rules.series.Series` the rules read, so the line drawn is the value
the rule saw. A value is drawn at its candle's open time, as charting tools do.

Not drawn, each with a note: a series of another symbol (its candles are not in the file; in a
portfolio run, that symbol's own page draws it), a
series over an interval finer than the file's, a plain candle field (``close('15m')`` is the
price itself). ``prev(s, n)`` draws ``s``. Pure: floats for drawing only.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from botkit.backtest.bars import Bar
from botkit.rules.model import Strategy
from botkit.rules.series import BASE_FIELDS, INTERVALS, Series, Spec

__all__ = ["OVERLAYS", "IndicatorLine", "indicator_lines"]

OVERLAYS = frozenset(
    {"sma", "ema", "wma", "bb_upper", "bb_middle", "bb_lower", "highest", "lowest", "vwap"}
)
"""Indicators in the price's unit, drawn over the candles; the others get a pane each."""


@dataclass(frozen=True, slots=True)
class IndicatorLine:
    """One indicator to draw: its text (``ema(close('15m'), 20)``), whether it shares the
    price's scale (:data:`OVERLAYS` over price series), and its points (candle open time in
    ms, value) from its first value on."""

    label: str
    overlay: bool
    interval_ms: int
    points: Sequence[tuple[int, float]]


def _overlay(spec: Spec) -> bool:
    if spec.fn in BASE_FIELDS:
        return spec.fn != "volume"
    return spec.fn in OVERLAYS and all(_overlay(i) for i in spec.inputs)


def _wanted(
    strategies: Iterable[Strategy], symbol: str, others: Collection[str] = ()
) -> tuple[list[tuple[str, Spec]], list[str]]:
    """The specs to draw with their labels (as written when of the strategy's own symbol),
    by label; and the notes of those left out (``others``: the symbols whose own pages draw
    their series)."""
    specs: dict[str, tuple[str, Spec]] = {}
    notes: set[str] = set()
    for strategy in strategies:
        for raw in strategy.series:
            while raw.fn == "prev":
                raw = raw.inputs[0]
            spec = raw.bind(strategy.symbol)
            if spec.fn in BASE_FIELDS:
                continue
            of = _symbols(spec)
            if of != {symbol}:
                if len(of) == 1 and of <= set(others):
                    (other,) = of
                    notes.add(f"{spec.text()}: not drawn here, see {other}'s own report.html")
                else:
                    notes.add(
                        f"{spec.text()}: not drawn, another symbol's candles are not in the data"
                    )
                continue
            label = raw.text() if strategy.symbol == symbol else spec.text()
            specs.setdefault(spec.text(), (label, spec))
    return sorted(specs.values(), key=lambda ls: ls[0]), sorted(notes)


def _symbols(spec: Spec) -> set[str]:
    own = {spec.symbol or ""} if not spec.inputs else set()
    for i in spec.inputs:
        own |= _symbols(i)
    return own


def _post_order(spec: Spec, out: list[tuple[Spec, list[int]]]) -> int:
    """Append ``spec``'s inputs then ``spec``; returns its index."""
    inputs = [_post_order(i, out) for i in spec.inputs]
    out.append((spec, inputs))
    return len(out) - 1


def _candles(
    bars: Sequence[Bar], width_ms: int, interval_ms: int
) -> list[tuple[int, tuple[float, float, float, float, float]]]:
    """The closed candles of ``width_ms`` made from ``bars`` (of ``interval_ms``): a last one
    the data ends inside never closed, and no rule saw it (the first one, however short, did:
    the replay's candle book makes it from the minutes it has)."""
    out: list[tuple[int, tuple[float, float, float, float, float]]] = []
    key = None
    o = h = low = c = v = 0.0
    for bar in bars:
        k = bar.time_ms - bar.time_ms % width_ms
        if k != key:
            if key is not None:
                out.append((key, (o, h, low, c, v)))
            key = k
            o, h, low, c, v = (float(bar.open), float(bar.high), float(bar.low),
                               float(bar.close), float(bar.volume))  # fmt: skip
            continue
        hi, lo = float(bar.high), float(bar.low)
        h = hi if hi > h else h
        low = lo if lo < low else low
        c = float(bar.close)
        v += float(bar.volume)
    if key is not None and bars[-1].time_ms + interval_ms >= key + width_ms:
        out.append((key, (o, h, low, c, v)))
    return out


def _compute(
    spec: Spec, candles: Sequence[tuple[int, tuple[float, float, float, float, float]]]
) -> list[tuple[int, float]]:
    nodes: list[tuple[Spec, list[int]]] = []
    _post_order(spec, nodes)
    built: list[Series] = []
    for node, inputs in nodes:
        built.append(Series(node, tuple(built[i] for i in inputs), 2))
    root = built[-1]
    points: list[tuple[int, float]] = []
    for t, bar in candles:
        for series in built:
            series.push(bar)
        value = root.values[-1]
        if value is not None:
            points.append((t, value))
    return points


def indicator_lines(
    strategies: Iterable[Strategy],
    bars: Sequence[Bar],
    interval_ms: int,
    symbol: str,
    others: Collection[str] = (),
) -> tuple[list[IndicatorLine], list[str]]:
    """The indicators of ``strategies`` on ``symbol`` computed over ``bars`` (of
    ``interval_ms``), sorted by text; and a note for each one that could not be drawn
    (``others``: a portfolio's other symbols, whose own pages draw their indicators)."""
    specs, notes = _wanted(strategies, symbol, others)
    lines: list[IndicatorLine] = []
    by_width: dict[int, list[tuple[int, tuple[float, float, float, float, float]]]] = {}
    for label, spec in specs:
        width = INTERVALS[spec.interval]
        if width < interval_ms or width % interval_ms:
            notes.append(
                f"{label}: not drawn, its {spec.interval} candles cannot be made from the data's"
            )
            continue
        if width not in by_width:
            by_width[width] = _candles(bars, width, interval_ms)
        candles = by_width[width]
        lines.append(IndicatorLine(label, _overlay(spec), width, _compute(spec, candles)))
    return lines, notes
