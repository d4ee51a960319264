"""The backtest report: the summary printed at the end, and the files of ``--report DIR``.

``DIR`` receives ``summary.json`` (every figure, the counts by reason and code, the final
positions, the run's description, its notes: gaps allowed through, warnings), ``orders.csv``,
``fills.csv``, ``equity.png``, ``drawdown.png``, ``price.png`` (price with buys ▲ and sells
▼) and ``index.html``, which shows them together and links the rest; it needs nothing
outside the folder. Every file is a pure function of the
:class:`~botkit.backtest.result.BacktestResult`: the same result gives the same bytes.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from botkit.backtest import charts
from botkit.backtest.metrics import Figures, compute_figures
from botkit.backtest.report_html import render_html
from botkit.backtest.result import BacktestResult, FillRow, OrderRow
from botkit.timeparse import format_interval, format_time

__all__ = [
    "FILL_COLUMNS",
    "ORDER_COLUMNS",
    "REPORT_FILES",
    "render_summary",
    "summary_data",
    "write_report",
]

REPORT_FILES = (
    "summary.json",
    "orders.csv",
    "fills.csv",
    "equity.png",
    "drawdown.png",
    "price.png",
    "index.html",
)
ORDER_COLUMNS = ("time", "time_ms", "strategy", "rule", "clOrdId", "symbol", "side", "type",
                 "px", "sz", "outcome", "code", "msg", "reasons")  # fmt: skip
FILL_COLUMNS = ("time", "time_ms", "clOrdId", "symbol", "side", "px", "qty", "fee", "role")


def _text(value: Decimal | None) -> str:
    return "" if value is None else format(value, "f")


def _ranked(counts: Mapping[str, int]) -> dict[str, int]:
    """Most frequent first, then by name: a stable order for files and text."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def summary_data(result: BacktestResult, figures: Figures | None = None) -> dict[str, Any]:
    """What ``summary.json`` holds, as JSON-ready values (amounts as decimal strings)."""
    fig = figures or compute_figures(result)
    peak, trough = fig.max_drawdown_peak_ms, fig.max_drawdown_trough_ms
    return {
        "symbol": result.symbol,
        "interval": format_interval(result.interval_ms),
        "period": {
            "start": format_time(result.start_ms),
            "end": format_time(result.end_ms),
            "start_ms": result.start_ms,
            "end_ms": result.end_ms,
        },
        "candles": result.candles,
        "currency": result.currency,
        "figures": fig.as_dict(),
        "max_drawdown_from": None if peak is None else format_time(peak),
        "max_drawdown_to": None if trough is None else format_time(trough),
        "by_rule": {rule: dict(counts) for rule, counts in result.by_rule.items()},
        "refused_by_reason": _ranked(result.refused_by_reason),
        "rejected_by_code": _ranked(result.rejected_by_code),
        "final_positions": [
            {
                "symbol": p.symbol,
                "posSide": p.pos_side,
                "qty": _text(p.qty),
                "avgPx": _text(p.avg_px),
                "unrealizedPnl": _text(p.unrealized_pnl),
            }
            for p in result.final_positions
        ],
        "run": dict(result.meta),
        "notes": list(result.notes),
        "files": list(REPORT_FILES),
    }


def _money(value: Decimal) -> str:
    return f"{value:,.2f}"


def _percent(ratio: Decimal) -> str:
    return f"{ratio * 100:+.2f} %" if ratio else "0.00 %"


def _counts(counts: Mapping[str, int]) -> str:
    return " · ".join(f"{k} {v:,}" for k, v in _ranked(counts).items()) or "none"


def render_summary(result: BacktestResult, figures: Figures | None = None) -> str:
    """The summary printed at the end of a run (several lines, no trailing newline)."""
    f = figures or compute_figures(result)
    cur = result.currency
    period = f"{format_time(result.start_ms)} → {format_time(result.end_ms)}"
    lines = [
        f"Backtest   {result.symbol} {format_interval(result.interval_ms)}  {period}  "
        f"({result.candles:,} candles)",
        f"Orders     placed {f.orders_placed:,} · filled {f.orders_filled:,} · refused "
        f"{f.orders_refused:,} · rejected {f.orders_rejected:,} · failed {f.orders_failed:,}  "
        f"({f.fills:,} fills, {_money(f.traded_notional)} {cur} traded)",
        f"Refused    {_counts(result.refused_by_reason)}",
        f"Rejected   {_counts(result.rejected_by_code)}",
        f"Fees       {_money(f.fees)} {cur}",
        f"PnL        realized {_money(f.realized_pnl)} · unrealized {_money(f.unrealized_pnl)} "
        f"{cur}",
        f"Equity     {_money(f.starting_balance)} → {_money(f.final_equity)} {cur}  "
        f"return {_percent(f.total_return)}",
    ]
    drawdown = (
        f"Drawdown   max {f.max_drawdown * 100:.2f} % ({_money(f.max_drawdown_amount)} {cur})"
    )
    if f.max_drawdown_peak_ms is not None and f.max_drawdown_trough_ms is not None:
        drawdown += (
            f"  {format_time(f.max_drawdown_peak_ms)} → {format_time(f.max_drawdown_trough_ms)}"
        )
    lines.append(drawdown)
    lines.append(f"Exposure   {f.exposure_time * 100:.2f} % of the time in a position")
    for i, (rule, counts) in enumerate(result.by_rule.items()):
        lines.append(
            f"{'Rules' if i == 0 else '':<10} {rule}: placed {counts.get('placed', 0):,}"
            f" · cancelled {counts.get('cancelled', 0):,} · replaced {counts.get('replaced', 0):,}"
        )
    for p in result.final_positions:
        lines.append(
            f"Position   {p.symbol} {p.pos_side} {_text(p.qty)} @ {_text(p.avg_px) or '-'}  "
            f"unrealized {_money(p.unrealized_pnl)} {cur}"
        )
    for i, note in enumerate(result.notes):
        lines.append(f"{'Notes' if i == 0 else '':<10} {note}")
    return "\n".join(lines)


def _write_csv(path: Path, header: Iterable[str], rows: Iterable[Iterable[object]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def _order_row(o: OrderRow) -> list[object]:
    return [
        format_time(o.time_ms), o.time_ms, o.strategy, o.rule, o.cl_ord_id, o.symbol, o.side,
        o.type, _text(o.px), _text(o.sz), o.outcome, o.code, o.msg, "; ".join(o.reasons),
    ]  # fmt: skip


def _fill_row(f: FillRow, result: BacktestResult) -> list[object]:
    return [
        format_time(f.time_ms), f.time_ms, f.cl_ord_id, f.symbol or result.symbol, f.side,
        _text(f.px), _text(f.qty), _text(f.fee), f.role,
    ]  # fmt: skip


def write_report(result: BacktestResult, directory: str | Path) -> list[Path]:
    """Write every report file into ``directory`` (created); returns their paths."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    figures = compute_figures(result)
    data = summary_data(result, figures)
    (folder / "summary.json").write_text(
        json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    _write_csv(folder / "orders.csv", ORDER_COLUMNS, map(_order_row, result.orders))
    _write_csv(folder / "fills.csv", FILL_COLUMNS, (_fill_row(f, result) for f in result.fills))
    charts.draw_charts(result, folder)
    html = render_html(result, figures, render_summary(result, figures))
    (folder / "index.html").write_text(html, encoding="utf-8")
    return [folder / name for name in REPORT_FILES]
