"""The report's PNG charts: equity curve, drawdown, and price with the fills marked.

matplotlib draws on its Agg canvas through :class:`~matplotlib.figure.Figure` directly (no
pyplot, no global figure state, no display), inside matplotlib's default style so a user's
``matplotlibrc`` changes nothing. The PNG carries no software tag or time stamp; with a fixed
size, dpi and the bundled DejaVu font the same result gives the same bytes.

Long series are cut to at most :data:`MAX_POINTS` points per line by keeping the lowest and
the highest value of each time bucket, so a year of minutes draws fast and keeps its spikes.
Prices become floats here, for drawing only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import matplotlib as mpl
import matplotlib.dates as mdates
import numpy as np
import numpy.typing as npt
from matplotlib import style
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from botkit.backtest.columns import equity_columns
from botkit.backtest.result import BacktestResult, FillRow

__all__ = [
    "MAX_POINTS",
    "downsample",
    "draw_charts",
    "drawdown_percent",
]

FloatArray = npt.NDArray[np.float64]

MAX_POINTS = 2000
_DAY_MS = 86_400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SIZE = (10.0, 3.6)
_DPI = 100
_RC: dict[RcKeyType, Any] = {
    "timezone": "UTC",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 9.0,
    "path.simplify": True,
}
_BUY = "#1a9850"
_SELL = "#d73027"
_LINE = "#2c5d8f"


def downsample(
    xs: Sequence[float] | FloatArray, ys: Sequence[float] | FloatArray, limit: int = MAX_POINTS
) -> tuple[list[float], list[float]]:
    """At most about ``limit`` points: per bucket the lowest and the highest, in time order."""
    if len(xs) <= limit:
        return [float(x) for x in xs], [float(y) for y in ys]
    values = np.asarray(ys, dtype=np.float64)
    size = -(-len(xs) * 2 // limit)
    out_x: list[float] = []
    out_y: list[float] = []
    for begin in range(0, len(xs), size):
        bucket = values[begin : begin + size]
        low = begin + int(bucket.argmin())  # the first of equals, as list.index(min()) gives
        high = begin + int(bucket.argmax())
        for i in sorted({low, high}):
            out_x.append(float(xs[i]))
            out_y.append(float(values[i]))
    return out_x, out_y


def _line(times: Sequence[int], values: Iterable[Decimal]) -> tuple[FloatArray, FloatArray]:
    """Chart coordinates as float arrays (8 bytes a point: a year of minutes is 4 MB a line)."""
    # matplotlib date numbers count days from its epoch (1970 unless configured otherwise)
    epoch = float(mdates.date2num(_EPOCH))  # type: ignore[no-untyped-call]
    days = np.fromiter(times, dtype=np.int64, count=len(times)) / _DAY_MS
    ys = np.fromiter(map(float, values), dtype=np.float64)
    return epoch + days, ys


def drawdown_percent(ys: Sequence[float] | FloatArray, start: float) -> list[float]:
    """Percent below the running peak (≤ 0), the first peak being ``start``; for drawing."""
    return _drawdown(np.asarray(ys, dtype=np.float64), start).tolist()  # type: ignore[no-any-return]


def _drawdown(ys: FloatArray, start: float) -> FloatArray:
    if not len(ys):
        return ys
    peak = np.maximum.accumulate(np.maximum(ys, start))
    safe = np.where(peak > 0, peak, 1.0)
    return np.where(peak > 0, (ys - peak) / safe * 100.0, 0.0)


def _figure(title: str) -> tuple[Figure, Axes]:
    fig = Figure(figsize=_SIZE, dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title, loc="left")
    locator = mdates.AutoDateLocator(tz=mdates.UTC)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    formatter = mdates.ConciseDateFormatter(locator, tz=mdates.UTC)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_formatter(formatter)
    return fig, ax


def _save(fig: Figure, path: Path) -> None:
    fig.savefig(path, format="png", dpi=_DPI, metadata={"Software": None})


def _empty(ax: Axes, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what}", ha="center", va="center", transform=ax.transAxes)


def draw_charts(result: BacktestResult, folder: Path) -> None:
    """``equity.png``, ``drawdown.png`` and ``price.png`` of ``result`` into ``folder``."""
    times, values, _ = equity_columns(result.equity)
    xs, ys = _line(times, values)
    with style.context("default"), mpl.rc_context(_RC):
        _draw_equity(result, xs, ys, folder / "equity.png")
        _draw_drawdown(xs, _drawdown(ys, float(result.starting_balance)),
                       folder / "drawdown.png")  # fmt: skip
        _draw_price(result, folder / "price.png")


def _draw_equity(result: BacktestResult, times: FloatArray, values: FloatArray, path: Path) -> None:
    fig, ax = _figure(f"Equity ({result.currency})")
    xs, ys = downsample(times, values)
    if xs:
        ax.plot(xs, ys, color=_LINE, linewidth=1.0)
        ax.axhline(float(result.starting_balance), color="grey", linestyle="--", linewidth=0.8)
    else:
        _empty(ax, "equity points")
    _save(fig, path)


def _draw_drawdown(times: FloatArray, percent: FloatArray, path: Path) -> None:
    fig, ax = _figure("Drawdown (%)")
    xs, ys = downsample(times, percent)
    if xs:
        ax.fill_between(xs, ys, 0.0, color=_SELL, alpha=0.35, linewidth=0)
        ax.plot(xs, ys, color=_SELL, linewidth=0.8)
    else:
        _empty(ax, "equity points")
    _save(fig, path)


def _draw_price(result: BacktestResult, path: Path) -> None:
    fig, ax = _figure(f"{result.symbol} price and fills")
    xs, ys = downsample(*_line([t for t, _ in result.prices], [v for _, v in result.prices]))
    if xs:
        ax.plot(xs, ys, color=_LINE, linewidth=0.8, label="price")
    else:
        _empty(ax, "prices")
    for side, marker, color in (("BUY", "^", _BUY), ("SELL", "v", _SELL)):
        fills = [f for f in result.fills if f.side.upper() == side and _ours(f, result)]
        if fills:
            fx, fy = _line([f.time_ms for f in fills], [f.px for f in fills])
            label = f"{side.lower()} ({len(fills)})"
            ax.scatter(fx, fy, marker=marker, color=color, s=28, zorder=3, label=label)
    if ax.get_legend_handles_labels()[0]:  # a portfolio's account chart has neither
        ax.legend(loc="upper left", fontsize=8)
    _save(fig, path)


def _ours(fill: FillRow, result: BacktestResult) -> bool:
    return not fill.symbol or fill.symbol == result.symbol
