"""A portfolio backtest's candle files, one per symbol, checked to replay in lockstep.

``botkit backtest --data BTC_USDT_PERP=btc.csv --data ETH_USDT_PERP=eth.csv`` names one file
per symbol. :func:`parse_data` reads the ``--data`` values (a single plain ``FILE`` is the
one-symbol run of old); :func:`align_legs` loads the files and makes them one timeline:

- every file's candles are of one interval and open on one grid (the same times modulo the
  interval) — else one line says which file differs and how;
- the run covers the period **all** files cover (the latest first candle to the earliest end):
  a file that starts earlier or ends later is cut to it, and a note says so;
- a candle missing inside that period is a gap, refused unless ``--allow-gaps`` (as for one
  file); allowed through, that symbol's mark holds at its last close until its next candle
  (nothing of it moves, nothing of it fills: its market is closed, not invented), and the
  first candle of the period must exist in every file (a mark before the first candle would be
  a price from the future).

:func:`check_symbols` then ties the files to the strategies: every symbol a strategy trades or
reads has a file, and every file is used by some strategy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from botkit.backtest.bars import CandleSeries
from botkit.errors import UsageError
from botkit.rules import Strategy
from botkit.rules.hints import did_you_mean
from botkit.timeparse import format_interval, format_time

__all__ = ["Leg", "Legs", "align_legs", "check_symbols", "parse_data"]

Leg = tuple[str, CandleSeries]
"""One symbol and its candles."""
Legs = tuple[Leg, ...]

Loader = Callable[[Path, int | None, int | None], CandleSeries]
"""(path, start ms, end ms) → the checked candles of [start, end) (the run's other options
— interval, gaps — bound by the caller)."""

_SYMBOL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def parse_data(values: Sequence[str]) -> tuple[Path, tuple[tuple[str, Path], ...]]:
    """The ``--data`` values: ``(FILE, ())`` for one plain file (a one-symbol run), else the
    first file and ``(SYMBOL, FILE)`` per value (a portfolio run). A value naming an existing
    file is a file even when it holds ``=``."""
    if len(values) == 1 and not _pair(values[0]):
        return Path(values[0]), ()
    legs: list[tuple[str, Path]] = []
    for text in values:
        pair = _pair(text)
        if pair is None:
            raise UsageError(
                f"--data {text}: with several --data each names its symbol: SYMBOL=FILE, "
                "e.g. --data BTC_USDT_PERP=btc.csv --data ETH_USDT_PERP=eth.csv"
            )
        if any(pair[0] == symbol for symbol, _ in legs):
            raise UsageError(
                f"--data {text}: {pair[0]} is given twice — one candle file per symbol"
            )
        legs.append(pair)
    return legs[0][1], tuple(legs)


def _pair(text: str) -> tuple[str, Path] | None:
    symbol, eq, file = text.partition("=")
    if not eq or Path(text).exists() or not _SYMBOL.fullmatch(symbol) or not file:
        return None
    return symbol, Path(file)


def _span(leg: Leg) -> str:
    series = leg[1]
    return f"{format_time(series.start_ms)} → {format_time(series.end_ms)}"


def align_legs(load: Loader, files: Sequence[tuple[str, Path]], start_ms: int | None,
               end_ms: int | None) -> tuple[Legs, list[str]]:  # fmt: skip
    """The files' candles on one timeline (see the module doc), and the notes to keep (a file
    cut to the common period); a :class:`UsageError` when they cannot share one."""
    legs = [(symbol, load(path, start_ms, end_ms)) for symbol, path in files]
    first_symbol, first = legs[0]
    for symbol, series in legs[1:]:
        if series.interval_ms != first.interval_ms:
            raise UsageError(
                f"--data {symbol}={series.source}: {format_interval(series.interval_ms)} "
                f"candles, but {first_symbol}={first.source} has "
                f"{format_interval(first.interval_ms)} — give every symbol candles of one "
                "interval (or name it with --interval)"
            )
        if (series.start_ms - first.start_ms) % first.interval_ms:
            raise UsageError(
                f"--data {symbol}={series.source}: its candles open at "
                f"{format_time(series.start_ms)}, off {first_symbol}'s grid (every "
                f"{format_interval(first.interval_ms)} from {format_time(first.start_ms)}) — "
                "the symbols' candles must open at the same times"
            )
    start = max(series.start_ms for _, series in legs)
    end = min(series.end_ms for _, series in legs)
    if start >= end:
        spans = ", ".join(f"{s} {_span((s, series))}" for s, series in legs)
        raise UsageError(
            f"--data: the files share no period ({spans}) — give candles of the same days"
        )
    notes: list[str] = []
    out: list[Leg] = []
    for (symbol, path), leg in zip(files, legs, strict=True):
        series = leg[1]
        if (series.start_ms, series.end_ms) != (start, end):
            notes.append(
                f"{symbol}={series.source} covers {_span(leg)}: replayed "
                f"{format_time(start)} → {format_time(end)}, the period every file covers"
            )
            series = load(path, start, end)
        if series.start_ms != start:
            raise UsageError(
                f"--data {symbol}={series.source}: no candle at {format_time(start)}, the "
                f"first of the period every file covers (its first is "
                f"{format_time(series.start_ms)}) — fill the gap or start later (--start)"
            )
        out.append((symbol, series))
    return tuple(out), notes


def check_symbols(strategies: Sequence[Strategy], legs: Legs, instruments: Sequence[str]) -> None:
    """Every file is of a known instrument (else a did-you-mean), every symbol a strategy
    trades or reads has a file, and every file is used."""
    for symbol, series in legs:
        if symbol not in instruments:
            raise UsageError(
                f"--data {symbol}={series.source}: unknown symbol '{symbol}' — "
                f"{did_you_mean(symbol, list(instruments))} (the simulator config's "
                "instruments; add it there with --sim-config)"
            )
    have = {symbol for symbol, _ in legs}
    used: set[str] = set()
    for strategy in strategies:
        for symbol in sorted({strategy.symbol, *strategy.other_symbols}):
            used.add(symbol)
            if symbol not in have:
                what = "trades" if symbol == strategy.symbol else "reads"
                raise UsageError(
                    f"{strategy.source}: {strategy.name} {what} {symbol}, which has no candle "
                    f"file — add --data {symbol}=FILE (given: {', '.join(sorted(have))})"
                )
    for symbol, series in legs:
        if symbol not in used:
            raise UsageError(
                f"--data {symbol}={series.source}: no strategy trades or reads {symbol} — "
                "leave the file out, or add a strategy of it"
            )
