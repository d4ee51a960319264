"""What ``botkit optimize`` prints and writes: the ranked trials (in-sample and out-of-sample
side by side), the best params as ready-to-paste ``params:`` blocks, and the study report —
``trials.csv``, ``history.png`` (the objective per trial), ``importance.png`` (each param's
share of the in-sample figure's variance) and ``index.html`` (offline: inline CSS, relative
links, no script). Charts use the backtest report's matplotlib setup (Agg, default style)."""

from __future__ import annotations

import csv
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from botkit.backtest.charts import _RC
from botkit.backtest.metrics import PERCENTAGES
from botkit.numbers import plain
from botkit.rules import Strategy

__all__ = [
    "Study",
    "TrialRow",
    "best_params_yaml",
    "rank_trials",
    "render_trials",
    "write_study_report",
]


@dataclass(frozen=True, slots=True)
class TrialRow:
    """One trial: its params, in-sample and out-of-sample means (``None`` when not reached),
    the (train, test) figure of each fold evaluated, and ``complete``/``pruned``/``failed``."""

    number: int
    state: str
    params: Mapping[str, Decimal]
    in_sample: Decimal | None
    out_of_sample: Decimal | None
    folds: tuple[tuple[str, str], ...] = ()
    error: str = ""


def rank_trials(rows: Sequence[TrialRow], *, maximize: bool, by: str = "oos") -> list[TrialRow]:
    """Complete trials best first by the out-of-sample (``oos``) or in-sample (``is``) figure,
    ties by trial number; pruned and failed trials after them, by number."""
    sign = -1 if maximize else 1

    def key(row: TrialRow) -> tuple[int, Decimal, int]:
        value = row.out_of_sample if by == "oos" else row.in_sample
        if row.state != "complete" or value is None:
            return (1, Decimal(0), row.number)
        return (0, sign * value, row.number)

    return sorted(rows, key=key)


def _cell(value: Decimal | None, figure: str) -> str:
    """Fractions (:data:`~botkit.backtest.metrics.PERCENTAGES`) in percent with 4 decimals (a
    short window moves little), other figures with 4 decimals; ``trials.csv`` keeps full
    precision."""
    if value is None:
        return "-"
    number = value * 100 if figure in PERCENTAGES else value
    text = f"{number:,.4f}"
    if text.startswith("-") and not text.strip("-0.,"):
        text = text[1:]
    return f"{text}%" if figure in PERCENTAGES else text


def render_trials(
    ranked: Sequence[TrialRow], keys: Sequence[str], objective: str, *, maximize: bool, by: str
) -> str:
    """The table: rank, trial, the params, in-sample and out-of-sample figure, state."""
    direction = "highest" if maximize else "lowest"
    which = "out-of-sample" if by == "oos" else "in-sample"
    headers = ["#", "trial", *keys, "in-sample", "out-of-sample", "state"]
    rows = [
        [str(place), str(r.number),
         *(plain(r.params[k]) if k in r.params else "-" for k in keys),
         _cell(r.in_sample, objective), _cell(r.out_of_sample, objective),
         r.state]
        for place, r in enumerate(ranked, 1)
    ]  # fmt: skip
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]  # fmt: skip
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines += [f"trial {r.number}: {r.error}" for r in ranked if r.error]
    return f"ranked by {which} {objective} ({direction} first)\n" + "\n".join(lines)


def best_params_yaml(best: TrialRow, strategies: Sequence[Strategy], header: str) -> str:
    """One ``params:`` block per strategy the best params reach (all its params, the found
    values in place), each under a comment naming its file; YAML documents split by ``---``."""
    blocks: list[str] = []
    for strategy in strategies:
        reached = {
            name
            for key in best.params
            for target, dot, name in [key.rpartition(".")]
            if name in strategy.params and (not dot or target == strategy.name)
        }
        if not reached:
            continue
        lines = [f"# {strategy.source} ({strategy.name})", "params:"]
        lines += [
            f"  {name}: {plain(value)}" + ("   # found" if name in reached else "")
            for name, value in strategy.params.items()
        ]
        blocks.append("\n".join(lines))
    return f"# {header}\n" + "\n---\n".join(blocks) + "\n"


def _history_png(rows: Sequence[TrialRow], objective: str, maximize: bool, path: Path) -> None:
    from matplotlib import rc_context, style

    with style.context("default"), rc_context(_RC):
        fig = Figure(figsize=(10.0, 3.6), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        done = [r for r in sorted(rows, key=lambda r: r.number) if r.in_sample is not None]
        xs = [r.number for r in done]
        ax.plot(xs, [float(r.in_sample or 0) for r in done], "o", label="in-sample", ms=4)
        ax.plot(xs, [float(r.out_of_sample or 0) for r in done], "s", label="out-of-sample",
                ms=4, mfc="none")  # fmt: skip
        best: list[float] = []
        for r in done:
            value = float(r.in_sample or 0)
            if r.state == "complete":
                best.append(value if not best else (max if maximize else min)(best[-1], value))
            else:
                best.append(best[-1] if best else value)
        ax.step(xs, best, where="post", label="best in-sample so far", lw=1.2)
        ax.set_xlabel("trial")
        ax.set_ylabel(objective)
        ax.legend(loc="best", fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format="png", dpi=100, metadata={"Software": None})


def _importance_png(importances: Mapping[str, float], path: Path) -> None:
    from matplotlib import rc_context, style

    with style.context("default"), rc_context(_RC):
        fig = Figure(figsize=(10.0, 0.6 + 0.4 * max(1, len(importances))), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        names = list(importances)[::-1]
        ax.barh(names, [importances[n] for n in names], color="#2c5d8f")
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of the in-sample figure's variance")
        fig.tight_layout()
        fig.savefig(path, format="png", dpi=100, metadata={"Software": None})


@dataclass(frozen=True, slots=True)
class Study:
    """What the study report shows: the ``ranked`` trials (by ``by``, ``oos`` or ``is``),
    the searched param ``keys``, the ``objective`` figure and its direction, each param's
    share of the variance, the best params block and the lines describing the study."""

    ranked: Sequence[TrialRow]
    keys: Sequence[str]
    objective: str
    maximize: bool
    by: str
    importances: Mapping[str, float]
    best_yaml: str
    description: Sequence[str]


def write_study_report(directory: str | Path, study: Study) -> list[Path]:
    """``DIR/best-params.yaml``, ``trials.csv``, ``history.png``, ``importance.png`` (when
    there is something to show) and ``index.html``; the files written."""
    ranked, keys = study.ranked, study.keys
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "best-params.yaml", folder / "trials.csv", folder / "history.png"]
    written[0].write_text(study.best_yaml, encoding="utf-8")
    folds = max((len(r.folds) for r in ranked), default=0)
    with written[1].open("w", encoding="utf-8", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        fold_heads = [f"fold{i}_{s}" for i in range(folds) for s in ("train", "test")]
        w.writerow(["rank", "trial", "state", *keys, "in_sample", "out_of_sample",
                    *fold_heads, "error"])  # fmt: skip
        for place, r in enumerate(ranked, 1):
            cells = [v for f in r.folds for v in f] + [""] * (2 * (folds - len(r.folds)))
            w.writerow([place, r.number, r.state,
                        *(format(r.params[k], "f") if k in r.params else "" for k in keys),
                        "" if r.in_sample is None else r.in_sample,
                        "" if r.out_of_sample is None else r.out_of_sample,
                        *cells, r.error])  # fmt: skip
    _history_png(ranked, study.objective, study.maximize, written[2])
    if study.importances:
        written.append(folder / "importance.png")
        _importance_png(study.importances, written[-1])
    index = folder / "index.html"
    index.write_text(_html(study), encoding="utf-8")
    written.append(index)
    return written


def _html(study: Study) -> str:
    e = html.escape
    table = render_trials(
        study.ranked, study.keys, study.objective, maximize=study.maximize, by=study.by
    ).splitlines()
    rows = "".join(
        "<tr>" + "".join(f"<td>{e(c)}</td>" for c in line.split()) + "</tr>"
        for line in table[2:]
        if not line.startswith("trial ")
    )
    head = "".join(f"<th>{e(h)}</th>" for h in table[1].split())
    imp = "".join(f"<li>{e(k)}: {v:.3f}</li>" for k, v in study.importances.items()) or (
        "<li>too few complete trials to say</li>"
    )
    chart = (
        '<p><img src="importance.png" alt="parameter importance"></p>' if study.importances else ""
    )
    desc = "".join(f"<li>{e(line)}</li>" for line in study.description)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>botkit optimize</title>
<style>body{{font:14px sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}pre{{background:#f4f4f4;padding:1em}}
</style></head><body>
<h1>botkit optimize</h1>
<ul>{desc}</ul>
<h2>Best params</h2><pre>{e(study.best_yaml)}</pre>
<h2>Objective history</h2><p><img src="history.png" alt="objective per trial"></p>
<h2>Parameter importance</h2><ul>{imp}</ul>{chart}
<h2>Trials</h2><p>{e(table[0])}</p><table><tr>{head}</tr>{rows}</table>
<p><a href="trials.csv">trials.csv</a> · <a href="best-params.yaml">best-params.yaml</a></p>
</body></html>
"""
