"""``botkit backtest compare``: the figures of two or more backtest reports side by side.

A run is a report folder written by ``botkit backtest --report DIR`` (a sweep's variants are
such folders too: ``DIR/variants/NNN``); its ``summary.json`` holds every figure by its plain
name. :func:`load_run` reads one and refuses anything else with one line saying what to give.
:func:`render_compare` prints the runs' descriptions and one row per figure: each run's value
as the summary shows it (percentages, instants as ISO times, durations as durations, money
with 2 decimals) and each later run's difference from the first (percentage points, signed
durations and amounts). :func:`write_compare` writes ``compare.csv`` (raw values and
differences), ``compare.png`` (the main figures as bars, one panel each) and ``compare.html``
(the table and the chart in one self-contained page: inline CSS, the PNG inlined, links to
each run's own report). The same reports give the same bytes.
"""

from __future__ import annotations

import base64
import csv
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation
from html import escape
from pathlib import Path
from typing import Any

import matplotlib as mpl
from matplotlib import style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from botkit.backtest.metrics import (
    DURATIONS,
    FIGURE_NAMES,
    INSTANTS,
    PERCENTAGES,
    format_duration,
    show_figure,
)
from botkit.errors import UsageError

__all__ = [
    "COMPARE_FILES",
    "PLOT_FIGURES",
    "Run",
    "difference",
    "figure_rows",
    "load_run",
    "load_runs",
    "render_compare",
    "write_compare",
]

COMMAND = "botkit backtest compare"
SUMMARY = "summary.json"
COMPARE_FILES = ("compare.csv", "compare.png", "compare.html")
PLOT_FIGURES = ("return", "annualised_return", "max_drawdown", "sharpe", "sortino",
                "calmar", "win_rate", "profit_factor", "expectancy", "exposure_time", "net_pnl",
                "fees")  # fmt: skip
"""The figures ``compare.png`` draws (the table has them all)."""

_WHAT = "give report folders written by 'botkit backtest --report DIR'"

Value = str | int | None


@dataclass(frozen=True, slots=True)
class Run:
    """One report folder: its label in the table, its path, its ``summary.json``."""

    label: str
    path: Path
    summary: Mapping[str, Any]

    @property
    def figures(self) -> Mapping[str, Value]:
        figures: Mapping[str, Value] = self.summary["figures"]
        return figures

    def describe(self) -> str:
        """``BTC_USDT_PERP 1m  2024-01-01T00:00:00Z → 2024-01-01T06:00:00Z (360 candles)``
        and the swept or given params."""
        s = self.summary
        text = f"{s.get('symbol', '?')} {s.get('interval', '?')}"
        period = s.get("period")
        if isinstance(period, dict):
            text += f"  {period.get('start', '?')} → {period.get('end', '?')}"
        if isinstance(s.get("candles"), int):
            text += f" ({s['candles']:,} candles)"
        params = (s.get("run") or {}).get("params")
        return f"{text}  params {params}" if params else text


def load_run(path: Path, label: str | None = None) -> Run:
    """The report in folder ``path`` (a path to its ``summary.json`` or ``index.html`` names
    the folder); a :class:`UsageError` of one line for anything that is not one."""
    folder = path.parent if path.is_file() and path.name in (SUMMARY, "index.html") else path
    if not folder.exists():
        raise UsageError(f"{COMMAND}: {path}: no such folder — {_WHAT}")
    if not folder.is_dir():
        raise UsageError(f"{COMMAND}: {path} is a file, not a report folder — {_WHAT}")
    summary_path = folder / SUMMARY
    if not summary_path.is_file():
        if (folder / "sweep.csv").is_file():
            raise UsageError(
                f"{COMMAND}: {path} is a sweep's report, not one run's — compare its variants "
                f"(its index.html lists them: {folder / 'variants'}/NNN)"
            )
        raise UsageError(f"{COMMAND}: {path} is not a backtest report (no {SUMMARY}) — {_WHAT}")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{COMMAND}: cannot read {summary_path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{COMMAND}: {summary_path} is not JSON ({exc}) — {_WHAT}".replace("\n", " ")
        ) from None
    if not isinstance(summary, dict) or not isinstance(summary.get("figures"), dict):
        raise UsageError(
            f"{COMMAND}: {summary_path} holds no figures — is it a backtest summary? {_WHAT}"
        )
    return Run(label or folder.name or str(folder), folder, summary)


def load_runs(paths: Sequence[Path]) -> list[Run]:
    """Every report of ``paths`` (at least two), labelled by their folder's name, or by the
    path as given where two folders share a name."""
    runs = [load_run(p) for p in paths]
    if len(runs) < 2:
        raise UsageError(f"{COMMAND}: give at least two report folders to compare")
    labels = [r.label for r in runs]
    if len(set(labels)) < len(labels):
        runs = [Run(str(p), r.path, r.summary) for p, r in zip(paths, runs, strict=True)]
    return runs


def _number(value: Value) -> Decimal | None:
    if value is None:
        return None
    try:
        number = Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        return None
    return number if number.is_finite() else None


def _signed_duration(ms: int) -> str:
    if ms == 0:
        return "0"
    return ("+" if ms > 0 else "-") + format_duration(abs(ms))


def difference(name: str, first: Value, other: Value) -> str:
    """``other − first`` for a person: percentage points for percentages, signed durations
    for durations and instants (how much later), signed counts and amounts; ``-`` when
    either is undefined."""
    a, b = _number(first), _number(other)
    if a is None or b is None:
        return "-"
    delta = b - a
    if name in INSTANTS or name in DURATIONS:
        return _signed_duration(int(delta))
    if delta == 0:
        return "0"
    if isinstance(first, int) and isinstance(other, int):
        return f"{int(delta):+,}"
    unit = ""
    if name in PERCENTAGES:
        delta, unit = delta * 100, " pp"
    text = f"{delta:+,.2f}"
    if not text.strip("+-0.,"):  # a change too small for 2 decimals is not shown as none
        text = format(Context(prec=2).plus(delta).normalize(), "+f")  # 2 significant digits
    return text + unit


def _show(name: str, value: Value) -> str:
    try:
        return show_figure(name, value, " %")
    except (InvalidOperation, TypeError, ValueError):
        return str(value)  # a value this version does not know how to show: as written


def _names(runs: Sequence[Run]) -> list[str]:
    """Every figure any run has: botkit's order first, then the others (a newer or older
    version's) by name."""
    found = {name for r in runs for name in r.figures}
    return [n for n in FIGURE_NAMES if n in found] + sorted(found - set(FIGURE_NAMES))


def figure_rows(runs: Sequence[Run]) -> list[list[str]]:
    """One row per figure: its name, each run's value shown, each later run's difference."""
    first = runs[0]
    rows = []
    for name in _names(runs):
        values = [_show(name, r.figures.get(name)) for r in runs]
        deltas = [difference(name, first.figures.get(name), r.figures.get(name)) for r in runs[1:]]
        rows.append([name, *values, *deltas])
    return rows


def _headers(runs: Sequence[Run]) -> list[str]:
    return ["figure", *(r.label for r in runs), *(f"{r.label} − {runs[0].label}" for r in runs[1:])]


def _notes(runs: Sequence[Run]) -> list[str]:
    notes = []
    for what, key in (("symbols", "symbol"), ("intervals", "interval"), ("periods", "period")):
        if len({json.dumps(r.summary.get(key), sort_keys=True) for r in runs}) > 1:
            notes.append(f"the runs cover different {what}: compare with care")
    return notes


def render_compare(runs: Sequence[Run]) -> str:
    """The printed comparison: the runs, then the aligned table (no trailing newline)."""
    lines = ["Runs"]
    width = max(len(r.label) for r in runs)
    for r in runs:
        lines.append(f"  {r.label:<{width}}  {r.path}")
        lines.append(f"  {'':<{width}}  {r.describe()}")
    lines.extend(f"note: {n}" for n in _notes(runs))
    headers = _headers(runs)
    rows = figure_rows(runs)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    lines.append("")

    def line(cells: Sequence[str]) -> str:
        out = [cells[0].ljust(widths[0])]
        out += [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join(out).rstrip()

    lines.append(line(headers))
    lines.extend(line(row) for row in rows)
    return "\n".join(lines)


# --- the files ----------------------------------------------------------------------------------


def _write_csv(runs: Sequence[Run], path: Path) -> None:
    first = runs[0]
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(_headers(runs))
        for name in _names(runs):
            raw = [r.figures.get(name) for r in runs]
            deltas = []
            for r in runs[1:]:
                a, b = _number(first.figures.get(name)), _number(r.figures.get(name))
                deltas.append("" if a is None or b is None else format(b - a, "f"))
            writer.writerow([name, *("" if v is None else v for v in raw), *deltas])


def _plot_value(name: str, value: Value) -> float | None:
    number = _number(value)
    if number is None:
        return None
    return float(number * 100 if name in PERCENTAGES else number)


def _draw(runs: Sequence[Run], path: Path) -> None:
    """``compare.png``: the figures of :data:`PLOT_FIGURES`, one group of bars each (a bar per
    run, in the runs' colours), each group scaled to its largest value and labelled with the
    values as the table shows them."""
    colors = ["#2c5d8f", "#d9822b", "#1a9850", "#8e44ad", "#c0392b", "#7f8c8d"]
    n = len(runs)
    step = n + 1
    rc: dict[RcKeyType, Any] = {"font.size": 8.0, "axes.grid": True, "grid.alpha": 0.3}
    with style.context("default"), mpl.rc_context(rc):
        fig = Figure(figsize=(10.0, 1.0 + 0.17 * step * len(PLOT_FIGURES)), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.18, 0.06, 0.64, 0.86))
        for i, name in enumerate(PLOT_FIGURES):
            values = [_plot_value(name, r.figures.get(name)) for r in runs]
            scale = max((abs(v) for v in values if v is not None), default=0.0) or 1.0
            for j, (run, value) in enumerate(zip(runs, values, strict=True)):
                y = -(i * step + j)
                width = 0.0 if value is None else value / scale
                label = run.label if i == 0 else None
                ax.barh(y, width, color=colors[j % len(colors)], height=0.8, label=label)
                ax.annotate(_show(name, run.figures.get(name)), (width, y),
                            xytext=(3 if width >= 0 else -3, 0), textcoords="offset points",
                            va="center", ha="left" if width >= 0 else "right",
                            fontsize=7)  # fmt: skip
        ax.set_yticks([-(i * step + (n - 1) / 2) for i in range(len(PLOT_FIGURES))],
                      [f"{m} (%)" if m in PERCENTAGES else m for m in PLOT_FIGURES])  # fmt: skip
        ax.set_xlim(-1.45, 1.45)
        ax.set_xticks([])
        ax.axvline(0.0, color="grey", linewidth=0.8)
        ax.set_title("Backtests compared (each figure's bars scaled to its largest value)",
                     loc="left")  # fmt: skip
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
        fig.savefig(path, format="png", dpi=100, metadata={"Software": None})


_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #1d2733; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border-bottom: 1px solid #dde2e7; padding: .2em .7em; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
img { width: 100%; max-width: 1100px; display: block; margin: .6em 0; }
.muted { color: #6b7785; }
""".strip()


def _link(run: Run, out: Path) -> str:
    target = run.path / "index.html"
    try:
        href = Path(os.path.relpath(target, out)).as_posix()
    except ValueError:  # another drive (Windows): the absolute path
        href = target.resolve().as_uri()
    return f'<a href="{escape(href)}">{escape(run.label)}</a>'


def _html(runs: Sequence[Run], out: Path, png: bytes) -> str:
    headers = _headers(runs)
    head = "".join(
        f"<th{'' if i == 0 else ' class=n'}>{escape(h)}</th>" for i, h in enumerate(headers)
    )
    body = "\n".join(
        "<tr>"
        + "".join(
            f"<td>{escape(c)}</td>" if i == 0 else f'<td class="n">{escape(c)}</td>'
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in figure_rows(runs)
    )
    described = "\n".join(
        f"<tr><td>{_link(r, out)}</td><td>{escape(r.describe())}</td>"
        f"<td class=muted>{escape(str(r.path))}</td></tr>"
        for r in runs
    )
    notes = "".join(f'<p class="muted">Note: {escape(n)}.</p>' for n in _notes(runs))
    image = base64.b64encode(png).decode("ascii")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Backtests compared</title>
<style>
{_STYLE}
</style>
</head>
<body>
<h1>Backtests compared</h1>
<h2>Runs</h2>
<table>
{described}
</table>
{notes}
<h2>Figures</h2>
<p class="muted">Each run's figures; the last columns are each run's difference from
{escape(runs[0].label)} (percentage points for percentages, later or earlier for times).</p>
<table>
<tr>{head}</tr>
{body}
</table>
<h2>Chart</h2>
<img alt="the main figures of each run as bars" src="data:image/png;base64,{image}">
<p class="muted">compare.csv holds the raw values and differences.</p>
</body>
</html>
"""


def write_compare(runs: Sequence[Run], out: Path) -> list[Path]:
    """:data:`COMPARE_FILES` into folder ``out`` (created); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, png_path, html_path = (out / name for name in COMPARE_FILES)
    _write_csv(runs, csv_path)
    _draw(runs, png_path)
    html_path.write_text(_html(runs, out, png_path.read_bytes()), encoding="utf-8")
    return [csv_path, png_path, html_path]
