"""``index.html`` of a backtest report: the overview over the other report files.

It shows the summary, the figures (percentages, times and durations as such), the trades' net PnL by
the rule that opened and that closed them and by strategy, the run's description and notes (gaps,
warnings), the counts by reason and code and the final positions, and links ``report.html`` (the
interactive charts and every trade, order and fill), ``summary.json``, ``orders.csv``,
``fills.csv`` and ``trades.csv`` (a portfolio account's: each symbol's figures and its own
report). Inline CSS only: no script, no font, no CDN — it opens from the
folder offline. Every text is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from html import escape

from botkit.backtest.metrics import Figures, show_figure
from botkit.backtest.result import BacktestResult, PositionRow
from botkit.backtest.trades import RuleRow, Trade, attribute
from botkit.numbers import plain
from botkit.timeparse import format_interval, format_time

__all__ = ["render_html"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1060px;
       color: #1d2733; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.8em; }
pre { background: #f4f6f8; padding: .8em; overflow-x: auto; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border-bottom: 1px solid #dde2e7; padding: .2em .7em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.big { font-size: 1.1em; }
.muted { color: #6b7785; }
""".strip()


def _td(value: object) -> str:
    if isinstance(value, int | Decimal):
        return f'<td class="n">{escape(str(value))}</td>'
    return f"<td>{escape(str(value))}</td>"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(_td(v) for v in row) + "</tr>" for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}\n</table>"


def _pairs(pairs: Mapping[str, object], empty: str) -> str:
    if not pairs:
        return f'<p class="muted">{escape(empty)}</p>'
    return _table(("", ""), list(pairs.items()))


def _dec(value: Decimal | None) -> str:
    return "" if value is None else plain(value)


_POSITION_HEAD = ("symbol", "posSide", "qty", "avgPx", "unrealized PnL")
_RULE_HEAD = ("rule", "trades", "win rate", "net PnL", "fees")


def _position_row(p: PositionRow) -> list[object]:
    return [p.symbol, p.pos_side, _dec(p.qty), _dec(p.avg_px), _dec(p.unrealized_pnl)]


def _rules(rows: Sequence[RuleRow], empty: str) -> str:
    if not rows:
        return f'<p class="muted">{escape(empty)}</p>'
    body = [
        [r.key, r.trades, show_figure("win_rate", str(r.win_rate), " %"), _dec(r.net),
         _dec(r.fees)]
        for r in rows
    ]  # fmt: skip
    return _table(_RULE_HEAD, body)


def _symbols(parts: Sequence[tuple[str, Figures]], account: Figures) -> list[str]:
    """A portfolio account's table of its symbols: each one's figures and its own pages, then
    what they add up to beside the account's net PnL."""
    if not parts:
        return []
    head = "".join(
        f"<th>{h}</th>"
        for h in ("symbol", "net PnL", "return", "fees", "fills", "trades", "max drawdown", "")
    )
    rows = []
    for symbol, fig in parts:
        name, raw = escape(symbol), fig.as_dict()
        cells: list[object] = [show_figure(k, raw[k], " %") for k in ("net_pnl", "return", "fees")]
        cells += [fig.fills, fig.trades, show_figure("max_drawdown", raw["max_drawdown"], " %")]
        rows.append(
            f'<tr><td><a href="{name}/index.html">{name}</a></td>'
            + "".join(_td(v) for v in cells)
            + f'<td><a href="{name}/report.html">charts</a></td></tr>'
        )
    total = sum((fig.net_pnl for _, fig in parts), Decimal(0))
    rows.append(
        f"<tr><td>Σ symbols</td>{_td(show_figure('net_pnl', str(total), ' %'))}"
        f'<td colspan="6" class="muted">= account net PnL '
        f"{escape(show_figure('net_pnl', account.as_dict()['net_pnl'], ' %'))}</td></tr>"
    )
    return ["<h2>Symbols</h2>", f"<table>\n<tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>"]


def render_html(
    result: BacktestResult,
    figures: Figures,
    summary: str,
    trades: Sequence[Trade] = (),
    symbols: Sequence[tuple[str, Figures]] = (),
    account: str | None = None,
) -> str:
    """The page for ``result`` (``summary`` is the printed summary text, ``trades`` its round
    trips; ``symbols``: a portfolio account's symbols with their figures, each linked to its own
    report in ``SYMBOL/``; ``account``: for one symbol of a portfolio, the link back to the
    account's page)."""
    title = (
        f"Backtest {result.symbol} {format_interval(result.interval_ms)} "
        f"{format_time(result.start_ms)} → {format_time(result.end_ms)}"
    )
    refused = sorted(result.refused_by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
    rejected = sorted(result.rejected_by_code.items(), key=lambda kv: (-kv[1], kv[0]))
    raw = figures.as_dict()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f"<style>\n{_STYLE}\n</style></head>",
        "<body>",
        *(
            [f'<p><a href="{escape(account)}">← the account: every symbol together</a></p>']
            if account
            else []
        ),
        f"<h1>{escape(title)}</h1>",
        f"<pre>{escape(summary)}</pre>",
        '<p class="big"><a href="report.html">Charts, and every trade, order and fill</a>'
        f" ({len(trades):,} trades, {len(result.orders):,} orders, {len(result.fills):,} fills:"
        " candles with the indicators and the fills by rule, position, equity, drawdown; zoom,"
        " sort, filter)</p>",
        '<p>Files: <a href="summary.json">summary.json</a> · <a href="orders.csv">orders.csv</a>'
        ' · <a href="fills.csv">fills.csv</a> · <a href="trades.csv">trades.csv</a></p>',
        *_symbols(symbols, figures),
        "<h2>Figures</h2>",
        _pairs({k: show_figure(k, v, " %") for k, v in raw.items()}, "no figures"),
        "<h2>Net PnL by rule</h2>",
        '<p class="muted">Each trade counts once under the rule that opened it and once under '
        "the rule that closed it; net of fees. Each table adds up to the trades' net PnL.</p>",
        "<h3>Opened by</h3>",
        _rules(attribute(trades, "entry"), "no trade"),
        "<h3>Closed by</h3>",
        _rules(attribute(trades, "exit"), "no trade"),
        "<h3>By strategy (that opened them)</h3>",
        _rules(attribute(trades, "strategy"), "no trade"),
        "<h2>Run</h2>",
        _pairs(dict(result.meta), "no description"),
        "<h2>Notes</h2>",
        _notes(result.notes),
        "<h2>Refused by reason</h2>",
        _pairs(dict(refused), "no order was refused"),
        "<h2>Rejected by code</h2>",
        _pairs(dict(rejected), "no order was rejected"),
        "<h2>Final positions</h2>",
        _table(_POSITION_HEAD, [_position_row(p) for p in result.final_positions])
        if result.final_positions
        else '<p class="muted">flat at the end</p>',
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(parts)


def _notes(notes: Sequence[str]) -> str:
    if not notes:
        return '<p class="muted">nothing to note: no gaps, no warnings</p>'
    items = "\n".join(f"<li>{escape(n)}</li>" for n in notes)
    return f"<ul>\n{items}\n</ul>"
