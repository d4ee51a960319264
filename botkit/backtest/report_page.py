"""``report.html``: the interactive backtest report, one self-contained file.

The page draws, on one shared time axis, the candles with the strategies' indicators
(:mod:`botkit.backtest.report_indicators`) and the fills marked by rule (hover: the fills of
the candle with their orders' details), the position, the equity and the drawdown; wheel or
drag zooms and pans. Below: the trade list, the order list and the fill list, each sortable (click a
heading) and filterable (a text box), paged in the page so every row is there; clicking a
trade shows its fills (the fill list keeps only them, the chart zooms to the trade and rings
them).

**Downsampling that keeps the extremes.** The candles are aggregated into levels of wider
candles (5 m, 15 m, 1 h, 4 h, 1 d, 1 w: open of the first, highest high, lowest low, close
of the last), the equity to its last value per bucket, the drawdown to its deepest and the
position to its largest size, so no spike disappears at any zoom. The page draws the finest
level with at most about :data:`VISIBLE_BARS` candles in view and switches as one zooms. The
finest level kept is the file's interval when the run has at most :data:`FINEST_BARS`
candles, else the first level under it (a year of minutes: 15 m; its minutes are in the
CSV files and the journal). Fills are marked one per candle, rule and side at the level drawn.

**Self-contained and reproducible.** Lightweight Charts (TradingView, Apache-2.0; vendored
from npm by ``web/report/vendor.sh`` into ``botkit/backtest/assets``) and the page's own
script are inlined: no CDN, no font, it opens offline from anywhere. The data is one JSON
block; the page has no time stamp and no random id, so the same result gives the same bytes.
Numbers the tables show are the exact decimals; the charts draw floats.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from html import escape
from importlib import resources
from itertools import chain
from operator import attrgetter, itemgetter, sub
from typing import Any

import numpy as np
import numpy.typing as npt

from botkit.backtest.bars import Bar
from botkit.backtest.columns import BarColumns, equity_columns
from botkit.backtest.report_indicators import IndicatorLine
from botkit.backtest.result import BacktestResult, EquityPoint, FillRow, OrderRow
from botkit.backtest.trades import Trade
from botkit.numbers import plain, plain_text
from botkit.timeparse import format_interval, format_time

__all__ = [
    "COARSEST_BARS",
    "FINEST_BARS",
    "LEVEL_WIDTHS",
    "VISIBLE_BARS",
    "ChartData",
    "OrderFields",
    "levels",
    "order_fields",
    "render_page",
    "trade_fills",
]

FINEST_BARS = 60_000
"""The most candles the finest level keeps (about six weeks of minutes)."""
VISIBLE_BARS = 1_200
"""About the most candles drawn at once; the page picks the level to stay under it."""
COARSEST_BARS = 400
"""Levels are added until the whole run fits in this many candles."""
LEVEL_WIDTHS = (
    60_000, 300_000, 900_000, 3_600_000, 14_400_000, 86_400_000, 604_800_000,
)  # fmt: skip
"""The candle widths (ms) the page may draw: 1m, 5m, 15m, 1h, 4h, 1d, 1w."""

_ASSETS = resources.files("botkit.backtest") / "assets"
_LIBRARY = "lightweight-charts.standalone.production.js"


@dataclass(frozen=True, slots=True)
class ChartData:
    """What the charts of one symbol are drawn from: its candles (of ``interval_ms``) and
    the indicators over them, with a note per indicator that could not be drawn."""

    symbol: str
    interval_ms: int
    bars: Sequence[Bar]
    indicators: Sequence[IndicatorLine] = ()
    notes: Sequence[str] = field(default_factory=tuple)


@dataclass(slots=True)
class _Level:
    width_ms: int
    t: list[int] = field(default_factory=list)
    o: list[float] = field(default_factory=list)
    h: list[float] = field(default_factory=list)
    low: list[float] = field(default_factory=list)
    c: list[float] = field(default_factory=list)
    eq: list[float] = field(default_factory=list)
    dd: list[float] = field(default_factory=list)
    pos: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.t)

    def as_json(self) -> dict[str, Any]:
        return {
            "w": self.width_ms // 1000,
            "t": [x // 1000 for x in self.t],
            "o": self.o, "h": self.h, "l": self.low, "c": self.c,
            "eq": [round(x, 4) for x in self.eq],
            "dd": [round(x, 4) for x in self.dd],
            "pos": self.pos,
        }  # fmt: skip


def levels(
    bars: Sequence[Bar],
    interval_ms: int,
    equity: Sequence[EquityPoint] = (),
    start_balance: Decimal = Decimal(0),
    fills: Sequence[FillRow] = (),
) -> list[_Level]:
    """The aggregation levels of the module doc, finest first (see :data:`FINEST_BARS`).

    Worked out over arrays (:func:`_base_arrays`, :func:`_coarser_arrays`); the same floats
    as plain per-candle loops (tests/backtest/test_report_levels.py holds them as the model and
    compares)."""
    base = _base_arrays(bars, interval_ms, equity, float(start_balance), fills)
    if not bars:
        return [_as_level(base)]
    span = bars[-1].time_ms + interval_ms - bars[0].time_ms
    widths = [w for w in LEVEL_WIDTHS if w > interval_ms and w % interval_ms == 0]
    out = [base]
    while widths and len(out[0].t) > FINEST_BARS:
        out = [_coarser_arrays(base, widths.pop(0))]
    while widths and span // out[-1].width_ms > COARSEST_BARS:
        out.append(_coarser_arrays(out[-1], widths.pop(0)))
    return [_as_level(level) for level in out]


@dataclass(slots=True)
class _Arrays:
    """A level as arrays (see :class:`_Level`)."""

    width_ms: int
    t: npt.NDArray[np.int64]
    o: npt.NDArray[np.float64]
    h: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    c: npt.NDArray[np.float64]
    eq: npt.NDArray[np.float64]
    dd: npt.NDArray[np.float64]
    pos: npt.NDArray[np.float64]


def _as_level(a: _Arrays) -> _Level:
    return _Level(
        a.width_ms, a.t.tolist(), a.o.tolist(), a.h.tolist(), a.low.tolist(), a.c.tolist(),
        a.eq.tolist(), a.dd.tolist(), a.pos.tolist(),
    )  # fmt: skip


def _floats(values: Iterable[Decimal], count: int) -> npt.NDArray[np.float64]:
    return np.fromiter(map(float, values), np.float64, count)


def _base_arrays(
    bars: Sequence[Bar],
    interval_ms: int,
    equity: Sequence[EquityPoint],
    start_balance: float,
    fills: Sequence[FillRow],
) -> _Arrays:
    """:func:`_base` over arrays: the same floats, compared and combined in the same order."""
    n = len(bars)
    if isinstance(bars, BarColumns):
        t = bars.times
        o, h, low, c = bars.price_columns(0, n)
    else:
        t = np.fromiter((b.time_ms for b in bars), np.int64, n)
        o = _floats((b.open for b in bars), n)
        h = _floats((b.high for b in bars), n)
        low = _floats((b.low for b in bars), n)
        c = _floats((b.close for b in bars), n)
    eq_times, eq_values, _ = equity_columns(equity)
    m = len(eq_times)
    # samples consumed up to each candle's end (the loop reads them in time order)
    times = np.frombuffer(eq_times, np.int64) if isinstance(eq_times, array) else eq_times
    upto = np.searchsorted(np.asarray(times, np.int64), t + interval_ms, side="right")
    del times
    if n:
        np.maximum.accumulate(upto, out=upto)
    # [start, samples...]: the equity carried in before each candle's samples
    values = np.empty(m + 1, np.float64)
    values[0] = start_balance
    values[1:] = _floats(eq_values, m)
    eq = values[upto]
    # the drawdown after each sample (index 0: none yet) from the running peak
    peak = np.maximum.accumulate(values)
    positive = peak > 0
    dd = np.subtract(values, peak, out=values)
    np.divide(dd, peak, out=dd, where=positive)
    np.multiply(dd, 100.0, out=dd, where=positive)
    dd[~positive] = 0.0
    del peak, positive
    # the deepest drawdown during the candle: the one carried in, and each sample's
    before = np.empty_like(upto)
    if n:
        before[0] = 0
        before[1:] = upto[:-1]
    worst = dd[before]
    busy = upto > before
    if busy.any():
        deepest = np.minimum.reduceat(dd[: int(upto[-1]) + 1], before[busy] + 1)
        worst[busy] = np.minimum(worst[busy], deepest)
    del dd, before, busy, upto
    pos = _positions(t, t + interval_ms, fills)
    return _Arrays(interval_ms, t, o, h, low, c, eq, worst, pos)


def _positions(
    t: npt.NDArray[np.int64], ends: npt.NDArray[np.int64], fills: Sequence[FillRow]
) -> npt.NDArray[np.float64]:
    """The largest net position (buys − sells) during each candle, as :func:`_base`."""
    n = len(t)
    running = [Decimal(0)]
    for f in fills:
        running.append(running[-1] + (f.qty if f.side.upper() == "BUY" else -f.qty))
    fill_times = np.fromiter((f.time_ms for f in fills), np.int64, len(fills))
    # fills before each candle's end, as the loop takes them in order
    took = np.searchsorted(fill_times, ends, side="left") if n else np.zeros(0, np.int64)
    took = np.maximum.accumulate(took) if n else took
    at_end = _floats(running, len(running))
    pos = at_end[took] if n else np.zeros(0)
    before = np.concatenate(([0], took[:-1])) if n else took
    for j in np.flatnonzero(took > before).tolist():
        most = running[int(before[j])]
        for k in range(int(before[j]) + 1, int(took[j]) + 1):
            if abs(running[k]) > abs(most):
                most = running[k]
        pos[j] = float(most)
    return pos


def _coarser_arrays(src: _Arrays, width_ms: int) -> _Arrays:
    """:func:`_coarser` over arrays."""
    keys = src.t - src.t % width_ms
    n = len(keys)
    if not n:
        return _Arrays(width_ms, keys, src.o, src.h, src.low, src.c, src.eq, src.dd, src.pos)
    first = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    last = np.concatenate((first[1:], [n])) - 1
    # the largest |position| of each bucket, the first of equals
    group = np.repeat(np.arange(len(first)), np.diff(np.concatenate((first, [n]))))
    order = np.lexsort((np.arange(n), -np.abs(src.pos), group))
    pick = order[first]
    return _Arrays(
        width_ms,
        keys[first],
        src.o[first],
        np.maximum.reduceat(src.h, first),
        np.minimum.reduceat(src.low, first),
        src.c[last],
        src.eq[last],
        np.minimum.reduceat(src.dd, first),
        src.pos[pick],
    )


def trade_fills(trades: Sequence[Trade], fills: Sequence[FillRow], symbol: str) -> list[list[int]]:
    """For each trade, the indexes in ``fills`` of the fills that made it: per symbol and
    position side the trades take the fills in turn, ``Trade.fills`` each; a fill through zero
    (one-way) ends one trade and opens the next, so it is in both."""
    by_key: dict[tuple[str, str], list[int]] = {}
    for i, f in enumerate(fills):
        if f.qty > 0:
            by_key.setdefault((f.symbol or symbol, f.pos_side or "BOTH"), []).append(i)
    cursor: dict[tuple[str, str], int] = {}
    out: list[list[int]] = []
    for t in trades:
        key = (t.symbol or symbol, t.pos_side or "BOTH")
        own = by_key.get(key, [])
        p = cursor.get(key, 0)
        if (
            p > 0
            and (p >= len(own) or fills[own[p]].time_ms != t.entry_ms)
            and (fills[own[p - 1]].time_ms == t.entry_ms)
        ):
            p -= 1  # the previous trade's last fill went through zero and opened this one
        out.append(own[p : p + t.fills])
        cursor[key] = p + t.fills
    return out


def _dec(value: Decimal | None) -> str:
    return "" if value is None else plain(value)


def _plain_texts(texts: Iterable[str]) -> list[str]:
    """:func:`_dec` of each value given its exact text (``format(value, "f")``, ``""`` for
    none; :attr:`OrderFields.px`): :func:`~botkit.numbers.plain_text` of each (a year's ~120k
    order prices, without a ``Decimal`` each)."""
    return list(map(plain_text, texts))


def _label(strategy: str, rule: str) -> str:
    return f"{strategy}/{rule}" if strategy or rule else "(unknown)"


def page_data(
    result: BacktestResult,
    chart: ChartData,
    trades: Sequence[Trade],
    summary: str,
    fields: OrderFields | None = None,
) -> dict[str, Any]:
    """Everything the page's script reads, JSON-ready (``fields``: the orders', when the caller
    has them already)."""
    symbol = chart.symbol
    fills = result.fills  # every row in the tables; the chart marks its own symbol's
    orders = result.orders
    own = [f for f in fills if not f.symbol or f.symbol == symbol]
    tagged = set(zip(map(_STRATEGY, fills), map(_RULE, fills), strict=True))
    tagged.update(zip(map(_STRATEGY, orders), map(_RULE, orders), strict=True))
    rules = sorted({_label(*tag) for tag in tagged})  # each distinct pair labelled once
    index = {r: i for i, r in enumerate(rules)}
    lv = levels(chart.bars, chart.interval_ms, result.equity, result.starting_balance, own)
    finest = lv[0].width_ms
    return {
        "symbol": symbol,
        "currency": result.currency,
        "interval": chart.interval_ms // 1000,
        "visible": VISIBLE_BARS,
        "start": float(result.starting_balance),
        "summary": summary,
        "rules": rules,
        "levels": [level.as_json() for level in lv],
        "indicators": [
            {"label": line.label, "overlay": line.overlay, "points": _thin(line.points, finest)}
            for line in chart.indicators
        ],
        "notes": list(chart.notes),
        "fills": _pack([_fill_cells(f, index, symbol) for f in fills], "tvvkvkvkkk"),
        "orders": _order_columns(fields or order_fields(orders), index),
        "trades": _pack([_trade_cells(t, symbol) for t in trades], "vkkkkvvvvvvvvkk"),
        "tradeFills": trade_fills(trades, fills, symbol),
    }


def _pack(rows: Sequence[Sequence[object]], kinds: str) -> dict[str, Any]:
    """``rows`` by column, smaller: per column ``kinds`` says ``v`` (the values), ``k`` (few
    distinct values: a dictionary and an index per row) or ``t`` (integers: each the
    difference from the previous row's, for times in order). The page unpacks them."""
    columns: list[Any] = []
    for j, kind in enumerate(kinds):
        values = list(map(itemgetter(j), rows))  # a year's orders: ~120k cells a column
        if kind == "k":
            columns.append(_keyed(list(map(str, values))))
        elif kind == "t":
            columns.append(_steps(values))
        else:
            columns.append(values)
    return {"n": len(rows), "k": kinds, "c": columns}


def _keyed(texts: list[str]) -> dict[str, Any]:
    """A ``k`` column of :func:`_pack`: the distinct texts in order, and each row's index."""
    words = sorted(set(texts))
    at = {w: i for i, w in enumerate(words)}
    return {"d": words, "i": list(map(at.__getitem__, texts))}


def _steps(values: Iterable[object]) -> list[int]:
    """A ``t`` column of :func:`_pack`: each integer's difference from the one before (an int
    is its own text's value)."""
    ints = [v if type(v) is int else int(str(v)) for v in values]
    return list(map(sub, ints, chain((0,), ints)))


def _fill_cells(f: FillRow, index: dict[str, int], symbol: str) -> list[object]:
    return [f.time_ms, index[_label(f.strategy, f.rule)], f.cl_ord_id, f.side, _dec(f.px),
            _dec(f.qty), _dec(f.fee), f.role, f.pos_side, f.symbol or symbol]  # fmt: skip


def _order_cells(o: OrderRow, index: dict[str, int]) -> list[object]:
    why = "; ".join(o.reasons) or " ".join(x for x in (o.code, o.msg) if x)
    return [o.time_ms, index[_label(o.strategy, o.rule)], o.cl_ord_id, o.side, o.type,
            _dec(o.px), _dec(o.sz), o.outcome, why]  # fmt: skip


def _order_rows(orders: Sequence[OrderRow], index: dict[str, int]) -> list[list[object]]:
    """:func:`_order_cells` of each order, the cells that repeat (the rule's index, the
    reason, the size) worked out once per distinct value (a year holds ~100k orders of a few
    rules, reasons and sizes; equal sizes print alike; its prices are mostly distinct, so
    they are not kept). ``tests/backtest/test_report_order_rows.py`` compares them."""
    rules: dict[tuple[str, str], int] = {}
    whys: dict[tuple[tuple[str, ...], str, str], str] = {}
    sizes: dict[Decimal | None, str] = {}
    rows: list[list[object]] = []
    append = rows.append
    for o in orders:
        rule = rules.get((o.strategy, o.rule))
        if rule is None:
            rule = rules[o.strategy, o.rule] = index[_label(o.strategy, o.rule)]
        why = whys.get((o.reasons, o.code, o.msg))
        if why is None:
            why = whys[o.reasons, o.code, o.msg] = "; ".join(o.reasons) or " ".join(
                x for x in (o.code, o.msg) if x
            )
        sz = o.sz
        size = sizes.get(sz) if sz is None or sz.is_finite() else _dec(sz)
        if size is None:
            size = sizes[sz] = _dec(sz)
        px = o.px
        append([o.time_ms, rule, o.cl_ord_id, o.side, o.type, "" if px is None else plain(px),
                size, o.outcome, why])  # fmt: skip
    return rows


_ORDER_KINDS = "tvvkkvkkk"
_STRATEGY = attrgetter("strategy")
_RULE = attrgetter("rule")
_ORDER_FIELDS = tuple(
    attrgetter(name)
    for name in ("time_ms", "strategy", "rule", "cl_ord_id", "symbol", "side", "type", "px",
                 "sz", "outcome", "code", "msg", "reasons")
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class OrderFields:
    """Every order's fields as columns (:class:`~botkit.backtest.result.OrderRow`'s, in its
    order), read once over the orders (in C, :func:`order_fields`) for both the page's table
    and ``orders.csv`` (a year holds ~120k orders). ``px``: each price's exact text
    (``format(px, "f")``, ``""`` for none), what the CSV writes and the page's plain text
    starts from."""

    times: list[int]
    strategies: list[str]
    rules: list[str]
    ids: list[str]
    symbols: list[str]
    sides: list[str]
    types: list[str]
    px: list[str]
    sizes: list[Decimal]
    outcomes: list[str]
    codes: list[str]
    msgs: list[str]
    reasons: list[tuple[str, ...]]


def order_fields(orders: Sequence[OrderRow]) -> OrderFields:
    """The :class:`OrderFields` of ``orders``."""
    columns: list[list[Any]] = [list(map(get, orders)) for get in _ORDER_FIELDS]
    columns[7] = ["" if px is None else format(px, "f") for px in columns[7]]
    return OrderFields(*columns)


def _order_columns(fields: OrderFields, index: dict[str, int]) -> dict[str, Any]:
    """``_pack(_order_rows(orders, index), "tvvkkvkkk")`` made a column at a time from the
    orders' fields: the cells that repeat (the rule's index, the reason, the size) worked out
    once per distinct value, no row built (a year holds ~120k orders; the rows and their
    columns cost about a third of the page's data). ``_order_rows`` is the model
    (``tests/backtest/test_report_order_columns.py`` compares them)."""
    f = fields
    keys = list(zip(f.strategies, f.rules, strict=True))
    rule_index = {key: index[_label(*key)] for key in set(keys)}
    causes = list(zip(f.reasons, f.codes, f.msgs, strict=True))
    whys = {key: "; ".join(key[0]) or " ".join(x for x in key[1:] if x) for key in set(causes)}
    sizes: dict[Decimal | None, str] = {}
    size_texts = []
    for sz in f.sizes:
        text = sizes.get(sz) if sz is None or sz.is_finite() else _dec(sz)
        if text is None:
            text = sizes[sz] = _dec(sz)
        size_texts.append(text)
    columns: list[Any] = [
        _steps(f.times),
        list(map(rule_index.__getitem__, keys)),
        f.ids,
        _keyed(f.sides),
        _keyed(f.types),
        _plain_texts(f.px),
        _keyed(size_texts),
        _keyed(f.outcomes),
        _keyed(list(map(whys.__getitem__, causes))),
    ]
    return {"n": len(f.times), "k": _ORDER_KINDS, "c": columns}


def _trade_cells(t: Trade, symbol: str) -> list[object]:
    closed = t.exit.label() if t.status == "closed" else ""
    return [t.number, t.side, t.status, t.entry.label(), closed, t.entry_ms, t.exit_ms,
            _dec(t.qty), _dec(t.entry_px), _dec(t.exit_px), t.fills, _dec(t.fees), _dec(t.net),
            t.pos_side, t.symbol or symbol]  # fmt: skip


def _thin(points: Sequence[tuple[int, float]], width_ms: int) -> list[list[float]]:
    """The points at most one per ``width_ms`` bucket (the last), times in seconds."""
    out: list[list[float]] = []
    last = None
    for t, v in points:
        k = t - t % width_ms
        if k == last:
            out[-1][1] = v
        else:
            out.append([k // 1000, v])
            last = k
    return out


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _script_json(data: dict[str, Any]) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # inside <script>: no "</" (a closing tag) and no U+2028/2029 surprises
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_page(
    result: BacktestResult,
    chart: ChartData,
    trades: Sequence[Trade] = (),
    summary: str = "",
    links: Iterable[str] = (),
    fields: OrderFields | None = None,
) -> str:
    """The page of ``result`` for ``chart``'s symbol (``summary``: the printed summary;
    ``links``: report files to link, relative; ``fields``: the orders' (:func:`order_fields`),
    when the caller has them already)."""
    title = (
        f"Backtest {chart.symbol} {format_interval(chart.interval_ms)} "
        f"{format_time(result.start_ms)} → {format_time(result.end_ms)}"
    )
    data = page_data(result, chart, trades, summary, fields)
    files = " · ".join(f'<a href="{escape(name)}">{escape(name)}</a>' for name in links)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>\n{_asset('report.css')}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="files">{files}</p>' if files else "",
        _asset("report.html"),
        f'<script id="report-data" type="application/json">{_script_json(data)}</script>',
        f"<script>\n{_asset(_LIBRARY)}</script>",
        f"<script>\n{_asset('report.js')}</script>",
        "</body>",
        "</html>",
        "",
    ])  # fmt: skip
