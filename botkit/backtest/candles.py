"""Load a candle file (CSV or JSON lines) into a compact, checked, time-ordered series.

Layouts (docs/backtest.md):

* CSV with a header naming the columns ``time,open,high,low,close,volume`` (any order, extra
  columns ignored, ``volume`` optional). ``time`` is the candle's open time as Unix ms or
  ISO-8601 with a zone.
* JSON lines, one candle a line: an object with the same keys (numbers or decimal strings), or
  the exchange's array ``[low, high, open, close, amt, qty, tC, sT, cT]`` as ``botkit data
  fetch`` receives it (time = ``sT``, volume = ``qty``).

Prices are ``Decimal`` (never ``float``). Every problem is reported with its line
(``file:line: what — what to do``) and the file is refused: a row that does not parse, NaN or
infinity, a price that is not positive, high below low, open or close outside [low, high],
rows out of order, duplicate times, steps that are not whole intervals, and gaps (missing
candles) unless ``allow_gaps``. The interval is the most common step unless given, and at
least :data:`~botkit.backtest.path.MIN_INTERVAL_MS`. A file without candles, or a directory,
is refused too.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import numpy as np
import numpy.typing as npt

from botkit.backtest.bars import CSV_COLUMNS, Bar, CandleSeries, Gap
from botkit.backtest.candle_fast import csv_columns
from botkit.backtest.candle_parse import Problems, parse_lines
from botkit.backtest.columns import BarColumns, share_keys
from botkit.backtest.path import MIN_INTERVAL_MS
from botkit.errors import ConfigError, DataFileError, Location
from botkit.timeparse import format_interval, format_time

__all__ = ["CSV_COLUMNS", "Bar", "CandleSeries", "Gap", "load_candles"]

IntArray = npt.NDArray[np.int64]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Half a million new tuples would set off the cyclic collector again and again (it
    doubles the load time); none of them can form a cycle, so it waits until the end."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read(path: Path, problems: Problems) -> tuple[BarColumns, Sequence[int]]:
    """Parse every row; returns the candles and their line numbers (rows with problems left
    out). A plain CSV file goes the columnar way (:mod:`~botkit.backtest.candle_fast`), any
    other file row by row."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        _refuse(str(path), f"cannot be read ({exc.strerror})", "check the file's permissions")
    fast = csv_columns(raw)
    del raw
    if fast is not None:
        times, keys = fast
        return BarColumns(times, share_keys(keys)), range(2, 2 + len(times))
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            lines = handle.readlines()
    except UnicodeDecodeError as exc:
        problems.add(None, f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                     "give a CSV or JSON-lines file")  # fmt: skip
        return BarColumns.from_bars([]), []
    if lines:
        lines[0] = lines[0].lstrip("\ufeff")
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    last = len(lines)
    while last > first and not lines[last - 1].strip():
        last -= 1
    if first == last:
        problems.add(1, "the file has no candles", "write a header and candle rows")
        return BarColumns.from_bars([]), []
    with _gc_paused():
        bars, numbers = parse_lines(lines[first:last], first + 1, problems)
    return BarColumns.from_bars(bars), numbers


def _check_order(times: IntArray, lines: Sequence[int], problems: Problems) -> None:
    if len(times) < 2 or bool((np.diff(times) > 0).all()):
        return
    stamps = times.tolist()
    latest, latest_line = stamps[0], lines[0]
    seen_at: dict[int, int] = {}
    for t, line in zip(stamps[1:], lines[1:], strict=True):
        if t > latest:
            latest, latest_line = t, line
            continue
        if t == latest:
            problems.add(
                line,
                f"duplicate time {format_time(t)} (also at line {latest_line})",
                "keep one row per candle",
            )
            continue
        if not seen_at:  # where each time first occurs; built only when a file is out of order
            for s, n in zip(stamps, lines, strict=True):
                seen_at.setdefault(s, n)
        first = seen_at[t]
        if first < line:
            what = f"duplicate time {format_time(t)} (also at line {first})"
        else:
            what = (
                f"time {format_time(t)} is earlier than line {latest_line} ({format_time(latest)})"
            )
        problems.add(line, what, "sort the rows by time, one row per candle")


def _infer_interval(times: IntArray, source: str) -> int:
    steps = np.diff(times)
    values, counts = np.unique(steps[steps > 0], return_counts=True)
    if not len(values):
        _refuse(
            source,
            "cannot infer the candle interval from a single candle",
            "pass the interval (e.g. --interval 1m)",
        )
    return int(values[int(np.argmax(counts))])  # the most common; the shortest of a tie


def _refuse(source: str, message: str, hint: str) -> NoReturn:
    """Stop with one problem of the whole file (no line)."""
    raise DataFileError([ConfigError(message, where=Location(file=source), hint=hint)])


def _check_steps(
    times: IntArray, lines: Sequence[int], interval: int, problems: Problems
) -> list[Gap]:
    gaps: list[Gap] = []
    label = format_interval(interval)
    for at in np.flatnonzero(np.diff(times) != interval).tolist():
        i = at + 1
        prev, cur = int(times[i - 1]), int(times[i])
        step = cur - prev
        if step % interval:
            problems.add(
                lines[i],
                f"{format_time(cur)} is {format_interval(step)} after line {lines[i - 1]}, "
                f"not a whole number of {label} candles",
                f"align the rows to the {label} interval, or pass the right --interval",
            )
            continue
        gaps.append(Gap(prev, cur, step // interval - 1, lines[i]))
    return gaps


def load_candles(
    path: str | Path,
    *,
    interval_ms: int | None = None,
    start_ms: int | None = None,
    end_ms: int | None = None,
    allow_gaps: bool = False,
) -> CandleSeries:
    """Read, check and select the candles of ``path`` whose open time is in [start, end).

    Raises :class:`~botkit.errors.DataFileError` listing every problem with its line. Gaps
    inside the selected range are problems unless ``allow_gaps``; then they are kept in
    :attr:`CandleSeries.gaps` for the caller to report.
    """
    file = Path(path)
    source = str(path)
    if file.is_dir():
        _refuse(
            source,
            "is a directory, not a data file",
            "give the candle file itself (a CSV or JSON-lines file)",
        )
    if not file.is_file():
        _refuse(
            source,
            "no such data file",
            "check the path, or write one with 'botkit data synth' or 'botkit data fetch'",
        )
    problems = Problems(source)
    bars, lines = _read(file, problems)
    times = bars.times
    _check_order(times, lines, problems)
    problems.raise_if_any()
    interval = interval_ms if interval_ms is not None else _infer_interval(times, source)
    if interval < MIN_INTERVAL_MS:
        _refuse(
            source,
            f"the candle interval {format_interval(interval)} is shorter than the "
            f"{format_interval(MIN_INTERVAL_MS)} the backtest needs (four price points a candle)",
            "use longer candles, e.g. 1m",
        )
    lo = 0 if start_ms is None else int(np.searchsorted(times, start_ms, side="left"))
    hi = len(times) if end_ms is None else int(np.searchsorted(times, end_ms, side="left"))
    if lo >= hi:
        covered = f"{format_time(int(times[0]))} to {format_time(int(times[-1]))}"
        _refuse(
            source,
            "no candles in the selected period",
            f"the file covers {covered}; check --start and --end",
        )
    selected = bars[lo:hi] if (lo, hi) != (0, len(bars)) else bars
    selected_lines = lines[lo:hi]
    gaps = _check_steps(times[lo:hi], selected_lines, interval, problems)
    if gaps and not allow_gaps:
        for gap in gaps:
            problems.add(
                gap.line,
                f"gap: {gap.missing} candle{'s' if gap.missing > 1 else ''} missing between "
                f"{format_time(gap.after_ms)} and {format_time(gap.before_ms)}",
                "fill the missing candles, or pass --allow-gaps to proceed",
            )
    problems.raise_if_any()
    return CandleSeries(bars=selected, interval_ms=interval, source=source, gaps=tuple(gaps))
