"""The figures of a backtest: return, maximum drawdown, exposure time, order counts. Pure.

* **return** — final equity / starting balance − 1; the final equity is the last point of
  the equity curve (the starting balance when there is none).
* **maximum drawdown** — the largest fall from a running peak, as a fraction of that peak
  (and in money); the starting balance is the first peak.
* **exposure time** — the fraction of the period [start, end) during which the account held
  a position: each equity point's ``exposure`` holds until the next point (the last until the
  end); before the first point the account is flat.
* **annualised return** — (final / start) ^ (1 / years) − 1, years = the period / 365 days.
* **drawdown duration** — from the deepest drawdown's peak until equity is back at that peak
  (to the end of the period when it never is).
* **Sharpe, Sortino** — of the per-sample returns of the equity curve (one sample a candle,
  the starting balance before the first), risk-free rate 0, annualised by √(samples a year):
  Sharpe = mean / standard deviation (n − 1) · √N; Sortino = mean / downside deviation
  (√ mean(min(r, 0)²)) · √N — empyrical's definitions. ``None`` when undefined (no variation,
  no losing sample, fewer than two samples).
* **Calmar** — annualised return / maximum drawdown (``None`` without a drawdown).
* **trades** (:mod:`botkit.backtest.trades`; closed round trips only, net of fees) — count,
  win rate (net > 0), profit factor (Σ won / Σ lost; ``None`` when nothing was lost),
  expectancy (mean net), average and longest holding time, best and worst trade.
* **net PnL** — realized + unrealized − fees: the equity's change (the simulator books no
  funding).
* **orders** — placed (the exchange accepted them), filled (at least one execution), refused
  locally, rejected by the exchange, failed; fills; traded notional (Σ of each fill's value,
  px · qty · contract value, as the exchange reports it).

Ratios are ``Decimal`` rounded to 8 places (half even), so the figures are the same bytes on
every run. The equity-curve statistics are computed with numpy (float64, on returns — each
return is divided out in Decimal, so money never passes through a float) and rounded the same
way. :func:`show_figure` writes a figure for a person: ratios as percentages, instants as ISO
times, durations as durations.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from itertools import islice, repeat
from operator import attrgetter, sub, truediv

import numpy as np

from botkit.backtest.columns import equity_columns
from botkit.backtest.result import BacktestResult, EquityPoint, FillRow
from botkit.backtest.trades import Trade, build_trades
from botkit.timeparse import format_time

__all__ = [
    "DURATIONS",
    "FIGURE_NAMES",
    "INSTANTS",
    "PERCENTAGES",
    "YEAR_MS",
    "Figures",
    "compute_figures",
    "equity_statistics",
    "exposure_fraction",
    "format_duration",
    "result_trades",
    "show_figure",
    "trade_statistics",
]

YEAR_MS = 365 * 86_400_000
"""A year of a market open every day and hour (crypto futures): what annualises."""

_PLACES = Decimal("1e-8")
_ZERO = Decimal(0)
_ONE = Decimal(1)


def _ratio(num: Decimal, den: Decimal) -> Decimal:
    if den == 0:
        return _ZERO
    return (num / den).quantize(_PLACES, rounding=ROUND_HALF_EVEN)


@dataclass(frozen=True, slots=True)
class Figures:
    """The computed figures of one run."""

    starting_balance: Decimal
    final_equity: Decimal
    total_return: Decimal
    annualised_return: Decimal | None
    max_drawdown: Decimal
    max_drawdown_amount: Decimal
    max_drawdown_peak_ms: int | None
    max_drawdown_trough_ms: int | None
    max_drawdown_duration_ms: int | None
    sharpe: Decimal | None
    sortino: Decimal | None
    calmar: Decimal | None
    exposure_time: Decimal
    trades: int
    win_rate: Decimal | None
    profit_factor: Decimal | None
    expectancy: Decimal | None
    avg_holding_ms: int | None
    longest_holding_ms: int | None
    best_trade: Decimal | None
    worst_trade: Decimal | None
    orders_total: int
    orders_placed: int
    orders_filled: int
    orders_refused: int
    orders_rejected: int
    orders_failed: int
    fills: int
    traded_notional: Decimal
    fees: Decimal
    realized_pnl: Decimal
    unrealized_pnl: Decimal
    net_pnl: Decimal

    def as_dict(self) -> dict[str, str | int | None]:
        """Figures by name (:data:`FIGURE_NAMES`), amounts and ratios as decimal strings."""
        out: dict[str, str | int | None] = {}
        for name in FIGURE_NAMES:
            value = getattr(self, _ATTRS.get(name, name))
            out[name] = format(value, "f") if isinstance(value, Decimal) else value
        return out


_ATTRS = {"return": "total_return"}

_TRADE_FIGURES = (
    "trades",
    "win_rate",
    "profit_factor",
    "expectancy",
    "avg_holding_ms",
    "longest_holding_ms",
    "best_trade",
    "worst_trade",
)
"""The figures :func:`trade_statistics` computes."""

FIGURE_NAMES: tuple[str, ...] = (
    "starting_balance",
    "final_equity",
    "return",
    "annualised_return",
    "max_drawdown",
    "max_drawdown_amount",
    "max_drawdown_peak_ms",
    "max_drawdown_trough_ms",
    "max_drawdown_duration_ms",
    "sharpe",
    "sortino",
    "calmar",
    "exposure_time",
    *_TRADE_FIGURES,
    "orders_total",
    "orders_placed",
    "orders_filled",
    "orders_refused",
    "orders_rejected",
    "orders_failed",
    "fills",
    "traded_notional",
    "fees",
    "realized_pnl",
    "unrealized_pnl",
    "net_pnl",
)
"""The names :meth:`Figures.as_dict` uses (what a sweep can rank by)."""

PERCENTAGES = frozenset(
    {"return", "annualised_return", "max_drawdown", "exposure_time", "win_rate"}
)
"""Figures that are fractions, shown as percentages."""
INSTANTS = frozenset({"max_drawdown_peak_ms", "max_drawdown_trough_ms"})
"""Figures that are instants (epoch ms), shown as ISO times."""
DURATIONS = frozenset({"max_drawdown_duration_ms", "avg_holding_ms", "longest_holding_ms"})
"""Figures that are durations (ms), shown as durations."""
_PLAIN = frozenset({"sharpe", "sortino", "calmar", "profit_factor"})


def format_duration(ms: int) -> str:
    """``3d 4h 05m``, ``2h 07m``, ``4m 30s``, ``0s``: a duration for a person."""
    seconds, _ = divmod(ms, 1000)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def show_figure(name: str, value: str | int | None, percent: str = "%") -> str:
    """A figure of :meth:`Figures.as_dict` for a person: percentages (followed by
    ``percent``), ISO instants, durations, ratios with 2 decimals, money with 2 decimals and
    thousands, counts as they are; ``-`` when undefined."""
    if value is None:
        return "-"
    if name in INSTANTS:
        return format_time(int(value))
    if name in DURATIONS:
        return format_duration(int(value))
    if isinstance(value, int):
        return f"{value:,}"
    number = Decimal(value)
    if name in PERCENTAGES:
        number *= 100
    text = f"{number:,.2f}"
    if text.startswith("-") and not text.strip("-0.,"):
        text = text[1:]  # -0.001 shows as 0.00, not -0.00
    return f"{text}{percent}" if name in PERCENTAGES else text


def _max_drawdown(
    equity: Sequence[EquityPoint], start: Decimal, start_ms: int, end_ms: int
) -> tuple[Decimal, Decimal, int | None, int | None, int | None]:
    times, values, _ = equity_columns(equity)
    peak, peak_ms = start, start_ms
    best: tuple[Decimal, Decimal, int | None, int | None] = (_ZERO, _ZERO, None, None)
    best_ratio = _ZERO
    best_peak = start
    # ``low``: the lowest value since the peak was set. For one peak the fall, and so the
    # ratio, only grows as the value falls (both correctly rounded, so monotone): a value at
    # or above ``low`` cannot beat the ratio already judged at ``low``, and is not divided.
    low = start
    for time_ms, value in zip(times, values, strict=True):
        if value >= low:
            if value > peak:
                peak, peak_ms, low = value, time_ms, value
            continue
        low = value
        fall = peak - value
        ratio = fall / peak if peak > 0 else _ZERO
        if fall > 0 and ratio > best_ratio:
            best_ratio, best_peak = ratio, peak
            best = (ratio, fall, peak_ms, time_ms)
    ratio, fall, peak_at, trough_at = best
    duration = None
    if peak_at is not None and trough_at is not None:
        recovered = next(
            (t for t, v in zip(times, values, strict=True) if t > trough_at and v >= best_peak),
            end_ms,
        )
        duration = recovered - peak_at
    return ratio.quantize(_PLACES, rounding=ROUND_HALF_EVEN), fall, peak_at, trough_at, duration


def _float_ratio(value: float) -> Decimal | None:
    if not math.isfinite(value):
        return None
    return Decimal(repr(value)).quantize(_PLACES, rounding=ROUND_HALF_EVEN)


def equity_statistics(
    equity: Sequence[Decimal], start: Decimal, samples_a_year: float
) -> tuple[Decimal | None, Decimal | None]:
    """(Sharpe, Sortino) of the returns of ``start`` followed by ``equity`` (see the module
    doc); ``samples_a_year`` annualises."""
    if len(equity) < 2 or start <= 0:
        return None, None
    before = [start]  # each sample's predecessor
    before.extend(islice(equity, len(equity) - 1))
    if min(before) <= 0:
        return None, None
    # float(b / a - 1) of each step, the loop in C (map): the same Decimal operations
    quotients = map(truediv, equity, before)
    returns = np.fromiter(
        map(float, map(sub, quotients, repeat(_ONE))), dtype=np.float64, count=len(equity)
    )
    mean = float(returns.mean())
    scale = math.sqrt(samples_a_year)
    std = float(returns.std(ddof=1))
    sharpe = _float_ratio(mean / std * scale) if std > 0 else None
    downside = float(np.sqrt(np.mean(np.square(np.minimum(returns, 0.0)))))
    sortino = _float_ratio(mean / downside * scale) if downside > 0 else None
    return sharpe, sortino


def _annualised(final: Decimal, start: Decimal, period_ms: int) -> Decimal | None:
    if start <= 0 or period_ms <= 0:
        return None
    if final <= 0:
        return Decimal(-1)
    try:
        growth = float(final / start) ** (YEAR_MS / period_ms)
    except OverflowError:
        return None
    return _float_ratio(growth - 1.0)


def trade_statistics(trades: Sequence[Trade]) -> dict[str, Decimal | int | None]:
    """The trade figures of the closed ``trades`` (see the module doc), by figure name."""
    closed = [t for t in trades if t.status == "closed"]
    out: dict[str, Decimal | int | None] = dict.fromkeys(_TRADE_FIGURES)
    out["trades"] = len(closed)
    if not closed:
        return out
    nets = [t.net for t in closed]
    won = sum((n for n in nets if n > 0), _ZERO)
    lost = -sum((n for n in nets if n < 0), _ZERO)
    holding = [t.holding_ms for t in closed]
    out["win_rate"] = _ratio(Decimal(sum(1 for n in nets if n > 0)), Decimal(len(nets)))
    out["profit_factor"] = _ratio(won, lost) if lost else None
    out["expectancy"] = _ratio(sum(nets, _ZERO), Decimal(len(nets)))
    out["avg_holding_ms"] = sum(holding) // len(holding)
    out["longest_holding_ms"] = max(holding)
    out["best_trade"] = max(nets)
    out["worst_trade"] = min(nets)
    return out


def result_trades(result: BacktestResult) -> list[Trade]:
    """The round trips of ``result`` (:func:`~botkit.backtest.trades.build_trades`)."""
    marks = {result.symbol: result.mark} if result.mark is not None else dict(result.marks)
    return build_trades(
        result.fills, end_ms=result.end_ms, marks=marks, default_symbol=result.symbol
    )


def exposure_fraction(equity: Sequence[EquityPoint], start_ms: int, end_ms: int) -> Decimal:
    """The fraction of [start, end) with a non-zero ``exposure`` (see the module doc)."""
    total = end_ms - start_ms
    if total <= 0 or not equity:
        return _ZERO
    times, _, exposures = equity_columns(equity)
    count = len(times)
    # each point's span [time, next time) clipped to [start, end), over arrays
    begins = np.asarray(times, dtype=np.int64)
    spans = np.empty(count, dtype=np.int64)
    spans[:-1] = begins[1:]
    spans[-1] = end_ms
    np.minimum(spans, end_ms, out=spans)
    spans -= np.maximum(begins, start_ms)
    held = np.fromiter(map(bool, exposures), dtype=np.bool_, count=count)
    held &= spans > 0
    # each span is at most the period: below 2**62 in all, an int64 sum cannot overflow
    small = count * total < 1 << 62
    exposed = int(spans.sum(where=held)) if small else sum(spans[held].tolist())
    return _ratio(Decimal(exposed), Decimal(total))


def _value(fill: FillRow) -> Decimal:
    return fill.value if fill.value is not None else fill.px * fill.qty


_OUTCOME = attrgetter("outcome")
_CL_ORD_ID = attrgetter("cl_ord_id")


def compute_figures(result: BacktestResult, trades: Sequence[Trade] | None = None) -> Figures:
    """Every figure of ``result`` (see the module doc for the definitions); ``trades`` its
    round trips when already built."""
    if trades is None:
        trades = result_trades(result)
    start = result.starting_balance
    final = result.equity[-1].equity if result.equity else start
    period = result.end_ms - result.start_ms
    dd, dd_amount, peak_ms, trough_ms, dd_ms = _max_drawdown(
        result.equity, start, result.start_ms, result.end_ms
    )
    samples = YEAR_MS / result.interval_ms if result.interval_ms > 0 else 0.0
    sharpe, sortino = equity_statistics(equity_columns(result.equity)[1], start, samples)
    annual = _annualised(final, start, period)
    calmar = _ratio(annual, dd) if annual is not None and dd else None
    stats = trade_statistics(trades)
    # the orders' fields read in C (map): a year holds ~120k orders
    outcomes = Counter(map(_OUTCOME, result.orders))
    filled_ids = {f.cl_ord_id for f in result.fills if f.qty > 0}
    filled = sum(map(filled_ids.__contains__, map(_CL_ORD_ID, result.orders)))
    return Figures(
        starting_balance=start,
        final_equity=final,
        total_return=_ratio(final - start, start),
        annualised_return=annual,
        max_drawdown=dd,
        max_drawdown_amount=dd_amount,
        max_drawdown_peak_ms=peak_ms,
        max_drawdown_trough_ms=trough_ms,
        max_drawdown_duration_ms=dd_ms,
        sharpe=sharpe,
        sortino=sortino,
        calmar=calmar,
        exposure_time=exposure_fraction(result.equity, result.start_ms, result.end_ms),
        trades=len([t for t in trades if t.status == "closed"]),
        win_rate=_dec(stats["win_rate"]),
        profit_factor=_dec(stats["profit_factor"]),
        expectancy=_dec(stats["expectancy"]),
        avg_holding_ms=_int(stats["avg_holding_ms"]),
        longest_holding_ms=_int(stats["longest_holding_ms"]),
        best_trade=_dec(stats["best_trade"]),
        worst_trade=_dec(stats["worst_trade"]),
        orders_total=len(result.orders),
        orders_placed=outcomes.get("accepted", 0),
        orders_filled=filled,
        orders_refused=outcomes.get("rejected_local", 0),
        orders_rejected=outcomes.get("rejected", 0),
        orders_failed=outcomes.get("failed", 0),
        fills=len(result.fills),
        traded_notional=sum((_value(f) for f in result.fills), _ZERO),
        fees=result.fees,
        realized_pnl=result.realized_pnl,
        unrealized_pnl=result.unrealized_pnl,
        net_pnl=result.realized_pnl + result.unrealized_pnl - result.fees,
    )


def _dec(value: Decimal | int | None) -> Decimal | None:
    return value if isinstance(value, Decimal) else None


def _int(value: Decimal | int | None) -> int | None:
    return value if isinstance(value, int) else None
