"""Parameter sweeps: the grid of a strategy's ``params:`` values, one backtest per variant.

``--sweep dip=0.003,0.004 --sweep rungs=8,12`` is a grid of 2 × 2 variants. Each variant is an
independent task — :func:`botkit.app.backtest.run_variant` takes the run's
:class:`BacktestOptions` with that variant's ``params`` and returns its figures — so the
variants run in parallel processes (:class:`concurrent.futures.ProcessPoolExecutor`, one per
core by default) or on a Dask cluster (``--cluster``, :mod:`botkit.app.cluster`). The values
reach the strategies through the loader's ``params`` override: the files are never edited.
:func:`check_variants` checks every variant's values against the strategies before any runs (a
refused value is a usage error naming the variant). :func:`rank` orders the outcomes by a figure
(:data:`~botkit.backtest.metrics.FIGURE_NAMES`), best first; :func:`render_table` prints them
(percentages, times and durations as such, money with 2 decimals).
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from botkit.backtest.metrics import FIGURE_NAMES, show_figure
from botkit.backtest.setup import BacktestOptions, strategy_files
from botkit.errors import StrategyFileError, UsageError
from botkit.numbers import plain

__all__ = [
    "JOURNAL_NAME_MAX",
    "LOWER_IS_BETTER",
    "MAX_DIGITS",
    "MAX_VALUE",
    "MAX_VARIANTS",
    "MIN_VALUE",
    "TABLE_FIGURES",
    "VARIANTS",
    "Variant",
    "VariantOutcome",
    "check_value",
    "check_variants",
    "describe_variant",
    "grid",
    "journal_name",
    "parse_sweep",
    "rank",
    "render_table",
    "variant_folder",
    "write_sweep",
]

MAX_VARIANTS = 10_000
LOWER_IS_BETTER = frozenset(
    {
        "max_drawdown",
        "max_drawdown_amount",
        "max_drawdown_duration_ms",
        "fees",
        "orders_refused",
        "orders_rejected",
        "orders_failed",
    }
)
"""Figures where less is better; every other figure ranks the highest first."""

TABLE_FIGURES = ("return", "max_drawdown", "exposure_time", "orders_placed", "fills", "fees",
                 "realized_pnl", "unrealized_pnl", "final_equity")  # fmt: skip
"""The figures the table shows besides the ranking one."""

Variant = dict[str, Decimal]
"""One point of the grid: param key → value."""


def parse_sweep(specs: Sequence[str]) -> list[tuple[str, list[Decimal]]]:
    """``["dip=0.003,0.004", "rungs=8,12"]`` → ``[("dip", [...]), ("rungs", [...])]``.

    A key is a param name (every strategy defining it) or ``strategy.name``."""
    axes: list[tuple[str, list[Decimal]]] = []
    for spec in specs:
        key, eq, values = spec.partition("=")
        key = key.strip()
        if not eq or not key or not values.strip():
            raise UsageError(
                f"--sweep {spec!r}: write KEY=V1,V2,... (e.g. --sweep dip=0.003,0.004)"
            )
        if any(key == k for k, _ in axes):
            raise UsageError(f"--sweep {key} is given twice — list all its values in one --sweep")
        parsed: list[Decimal] = []
        for text in values.split(","):
            try:
                value = Decimal(text.strip())
            except InvalidOperation:
                value = Decimal("NaN")
            if not value.is_finite():
                raise UsageError(f"--sweep {key}: {text.strip()!r} is not a number")
            _check_size(key, text.strip(), value)
            if value not in parsed:
                parsed.append(value)
        axes.append((key, parsed))
    return axes


MAX_VALUE = Decimal("1e15")
MIN_VALUE = Decimal("1e-15")
MAX_DIGITS = 18


def _check_size(key: str, text: str, value: Decimal) -> None:
    check_value(key, text, value)


def check_value(key: str, text: str, value: Decimal, option: str = "--sweep") -> None:
    """A swept (or searched) value is a strategy setting printed in full in the table: at
    most 1e15 and at least 1e-15 in size (or zero), written with at most 18 digits."""
    _, digits, exponent = value.as_tuple()
    too_long = len(digits) > MAX_DIGITS or int(exponent) < -2 * MAX_DIGITS
    if too_long or (value and not MIN_VALUE <= value.copy_abs() <= MAX_VALUE):
        raise UsageError(
            f"{option} {key}: {text!r} is out of range — give values from 1e-15 to 1e15 in size "
            f"(or 0), written with at most {MAX_DIGITS} digits"
        )


def grid(axes: Sequence[tuple[str, Sequence[Decimal]]]) -> list[Variant]:
    """Every combination, the first axis varying slowest."""
    count = 1
    for _, values in axes:
        count *= len(values)
    if count > MAX_VARIANTS:
        raise UsageError(
            f"the sweep has {count:,} variants, more than {MAX_VARIANTS:,} — narrow it"
        )
    keys = [k for k, _ in axes]
    return [
        dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(v for _, v in axes))
    ]


def describe_variant(variant: Mapping[str, Decimal]) -> str:
    """``dip=0.003, rungs=8``: a variant as the user wrote its values."""
    return ", ".join(f"{k}={format(v, 'f')}" for k, v in variant.items())


def check_variants(base: BacktestOptions, variants: Sequence[Variant]) -> None:
    """Check every variant's strategy settings before any runs: each strategy file is read
    once (a problem of the files is raised as it is) and compiled with each distinct set of its
    values; the candles are not loaded. A value a strategy refuses, or a key none defines, is a
    :class:`UsageError` naming the variant and the first problem."""
    files = strategy_files(base)
    for variant in variants:
        try:
            files.load({**base.params, **variant})
        except (StrategyFileError, UsageError) as exc:
            problems = str(exc).splitlines()
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UsageError(
                f"--sweep variant {describe_variant(variant)}: {problems[0]}{more}"
            ) from None


@dataclass(frozen=True, slots=True)
class VariantOutcome:
    """One variant's figures (:meth:`~botkit.backtest.metrics.Figures.as_dict`) or its error."""

    index: int
    params: Mapping[str, Decimal]
    figures: Mapping[str, str | int | None]
    cycles: int = 0
    error: str = ""


def _sort_value(outcome: VariantOutcome, figure: str) -> Decimal:
    value = outcome.figures.get(figure)
    if value is None:
        return Decimal("-Infinity")
    number = Decimal(value)
    return -number if figure in LOWER_IS_BETTER else number


RANKABLE = tuple(
    f
    for f in FIGURE_NAMES
    if f not in ("starting_balance", "max_drawdown_peak_ms", "max_drawdown_trough_ms")
)
"""The figures a sweep can be ranked by: not the starting balance (the same in every variant)
nor the drawdown's instants (a time is neither better nor worse)."""


def rank(outcomes: Iterable[VariantOutcome], figure: str) -> list[VariantOutcome]:
    """Best first by ``figure`` (highest, or lowest for :data:`LOWER_IS_BETTER`); failed
    variants last; ties keep grid order."""
    if figure not in RANKABLE:
        raise UsageError(f"--rank {figure}: not a figure to rank by — one of {', '.join(RANKABLE)}")
    return sorted(outcomes, key=lambda o: (-_sort_value(o, figure), o.index))


def _cell(value: str | int | None, figure: str) -> str:
    """A figure as the printed summary shows it (:func:`~botkit.backtest.metrics.show_figure`:
    percentages, times, durations, money with 2 decimals); ``sweep.csv`` keeps the raw values."""
    return show_figure(figure, value)


def render_table(outcomes: Sequence[VariantOutcome], keys: Sequence[str], figure: str) -> str:
    """The ranked table: rank, the swept values, the ranking figure, then the usual ones."""
    shown = [figure, *(f for f in TABLE_FIGURES if f != figure)]
    headers = ["#", *keys, *shown]
    rows: list[list[str]] = []
    for place, o in enumerate(outcomes, 1):
        values = [plain(o.params[k]) if k in o.params else "-" for k in keys]
        cells = [_cell(o.figures.get(f), f) for f in shown]
        rows.append([str(place), *values, *cells])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]  # fmt: skip
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    errors = [(place, o) for place, o in enumerate(outcomes, 1) if o.error]
    lines += [f"#{place}: {o.error}" for place, o in errors]
    direction = "lowest" if figure in LOWER_IS_BETTER else "highest"
    return f"ranked by {figure} ({direction} first)\n" + "\n".join(lines)


VARIANTS = "variants"
"""The folder of a sweep's report holding one report folder per variant."""


def variant_folder(index: int, count: int) -> str:
    """``variants/007``: the report folder of the grid's variant ``index`` (from 0) of
    ``count``, relative to the sweep's report (at least 3 digits, so the names sort)."""
    return f"{VARIANTS}/{index + 1:0{max(3, len(str(count)))}d}"


JOURNAL_NAME_MAX = 200
"""A variant's journal named by its values past this many characters is named by its place."""


def journal_name(variant: Variant, index: int, count: int) -> str:
    """``dip=0.003,btc-exits.take=0.05.sqlite``: the journal of the grid's variant ``index``
    (from 0) of ``count`` in a sweep's ``--journal`` folder, named by its swept values in the
    grid's order (a character other than a letter, a digit or ``_ . , = + -`` as ``_``); past
    :data:`JOURNAL_NAME_MAX` characters by its place in the grid (``variant-007.sqlite``)."""
    text = ",".join(f"{key}={format(value, 'f')}" for key, value in variant.items())
    safe = re.sub(r"[^A-Za-z0-9_.,=+-]", "_", text)
    if not safe or len(safe) > JOURNAL_NAME_MAX:
        return f"variant-{index + 1:0{max(3, len(str(count)))}d}.sqlite"
    return f"{safe}.sqlite"


def write_sweep(
    outcomes: Sequence[VariantOutcome], keys: Sequence[str], figure: str, directory: str | Path
) -> Path:
    """``DIR/sweep.csv``: one row per variant in ranked order — rank, the swept values, every
    figure (:data:`FIGURE_NAMES`), cycles, error, its report's folder (when written)."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sweep.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            ["rank", *keys, *FIGURE_NAMES, "cycles", "error", "report", f"ranked_by={figure}"]
        )
        for place, o in enumerate(outcomes, 1):
            values = [format(o.params[k], "f") if k in o.params else "" for k in keys]
            figures = ["" if o.figures.get(f) is None else o.figures[f] for f in FIGURE_NAMES]
            report = variant_folder(o.index, len(outcomes))
            report = report if (folder / report / "summary.json").is_file() else ""
            writer.writerow([place, *values, *figures, o.cycles, o.error, report, ""])
    return path
