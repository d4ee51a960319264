"""The backtest report: the summary printed at the end, and the files of ``--report DIR``.

``DIR`` receives ``summary.json`` (every figure by its plain name with its raw value, the trades'
net PnL per rule and strategy, the counts by reason and code, the final positions, the run's
description, its notes: gaps allowed through, warnings), ``orders.csv``, ``fills.csv`` (each fill
with the strategy and rule of its order), ``trades.csv`` (the round trips of
:mod:`botkit.backtest.trades`), ``report.html`` (the interactive charts and every trade, order
and fill: :mod:`botkit.backtest.report_page`) and ``index.html``, the overview that links the
rest; nothing outside the folder is needed. Every file is a pure function of the
:class:`~botkit.backtest.result.BacktestResult` and the candles it replayed: the same run gives
the same bytes.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from botkit.backtest.bars import Bar
from botkit.backtest.metrics import (
    Figures,
    compute_figures,
    format_duration,
    result_trades,
    show_figure,
)
from botkit.backtest.report_html import render_html
from botkit.backtest.report_page import ChartData, OrderFields, order_fields, render_page
from botkit.backtest.result import BacktestResult, FillRow, OrderRow
from botkit.backtest.trades import RuleRow, Trade, attribute
from botkit.timeparse import format_interval, format_time

__all__ = [
    "FILL_COLUMNS",
    "ORDER_COLUMNS",
    "REPORT_FILES",
    "TRADE_COLUMNS",
    "chart_from_prices",
    "render_rules",
    "render_summary",
    "summary_data",
    "write_report",
]

REPORT_FILES = (
    "summary.json",
    "orders.csv",
    "fills.csv",
    "trades.csv",
    "report.html",
    "index.html",
)
ORDER_COLUMNS = ("time", "time_ms", "strategy", "rule", "clOrdId", "symbol", "side", "type",
                 "px", "sz", "outcome", "code", "msg", "reasons")  # fmt: skip
FILL_COLUMNS = ("time", "time_ms", "clOrdId", "symbol", "side", "px", "qty", "fee", "role",
                "posSide", "strategy", "rule")  # fmt: skip
TRADE_COLUMNS = ("trade", "symbol", "posSide", "side", "status", "entry_strategy", "entry_rule",
                 "exit_strategy", "exit_rule", "entry_rules", "entry_time", "exit_time",
                 "entry_time_ms", "exit_time_ms", "holding", "holding_ms", "qty", "entry_px",
                 "exit_px", "fills", "gross_pnl", "fees", "net_pnl")  # fmt: skip


def _text(value: Decimal | None) -> str:
    return "" if value is None else format(value, "f")


def _ranked(counts: Mapping[str, int]) -> dict[str, int]:
    """Most frequent first, then by name: a stable order for files and text."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _rule_rows(rows: Iterable[RuleRow]) -> list[dict[str, Any]]:
    return [
        {"key": r.key, "trades": r.trades, "wins": r.wins, "win_rate": _text(r.win_rate),
         "net_pnl": _text(r.net), "fees": _text(r.fees)}
        for r in rows
    ]  # fmt: skip


def _attribution(trades: Sequence[Trade], fig: Figures) -> dict[str, Any]:
    total = sum((t.net for t in trades), Decimal(0))
    return {
        "opened_by": _rule_rows(attribute(trades, "entry")),
        "closed_by": _rule_rows(attribute(trades, "exit")),
        "by_strategy": _rule_rows(attribute(trades, "strategy")),
        "trades_net_pnl": _text(total),
        "account_net_pnl": _text(fig.net_pnl),
        "difference": _text(fig.net_pnl - total),
    }


def summary_data(
    result: BacktestResult,
    figures: Figures | None = None,
    trades: Sequence[Trade] | None = None,
) -> dict[str, Any]:
    """What ``summary.json`` holds, as JSON-ready values (amounts as decimal strings)."""
    if trades is None:
        trades = result_trades(result)
    fig = figures or compute_figures(result, trades)
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
        "attribution": _attribution(trades, fig),
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


def render_rules(trades: Sequence[Trade], currency: str) -> list[str]:
    """The per-rule table of the printed summary: the trades by the rule that opened them and
    by the rule that closed them (each adds up to the trades' net PnL)."""
    if not trades:
        return []
    lines = [f"{'':<10} {'rule':<34} {'trades':>7} {'win rate':>9} {'net PnL':>12} {'fees':>10}"]
    for title, by in (("Opened by", "entry"), ("Closed by", "exit")):
        for i, r in enumerate(attribute(trades, by)):
            lines.append(
                f"{title if i == 0 else '':<10} {r.key:<34} {r.trades:>7,} "
                f"{show_figure('win_rate', str(r.win_rate), ' %'):>9} {_money(r.net):>12} "
                f"{_money(r.fees):>10}"
            )
    lines.append(f"{'':<10} (net of fees, in {currency}; a trade counts once in each table)")
    return lines


def render_summary(
    result: BacktestResult,
    figures: Figures | None = None,
    trades: Sequence[Trade] | None = None,
) -> str:
    """The summary printed at the end of a run (several lines, no trailing newline)."""
    if trades is None:
        trades = result_trades(result)
    f = figures or compute_figures(result, trades)
    cur = result.currency
    period = f"{format_time(result.start_ms)} → {format_time(result.end_ms)}"

    def show(name: str) -> str:
        return show_figure(name, f.as_dict()[name], " %")

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
        f"{cur} (before fees)",
        f"Net PnL    {_money(f.net_pnl)} {cur} = realized + unrealized − fees "
        f"(realized after fees {_money(f.realized_pnl - f.fees)})",
        f"Equity     {_money(f.starting_balance)} → {_money(f.final_equity)} {cur}  "
        f"return {_percent(f.total_return)} · annualised {show('annualised_return')}",
        f"Risk       Sharpe {show('sharpe')} · Sortino {show('sortino')} · Calmar "
        f"{show('calmar')}  (per candle, annualised, risk-free 0)",
    ]
    drawdown = (
        f"Drawdown   max {f.max_drawdown * 100:.2f} % ({_money(f.max_drawdown_amount)} {cur})"
    )
    if f.max_drawdown_peak_ms is not None and f.max_drawdown_trough_ms is not None:
        drawdown += (
            f"  {format_time(f.max_drawdown_peak_ms)} → {format_time(f.max_drawdown_trough_ms)}"
        )
    if f.max_drawdown_duration_ms is not None:
        drawdown += f", lasted {format_duration(f.max_drawdown_duration_ms)}"
    lines.append(drawdown)
    lines.append(f"Exposure   {f.exposure_time * 100:.2f} % of the time in a position")
    still_open = sum(1 for t in trades if t.status == "open")
    lines.append(
        f"Trades     {f.trades:,} closed"
        + (f" (+{still_open} open)" if still_open else "")
        + f" · win rate {show('win_rate')} · profit factor {show('profit_factor')} · "
        f"expectancy {show('expectancy')} {cur}"
    )
    if f.trades:
        lines.append(
            f"{'':<10} best {show('best_trade')} · worst {show('worst_trade')} {cur} · "
            f"holding avg {show('avg_holding_ms')} · longest {show('longest_holding_ms')}"
        )
    lines.extend(render_rules(trades, cur))
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


def _write_csv(path: Path, header: Iterable[str], rows: Iterable[Sequence[object]]) -> None:
    table = [tuple(header), *rows]
    with path.open("w", encoding="utf-8", newline="") as out:
        text = _plain_csv(table)
        if text is not None:
            out.write(text)
        else:
            csv.writer(out, lineterminator="\n").writerows(table)


def _plain_csv(table: Sequence[Sequence[object]]) -> str | None:
    """The text ``csv.writer`` (minimal quoting, ``"\n"`` ends a line) writes of ``table``, by
    joining the cells, when none needs quoting: every cell a ``str`` (a ``TypeError`` else)
    holding no comma (the commas of the whole text are exactly the separators), no quote, no
    new line and no carriage return, the rows of one width of two cells or more (a lone empty
    cell is quoted); ``None`` otherwise, for the writer to write. A year's orders: about a
    quarter of the writer's time."""
    widths = set(map(len, table))
    if len(widths) != 1:
        return None
    width = widths.pop()
    if width < 2:
        return None
    try:
        text = "\n".join(map(",".join, table))  # type: ignore[arg-type]  # str cells, else None
    except TypeError:
        return None
    if (
        '"' in text
        or "\r" in text  # quoted or not depending on the Python version: the writer decides
        or text.count("\n") != len(table) - 1
        or text.count(",") != (width - 1) * len(table)
    ):
        return None
    return text + "\n"


def _order_row(o: OrderRow, when: str | None = None) -> list[object]:
    """The CSV row of ``o`` (``when``: its time's text, when known)."""
    return [
        format_time(o.time_ms) if when is None else when, o.time_ms, o.strategy, o.rule,
        o.cl_ord_id, o.symbol, o.side, o.type, _text(o.px), _text(o.sz), o.outcome, o.code,
        o.msg, "; ".join(o.reasons),
    ]  # fmt: skip


def _order_rows(orders: Iterable[OrderRow]) -> Iterator[list[object]]:
    """:func:`_order_row` of each order, the time's text made once for the orders of one
    cycle (they share it)."""
    last_ms: int | None = None
    when = ""
    for o in orders:
        if o.time_ms != last_ms:
            last_ms, when = o.time_ms, format_time(o.time_ms)
        yield _order_row(o, when)


def _order_table(fields: OrderFields) -> Iterator[tuple[object, ...]]:
    """The rows of :func:`_order_rows` made from the orders' fields (:func:`order_fields`,
    shared with the page): the time's text once per distinct time and the size's once per
    size object (a year's ~120k orders hold a few of each; a Decimal's text keeps its
    exponent, so sizes of equal value are not shared), every cell a text (an int and ``None``
    as the writer writes them), the rows zipped from the columns."""
    f = fields
    whens = {t: format_time(t) for t in set(f.times)}
    ids_of_sizes = list(map(id, f.sizes))  # the orders hold every size object meanwhile
    sizes = {k: _text(sz) for k, sz in dict(zip(ids_of_sizes, f.sizes, strict=True)).items()}
    return zip(
        map(whens.__getitem__, f.times),
        map(str, f.times),
        f.strategies,
        f.rules,
        f.ids,
        f.symbols,
        f.sides,
        f.types,
        f.px,
        map(sizes.__getitem__, ids_of_sizes),
        f.outcomes,
        f.codes,
        ["" if msg is None else msg for msg in f.msgs],
        map("; ".join, f.reasons),
        strict=True,
    )


def _fill_row(f: FillRow, result: BacktestResult) -> list[object]:
    # every cell a text (the int as the writer writes it): the row is joined (_plain_csv)
    return [
        format_time(f.time_ms), str(f.time_ms), f.cl_ord_id, f.symbol or result.symbol, f.side,
        _text(f.px), _text(f.qty), _text(f.fee), f.role, f.pos_side, f.strategy, f.rule,
    ]  # fmt: skip


def _trade_row(t: Trade) -> list[object]:
    # every cell a text (the ints as the writer writes them): the row is joined (_plain_csv)
    return [
        str(t.number), t.symbol, t.pos_side, t.side, t.status, t.entry.strategy, t.entry.rule,
        t.exit.strategy, t.exit.rule, " ".join(t.entry_rules), format_time(t.entry_ms),
        format_time(t.exit_ms), str(t.entry_ms), str(t.exit_ms), format_duration(t.holding_ms),
        str(t.holding_ms), _text(t.qty), _text(t.entry_px), _text(t.exit_px), str(t.fills),
        _text(t.gross), _text(t.fees), _text(t.net),
    ]  # fmt: skip


def chart_from_prices(result: BacktestResult) -> ChartData:
    """Candles rebuilt from the result's price points (one candle per interval: the points'
    first, highest, lowest and last), for a caller without the candles themselves."""
    width = result.interval_ms or 60_000
    bars: list[Bar] = []
    for t, px in result.prices:
        start = t - t % width
        if bars and bars[-1].time_ms == start:
            last = bars[-1]
            bars[-1] = Bar(start, last.open, max(last.high, px), min(last.low, px), px,
                           last.volume)  # fmt: skip
        else:
            bars.append(Bar(start, px, px, px, px, Decimal(0)))
    return ChartData(result.symbol, width, bars)


def write_report(
    result: BacktestResult,
    directory: str | Path,
    figures: Figures | None = None,
    trades: Sequence[Trade] | None = None,
    extra: Mapping[str, Any] | None = None,
    chart: ChartData | None = None,
    parts: Sequence[tuple[str, Figures]] = (),
    account: str | None = None,
) -> list[Path]:
    """Write every report file into ``directory`` (created); returns their paths. ``figures``
    and ``trades``: the result's, when the caller has them already; ``extra``: more keys for
    ``summary.json`` (a portfolio run's ``symbols``); ``chart``: the candles (and indicators)
    of the symbol to draw — without it, candles rebuilt from the result's price points
    (:func:`chart_from_prices`); ``parts``: a portfolio account's symbols and their figures,
    listed and linked (``SYMBOL/``) in ``index.html``; ``account``: for one symbol of a
    portfolio, its ``index.html``'s link back to the account's page."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    if trades is None:
        trades = result_trades(result)
    if figures is None:
        figures = compute_figures(result, trades)
    data = summary_data(result, figures, trades)
    data.update(extra or {})
    (folder / "summary.json").write_text(
        json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    fields = order_fields(result.orders)  # once, for the CSV and the page
    _write_csv(folder / "orders.csv", ORDER_COLUMNS, _order_table(fields))
    _write_csv(folder / "fills.csv", FILL_COLUMNS, (_fill_row(f, result) for f in result.fills))
    _write_csv(folder / "trades.csv", TRADE_COLUMNS, map(_trade_row, trades))
    summary = render_summary(result, figures, trades)
    page = render_page(
        result,
        chart if chart is not None else chart_from_prices(result),
        trades,
        summary,
        links=("index.html", "summary.json", "trades.csv", "orders.csv", "fills.csv"),
        fields=fields,
    )
    (folder / "report.html").write_text(page, encoding="utf-8")
    html = render_html(result, figures, summary, trades, parts, account)
    (folder / "index.html").write_text(html, encoding="utf-8")
    return [folder / name for name in REPORT_FILES]
