"""A portfolio run's report: the account's, and one per symbol.

``DIR`` receives the account's report (:func:`~botkit.backtest.report.write_report`: every
order, fill and trade of every symbol — ``trades.csv`` has a ``symbol`` column — and the
account's figures) whose ``summary.json`` adds ``symbols``: per symbol its figures and the
folder of its own report, ``DIR/SYMBOL/`` (the same files, cut to that symbol: its orders,
fills, trades and equity curve — the starting balance plus what the symbol booked).
:func:`render_parts` prints the per-symbol lines under the account's summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path

from botkit.backtest.metrics import Figures, compute_figures, result_trades
from botkit.backtest.report import write_report
from botkit.backtest.report_page import ChartData
from botkit.backtest.result import BacktestResult
from botkit.backtest.trades import Trade

__all__ = ["part_figures", "render_parts", "write_portfolio_report"]


def part_figures(parts: Mapping[str, BacktestResult]) -> dict[str, tuple[Figures, list[Trade]]]:
    """Each symbol's figures and trades."""
    out: dict[str, tuple[Figures, list[Trade]]] = {}
    for symbol, part in parts.items():
        trades = result_trades(part)
        out[symbol] = (compute_figures(part, trades), trades)
    return out


def render_parts(
    account: BacktestResult, parts: Mapping[str, BacktestResult], figures: Figures
) -> str:
    """One line per symbol (net PnL, return, fees, fills, trades, max drawdown), then what they
    add up to beside the account's net PnL."""
    cur = account.currency
    lines: list[str] = []
    total = Decimal(0)
    for symbol, (fig, _) in part_figures(parts).items():
        total += fig.net_pnl
        lines.append(
            f"{'Symbols' if not lines else '':<11}{symbol:<16} net PnL {fig.net_pnl:>12,.2f} "
            f"{cur}  return {fig.total_return * 100:.2f} %  fees {fig.fees:,.2f}  "
            f"fills {fig.fills:,}  trades {fig.trades:,}  max drawdown "
            f"{fig.max_drawdown * 100:.2f} %"
        )
    lines.append(
        f"{'':<11}{'Σ symbols':<16} net PnL {total:>12,.2f} {cur}  = account "
        f"{figures.net_pnl:,.2f} {cur}"
    )
    return "\n".join(lines)


def write_portfolio_report(
    account: BacktestResult,
    parts: Mapping[str, BacktestResult],
    directory: str | Path,
    figures: Figures | None = None,
    trades: Sequence[Trade] | None = None,
    charts: Sequence[ChartData] = (),
) -> list[Path]:
    """Write the account's report into ``directory`` and each symbol's into
    ``directory/SYMBOL`` (see the module doc); returns the paths written. ``charts``: the
    candles each symbol's ``report.html`` draws (the account's draws the first symbol's, with
    every symbol's rows in its tables)."""
    folder = Path(directory)
    by_symbol = {c.symbol: c for c in charts}
    symbols: dict[str, object] = {}
    listed: list[tuple[str, Figures]] = []
    written: list[Path] = []
    for symbol, (fig, part_trades) in part_figures(parts).items():
        chart = by_symbol.get(symbol)
        written += write_report(
            parts[symbol], folder / symbol, fig, part_trades, chart=chart, account="../index.html"
        )
        symbols[symbol] = {"report": f"{symbol}/index.html", "figures": fig.as_dict()}
        listed.append((symbol, fig))
    extra = {"symbols": symbols}
    first = None
    if charts:
        others = ", ".join(f"{c.symbol}/report.html" for c in charts)
        note = f"the chart shows {charts[0].symbol}; each symbol's own page: {others}"
        first = ChartData(charts[0].symbol, charts[0].interval_ms, charts[0].bars,
                          charts[0].indicators, (note, *charts[0].notes))  # fmt: skip
    account_files = write_report(
        account, folder, figures, trades, extra=extra, chart=first, parts=listed
    )
    return account_files + written
