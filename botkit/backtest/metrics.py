"""The figures of a backtest: return, maximum drawdown, exposure time, order counts. Pure.

* **return** — final equity / starting balance − 1; the final equity is the last point of
  the equity curve (the starting balance when there is none).
* **maximum drawdown** — the largest fall from a running peak, as a fraction of that peak
  (and in money); the starting balance is the first peak.
* **exposure time** — the fraction of the period [start, end) during which the account held
  a position: each equity point's ``exposure`` holds until the next point (the last until the
  end); before the first point the account is flat.
* **orders** — placed (the exchange accepted them), filled (at least one execution), refused
  locally, rejected by the exchange, failed; fills; traded notional (Σ of each fill's value,
  px · qty · contract value, as the exchange reports it).

Ratios are ``Decimal`` rounded to 8 places (half even), so the figures are the same bytes on
every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from botkit.backtest.result import BacktestResult, EquityPoint, FillRow

__all__ = ["FIGURE_NAMES", "Figures", "compute_figures", "exposure_fraction"]

_PLACES = Decimal("1e-8")
_ZERO = Decimal(0)


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
    max_drawdown: Decimal
    max_drawdown_amount: Decimal
    max_drawdown_peak_ms: int | None
    max_drawdown_trough_ms: int | None
    exposure_time: Decimal
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

    def as_dict(self) -> dict[str, str | int | None]:
        """Figures by name (:data:`FIGURE_NAMES`), amounts and ratios as decimal strings."""
        out: dict[str, str | int | None] = {}
        for name in FIGURE_NAMES:
            value = getattr(self, _ATTRS.get(name, name))
            out[name] = str(value) if isinstance(value, Decimal) else value
        return out


_ATTRS = {"return": "total_return"}

FIGURE_NAMES: tuple[str, ...] = (
    "starting_balance",
    "final_equity",
    "return",
    "max_drawdown",
    "max_drawdown_amount",
    "max_drawdown_peak_ms",
    "max_drawdown_trough_ms",
    "exposure_time",
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
)
"""The names :meth:`Figures.as_dict` uses (what a sweep can rank by)."""


def _max_drawdown(
    equity: Sequence[EquityPoint], start: Decimal, start_ms: int
) -> tuple[Decimal, Decimal, int | None, int | None]:
    peak, peak_ms = start, start_ms
    best: tuple[Decimal, Decimal, int | None, int | None] = (_ZERO, _ZERO, None, None)
    best_ratio = _ZERO
    for point in equity:
        if point.equity > peak:
            peak, peak_ms = point.equity, point.time_ms
            continue
        fall = peak - point.equity
        ratio = fall / peak if peak > 0 else _ZERO
        if fall > 0 and ratio > best_ratio:
            best_ratio = ratio
            best = (ratio, fall, peak_ms, point.time_ms)
    ratio, fall, peak_at, trough_at = best
    return ratio.quantize(_PLACES, rounding=ROUND_HALF_EVEN), fall, peak_at, trough_at


def exposure_fraction(equity: Sequence[EquityPoint], start_ms: int, end_ms: int) -> Decimal:
    """The fraction of [start, end) with a non-zero ``exposure`` (see the module doc)."""
    total = end_ms - start_ms
    if total <= 0 or not equity:
        return _ZERO
    exposed = 0
    ends = [p.time_ms for p in equity[1:]]
    ends.append(end_ms)
    for point, until in zip(equity, ends, strict=True):
        if point.exposure:
            begin = point.time_ms if point.time_ms > start_ms else start_ms
            until = until if until < end_ms else end_ms
            if until > begin:
                exposed += until - begin
    return _ratio(Decimal(exposed), Decimal(total))


def _value(fill: FillRow) -> Decimal:
    return fill.value if fill.value is not None else fill.px * fill.qty


def compute_figures(result: BacktestResult) -> Figures:
    """Every figure of ``result`` (see the module doc for the definitions)."""
    start = result.starting_balance
    final = result.equity[-1].equity if result.equity else start
    dd, dd_amount, peak_ms, trough_ms = _max_drawdown(result.equity, start, result.start_ms)
    outcomes: dict[str, int] = {}
    for order in result.orders:
        outcomes[order.outcome] = outcomes.get(order.outcome, 0) + 1
    filled_ids = {f.cl_ord_id for f in result.fills if f.qty > 0}
    return Figures(
        starting_balance=start,
        final_equity=final,
        total_return=_ratio(final - start, start),
        max_drawdown=dd,
        max_drawdown_amount=dd_amount,
        max_drawdown_peak_ms=peak_ms,
        max_drawdown_trough_ms=trough_ms,
        exposure_time=exposure_fraction(result.equity, result.start_ms, result.end_ms),
        orders_total=len(result.orders),
        orders_placed=outcomes.get("accepted", 0),
        orders_filled=sum(1 for o in result.orders if o.cl_ord_id in filled_ids),
        orders_refused=outcomes.get("rejected_local", 0),
        orders_rejected=outcomes.get("rejected", 0),
        orders_failed=outcomes.get("failed", 0),
        fills=len(result.fills),
        traded_notional=sum((_value(f) for f in result.fills), _ZERO),
        fees=result.fees,
        realized_pnl=result.realized_pnl,
        unrealized_pnl=result.unrealized_pnl,
    )
