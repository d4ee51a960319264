"""Write candles as CSV or JSON lines, in the layouts :mod:`botkit.backtest.candles` reads.

CSV: the header ``time,open,high,low,close,volume``, time as Unix ms, amounts as plain decimal
text. JSON lines: one object a line with the same keys, amounts as strings (so no reader turns
them into floats). The format follows the file's extension (``.jsonl`` / ``.ndjson`` → JSON
lines, anything else CSV). Output is a pure function of the bars: same bars, same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from botkit.backtest.bars import CSV_COLUMNS, Bar

__all__ = ["CandleFormat", "format_for", "write_candles"]

CandleFormat = Literal["csv", "jsonl"]

_JSONL_SUFFIXES = {".jsonl", ".ndjson"}


def format_for(path: str | Path) -> CandleFormat:
    """``"jsonl"`` for ``.jsonl`` / ``.ndjson`` files, else ``"csv"``."""
    return "jsonl" if Path(path).suffix.lower() in _JSONL_SUFFIXES else "csv"


def write_candles(bars: Iterable[Bar], path: str | Path, *, fmt: CandleFormat | None = None) -> int:
    """Write ``bars`` to ``path`` (parents created); returns the number of candles written.

    The file appears whole or not at all: the rows go to ``path.part`` first, which replaces
    ``path`` once complete, and is removed if writing fails half-way (a full disk, a series
    that cannot go on), so no truncated file is left to be loaded as a shorter series."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    kind = fmt or format_for(target)
    partial = target.with_name(target.name + ".part")
    try:
        count = _write_rows(bars, partial, kind)
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return count


def _write_rows(bars: Iterable[Bar], partial: Path, kind: CandleFormat) -> int:
    count = 0
    with partial.open("w", encoding="utf-8", newline="\n") as out:
        if kind == "csv":
            out.write(",".join(CSV_COLUMNS) + "\n")
        chunk: list[str] = []
        for bar in bars:
            o, h, lo, c, v = (format(x, "f") for x in bar[1:])
            if kind == "csv":
                chunk.append(f"{bar.time_ms},{o},{h},{lo},{c},{v}\n")
            else:
                chunk.append(
                    f'{{"time":{bar.time_ms},"open":"{o}","high":"{h}","low":"{lo}",'
                    f'"close":"{c}","volume":"{v}"}}\n'
                )
            count += 1
            if len(chunk) >= 10_000:
                out.write("".join(chunk))
                chunk.clear()
        out.write("".join(chunk))
    return count
