"""A sweep's report page: ``DIR/index.html`` of ``botkit backtest --sweep ... --report DIR``.

Each variant's own report is written into ``DIR/variants/NNN``
(:func:`~botkit.backtest.sweep.variant_folder`, NNN its place in the grid, from 001); the page
lists the variants ranked, each with its swept values, the ranking figure and the usual ones
(as the printed table shows them: percentages, times and durations as such) and a link to its
report, or its error. Inline CSS only: it opens offline from the folder, and the same outcomes
give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from botkit.backtest.metrics import show_figure
from botkit.backtest.sweep import (
    LOWER_IS_BETTER,
    TABLE_FIGURES,
    VARIANTS,
    VariantOutcome,
    variant_folder,
)
from botkit.numbers import plain

__all__ = ["render_sweep_page", "write_sweep_page"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #1d2733; padding: 0 1em; }
h1 { font-size: 1.4em; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border-bottom: 1px solid #dde2e7; padding: .2em .7em; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #6b7785; } .error { color: #b03a2e; }
""".strip()


def render_sweep_page(
    outcomes: Sequence[VariantOutcome],
    keys: Sequence[str],
    figure: str,
    count: int,
    folder: Path,
) -> str:
    """The page of the ranked ``outcomes`` (``count`` variants in the grid); a variant's link
    is there when its report is in ``folder``."""
    shown = [figure, *(f for f in TABLE_FIGURES if f != figure)]
    head = "".join(
        [
            "<th>#</th>",
            *(f"<th>{escape(k)}</th>" for k in keys),
            *(f'<th class="n">{escape(f)}</th>' for f in shown),
            "<th>report</th>",
        ]
    )
    rows = []
    for place, o in enumerate(outcomes, 1):
        cells = [f"<td>{place}</td>"]
        cells += [f"<td>{escape(plain(o.params[k]) if k in o.params else '-')}</td>" for k in keys]
        cells += [f'<td class="n">{escape(show_figure(f, o.figures.get(f)))}</td>' for f in shown]
        link = variant_folder(o.index, count)
        if (folder / link / "index.html").is_file():
            cells.append(f'<td><a href="{escape(link)}/index.html">{escape(link)}</a></td>')
        else:
            cells.append('<td class="muted">none</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
        if o.error:
            span = len(keys) + len(shown) + 2
            rows.append(f'<tr><td></td><td colspan="{span - 1}" class="error">'
                        f"{escape(o.error)}</td></tr>")  # fmt: skip
    direction = "lowest" if figure in LOWER_IS_BETTER else "highest"
    body = "\n".join(rows)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sweep: {len(outcomes)} variants ranked by {escape(figure)}</title>
<style>
{_STYLE}
</style>
</head>
<body>
<h1>Sweep: {len(outcomes)} variants ranked by {escape(figure)} ({direction} first)</h1>
<p class="muted">Each variant's whole report is in its folder under {VARIANTS}/ (linked);
sweep.csv holds every figure of every variant. Compare two of them with
<code>botkit backtest compare {VARIANTS}/001 {VARIANTS}/002</code>.</p>
<table>
<tr>{head}</tr>
{body}
</table>
</body>
</html>
"""


def write_sweep_page(
    outcomes: Sequence[VariantOutcome],
    keys: Sequence[str],
    figure: str,
    count: int,
    folder: Path,
) -> Path:
    """``folder/index.html`` (:func:`render_sweep_page`); its path."""
    path = folder / "index.html"
    path.write_text(render_sweep_page(outcomes, keys, figure, count, folder), encoding="utf-8")
    return path
