"""What a backtest runs on: options → checked candles, strategies and simulator config.

:class:`BacktestOptions` is what ``botkit backtest`` (and each sweep variant) asks for;
:func:`prepare` turns it into a :class:`Prepared` run — the candle series, the compiled
strategies (with ``params`` overrides applied through the loader, never by editing text), the
simulator config (static price model starting at the first open, balance, fees, seed), the run's
description and what to tell the user before it starts (:attr:`Prepared.warnings`) — or raises a
located one-line error; :func:`botkit.app.backtest.execute` runs it and attaches the notes (the
gaps allowed through, the warnings) to the result. :class:`StrategyFiles` reads strategy files
once and applies many ``params`` sets (a sweep checks every variant this way before it starts).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from botkit.backtest.bars import CandleSeries
from botkit.backtest.candles import load_candles
from botkit.backtest.legs import Legs, align_legs, check_symbols
from botkit.clock import ManualClock
from botkit.errors import StrategyFileError, UsageError
from botkit.exchange.models import Instrument
from botkit.rules import Strategy
from botkit.rules.check import load_scan
from botkit.rules.durations import format_duration
from botkit.rules.ids import twin_clash
from botkit.rules.loader import loads_bytes
from botkit.rules.source import SourceText
from botkit.sim.config import SimConfig, load_sim_config
from botkit.sim.engine import SimEngine
from botkit.sim.port import SimPort
from botkit.sources import FileSource
from botkit.timeparse import format_interval, format_time

__all__ = [
    "GAP_LINES",
    "BacktestOptions",
    "Prepared",
    "StrategyFiles",
    "backtest_sim_config",
    "gap_notes",
    "load_series",
    "load_strategies",
    "prepare",
    "strategy_files",
]


@dataclass(frozen=True, slots=True)
class BacktestOptions:
    """One backtest's inputs. ``fees`` is (maker, taker); ``None`` keeps the sim config's."""

    data: Path
    strategies: tuple[Path, ...]
    start_ms: int | None = None
    end_ms: int | None = None
    interval_ms: int | None = None
    allow_gaps: bool = False
    balance: Decimal | None = None
    fees: tuple[Decimal, Decimal] | None = None
    seed: int | None = None
    sim_config: Path | None = None
    symbol: str | None = None
    params: Mapping[str, Decimal] = field(default_factory=dict)
    """Overrides of strategies' ``params:``: ``name`` (every strategy defining it) or
    ``strategy.name`` (that strategy only)."""
    legs: tuple[tuple[str, Path], ...] = ()
    """A portfolio run: one candle file per symbol (``--data SYMBOL=FILE``, repeated;
    :mod:`botkit.backtest.legs`); ``data`` is then the first of them. Empty: one symbol."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A checked run, ready for :func:`~botkit.app.backtest.execute`."""

    series: CandleSeries
    strategies: tuple[Strategy, ...]
    config: SimConfig
    symbol: str
    meta: Mapping[str, str]
    warnings: tuple[str, ...] = ()
    """What the user should know before the run starts (strategies left out by ``--symbol``,
    a strategy asking to run more often than the candles allow); kept in the result's notes."""
    legs: Legs = ()
    """A portfolio run's candles per symbol, on one timeline (``series`` is the first's,
    ``symbol`` the symbols joined by ``+``); empty for a one-symbol run."""

    @property
    def notes(self) -> tuple[str, ...]:
        """The result's notes: the gaps allowed through, then :attr:`warnings`."""
        gaps = [line for _, s in self.legs or (("", self.series),) for line in gap_notes(s)]
        return (*gaps, *self.warnings)


GAP_LINES = 10
"""Gaps listed one by one in the notes; the rest are counted."""


def gap_notes(series: CandleSeries, limit: int = GAP_LINES) -> list[str]:
    """The gaps ``series`` was allowed through, as ``botkit data check`` lists them
    (``file:line: N missing between A and B``), the first ``limit`` and a count of the rest."""
    gaps = series.gaps
    if not gaps:
        return []
    lines = [f"{_gap_count(series)}, replayed across (--allow-gaps):"]
    lines += [
        f"{series.source}:{g.line}: {g.missing} missing between {format_time(g.after_ms)} and "
        f"{format_time(g.before_ms)}"
        for g in gaps[:limit]
    ]
    if len(gaps) > limit:
        lines.append(f"… and {len(gaps) - limit} more gaps")
    return lines


def _gap_count(series: CandleSeries) -> str:
    gaps, missing = len(series.gaps), sum(g.missing for g in series.gaps)
    gap_s, candle_s = ("s" if gaps > 1 else ""), ("s" if missing > 1 else "")
    return f"{gaps:,} gap{gap_s}, {missing:,} candle{candle_s} missing"


@functools.lru_cache(maxsize=16)
def _cached_series(
    path: str,
    interval: int | None,
    start: int | None,
    end: int | None,
    gaps: bool,
    _version: tuple[int, int] | None,
) -> CandleSeries:
    return load_candles(path, interval_ms=interval, start_ms=start, end_ms=end, allow_gaps=gaps)


def load_series(options: BacktestOptions) -> CandleSeries:
    """The candles of ``options``, cached by the file's path, size and modification time (and
    the period: an optimisation's train and test windows, up to 16, each load once): sweep
    variants in one process share one load."""
    o = options
    return _load_file(o, o.data, o.start_ms, o.end_ms)


def _load_file(options: BacktestOptions, path: Path, start: int | None, end: int | None
               ) -> CandleSeries:  # fmt: skip
    """The candles of ``path`` in [start, end) with the options' interval and gaps, cached."""
    try:
        stat = path.stat()
        version: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        version = None  # load_candles says what is wrong with the path
    o = options
    return _cached_series(str(path), o.interval_ms, start, end, o.allow_gaps, version)


def load_legs(options: BacktestOptions) -> tuple[Legs, list[str]]:
    """A portfolio run's candles per symbol on one timeline, and the notes of files cut to the
    common period (:func:`~botkit.backtest.legs.align_legs`), each file loaded once (cached)."""
    return align_legs(
        functools.partial(_load_file, options), options.legs, options.start_ms, options.end_ms
    )


def _instrument_models(config: SimConfig) -> dict[str, Instrument]:
    """The instruments as the exchange describes them (for the strategies' limit checks)."""
    port = SimPort(SimEngine(config, ManualClock(0)))
    return {i.symbol: i for i in port.instruments()}


def _split_key(key: str) -> tuple[str | None, str]:
    strategy, dot, name = key.rpartition(".")
    return (strategy, name) if dot else (None, key)


def _reaches(key: str, strategy: Strategy) -> bool:
    """Whether a ``name`` or ``strategy.name`` override applies to ``strategy``."""
    target, name = _split_key(key)
    return (target is None or target == strategy.name) and name in strategy.params


class StrategyFiles:
    """Strategy files (files or folders) read and checked once against ``instruments``; each
    :meth:`load` applies a set of ``params`` overrides, re-compiling only the strategies the
    overrides reach (the same overrides give the same strategy without compiling it again).
    Every problem of the files is raised at once, by the constructor."""

    def __init__(self, paths: Sequence[Path], instruments: Mapping[str, Instrument]) -> None:
        self._instruments = instruments
        scan = FileSource(paths, outside_links=True).scan()  # the files the user named
        if not scan.files and not scan.missing:
            where = ", ".join(str(p) for p in paths)
            raise UsageError(f"no strategy files (*.yaml) in {where} — pass a file or a folder")
        loaded, problems = load_scan(scan, instruments=instruments)
        self._loaded = [(source.file, source.content, strategy) for source, strategy in loaded]
        if problems:
            raise StrategyFileError(problems)
        self._compiled: dict[tuple[int, tuple[tuple[str, Decimal], ...]], Strategy] = {}

    def load(self, params: Mapping[str, Decimal] | None = None) -> tuple[Strategy, ...]:
        """The strategies with ``params`` applied (``name`` or ``strategy.name`` keys);
        a key no strategy defines, or two strategies of one name, is a :class:`UsageError`;
        a value a strategy refuses, its :class:`StrategyFileError`."""
        wanted = dict(params or {})
        used: set[str] = set()
        out: list[Strategy] = []
        names: dict[str, str] = {}
        for index, (path, raw, strategy) in enumerate(self._loaded):
            mine: dict[str, Decimal] = {}
            for key, value in wanted.items():
                if _reaches(key, strategy):
                    mine[_split_key(key)[1]] = value
                    used.add(key)
            if mine:
                cache_key = (index, tuple(sorted(mine.items())))
                if cache_key not in self._compiled:
                    self._compiled[cache_key] = loads_bytes(
                        raw, path, instruments=self._instruments, params=mine
                    )
                strategy = self._compiled[cache_key]
            if strategy.name in names:
                raise UsageError(
                    f"{SourceText(path, raw).name_location()}: strategy name '{strategy.name}'"
                    f" is already used by {names[strategy.name]} — give every strategy its own"
                    " name"
                )
            clash = twin_clash(strategy.name, names)  # its journal is new: none ran before
            if clash is not None:
                where = SourceText(path, raw).name_location()
                raise UsageError(f"{where}: {clash[0]} — {clash[1]}")
            names[strategy.name] = path
            out.append(strategy)
        unused = sorted(set(wanted) - used)
        if unused:
            known = sorted({f"{s.name}.{p}" for s in out for p in s.params})
            raise UsageError(
                f"no strategy defines params {', '.join(unused)} — the strategies' params are: "
                f"{', '.join(known) or 'none'}"
            )
        return tuple(out)


def load_strategies(
    paths: Sequence[Path],
    instruments: Mapping[str, Instrument],
    params: Mapping[str, Decimal] | None = None,
) -> tuple[Strategy, ...]:
    """Load every strategy file of ``paths`` (files or folders), checked against
    ``instruments``, with ``params`` overrides applied; every problem raised at once."""
    return StrategyFiles(paths, instruments).load(params)


def strategy_files(options: BacktestOptions) -> StrategyFiles:
    """The strategy files of ``options``, checked against its simulator config's instruments."""
    return StrategyFiles(
        options.strategies, _instrument_models(load_sim_config(options.sim_config))
    )


def _resolve_symbol(
    strategies: Sequence[Strategy], given: str | None
) -> tuple[str, tuple[Strategy, ...], list[str]]:
    """The data's symbol, the strategies that trade it, and a note per strategy left out
    (``--symbol`` selects the strategies of that symbol)."""
    symbols = sorted({s.symbol for s in strategies})
    if given is None:
        if len(symbols) > 1:
            raise UsageError(
                f"the strategies trade {', '.join(symbols)} but a candle file holds one symbol "
                "— pass --symbol with the data's symbol to run only its strategies, or "
                "strategies of one symbol"
            )
        return symbols[0], tuple(strategies), []
    kept = tuple(s for s in strategies if s.symbol == given)
    others = [f"{s.source} ({s.symbol})" for s in strategies if s.symbol != given]
    if not kept:
        verb = "trades" if len(others) == 1 else "trade"
        raise UsageError(
            f"the data is {given} but no strategy trades it: {', '.join(others)} {verb} "
            f"another symbol — pass strategies of {given}, or the data's symbol as --symbol"
        )
    notes = [f"--symbol {given}: left out {other}" for other in others]
    return given, kept, notes


def _check_params_reach(
    params: Mapping[str, Decimal], kept: Sequence[Strategy], symbol: str
) -> None:
    """A param override (``--param``, ``--sweep``) that only strategies left out by
    ``--symbol`` define would change nothing that runs: a :class:`UsageError`."""
    for key in sorted(params):
        if not any(_reaches(key, s) for s in kept):
            raise UsageError(
                f"param {key}: only strategies that --symbol {symbol} leaves out define it, "
                f"so it would change nothing — drop it, or pass their symbol as --symbol"
            )


def _cadence_warnings(strategies: Sequence[Strategy], interval_ms: int) -> list[str]:
    """A strategy due more often than a candle closes runs once per candle: say so."""
    candles = format_interval(interval_ms)
    return [
        f"{s.name}: every {format_duration(s.period_ms)} is shorter than the {candles} candles: "
        "evaluated once per candle"
        for s in strategies
        if s.period_ms < interval_ms
    ]


def backtest_sim_config(
    base: SimConfig,
    *,
    symbol: str,
    first_price: Decimal,
    balance: Decimal | None = None,
    fees: tuple[Decimal, Decimal] | None = None,
    seed: int | None = None,
    more: Mapping[str, Decimal] | None = None,
) -> SimConfig:
    """``base`` for a replay: static prices, only the ``symbol`` instrument (the others would be
    read every cycle for nothing) starting at ``first_price`` — and a portfolio run's ``more``
    symbols, each at its first price —, no faults, and the balance, fees and seed given (else
    the config's)."""
    firsts = {symbol: first_price, **(more or {})}
    instruments = []
    for name, price in firsts.items():
        inst = base.instrument(name)
        if inst is None:
            known = ", ".join(i.symbol for i in base.instruments)
            raise UsageError(
                f"{name} is not an instrument of the simulator config (it has {known}) — add "
                "it to the config passed with --sim-config"
            )
        if not inst.minPx <= price <= inst.maxPx:
            raise UsageError(
                f"the data starts at {price}, outside {name}'s price range "
                f"[{inst.minPx}, {inst.maxPx}] in the simulator config — widen minPx/maxPx"
            )
        instruments.append(inst.model_copy(update={"start_px": price}))
    update: dict[str, object] = {
        "instruments": instruments,
        "prices": base.prices.model_copy(update={"model": "static"}),
        "faults": [],
    }
    if balance is not None:
        update["balance"] = base.balance.model_copy(update={"amount": balance})
    if fees is not None:
        update["fees"] = base.fees.model_copy(update={"maker": fees[0], "taker": fees[1]})
    if seed is not None:
        update["seed"] = seed
    return base.model_copy(update=update)


def _describe(options: BacktestOptions, config: SimConfig, series: CandleSeries) -> dict[str, str]:
    o = options
    meta = {
        "data": str(o.data),
        "strategies": ", ".join(str(p) for p in o.strategies),
        "period": f"{format_time(series.start_ms)} → {format_time(series.end_ms)}",
        "interval": format_interval(series.interval_ms),
        "balance": f"{config.balance.amount} {config.balance.currency}",
        "fees": f"maker {config.fees.maker}, taker {config.fees.taker}",
        "seed": str(config.seed),
        "sim_config": str(o.sim_config) if o.sim_config else "built-in defaults",
    }
    if o.params:
        meta["params"] = ", ".join(f"{k}={v}" for k, v in sorted(o.params.items()))
    if series.gaps:
        meta["gaps"] = f"{_gap_count(series)}, replayed across (listed in the notes)"
    return meta


def _check_one_symbol(strategies: Sequence[Strategy]) -> None:
    """A one-file backtest replays one symbol's candles: a strategy reading another's is
    refused up front (else every cycle would fail its read) with the portfolio form to use."""
    for strategy in strategies:
        if strategy.other_symbols:
            others = sorted(strategy.other_symbols)
            raise UsageError(
                f"{strategy.name} reads {', '.join(others)} as well as {strategy.symbol}: give"
                f" each symbol its candles, --data {strategy.symbol}=FILE --data {others[0]}"
                "=FILE (docs/backtest.md, Portfolio backtests)"
            )


def _prepare_portfolio(options: BacktestOptions) -> Prepared:
    """:func:`prepare` for several symbols (``options.legs``): one file per symbol, every
    strategy runs, the simulator holds every symbol's instrument."""
    if options.symbol is not None:
        raise UsageError(
            f"--symbol {options.symbol}: with --data SYMBOL=FILE every file names its symbol "
            "— leave --symbol out"
        )
    base = load_sim_config(options.sim_config)
    legs, cut = load_legs(options)
    strategies = load_strategies(options.strategies, _instrument_models(base), options.params)
    check_symbols(strategies, legs, [i.symbol for i in base.instruments])
    (symbol, first), *others = legs
    config = backtest_sim_config(
        base,
        symbol=symbol,
        first_price=first.bars[0].open,
        balance=options.balance,
        fees=options.fees,
        seed=options.seed,
        more={name: series.bars[0].open for name, series in others},
    )
    warnings = (*cut, *_cadence_warnings(strategies, first.interval_ms))
    meta = _describe(options, config, first)
    meta["data"] = ", ".join(f"{name}={series.source}" for name, series in legs)
    if any(series.gaps for _, series in legs):
        counts = "; ".join(f"{name}: {_gap_count(s)}" for name, s in legs if s.gaps)
        meta["gaps"] = f"{counts} — marks held at the last close (listed in the notes)"
    label = "+".join(name for name, _ in legs)
    return Prepared(first, strategies, config, label, meta, warnings, legs)


def prepare(options: BacktestOptions) -> Prepared:
    """Check and load everything ``options`` names (see the module doc)."""
    if options.legs:
        return _prepare_portfolio(options)
    base = load_sim_config(options.sim_config)
    series = load_series(options)
    loaded = load_strategies(options.strategies, _instrument_models(base), options.params)
    symbol, strategies, left_out = _resolve_symbol(loaded, options.symbol)
    _check_params_reach(options.params, strategies, symbol)
    _check_one_symbol(strategies)
    config = backtest_sim_config(
        base,
        symbol=symbol,
        first_price=series.bars[0].open,
        balance=options.balance,
        fees=options.fees,
        seed=options.seed,
    )
    warnings = (*left_out, *_cadence_warnings(strategies, series.interval_ms))
    meta = _describe(options, config, series)
    return Prepared(series, strategies, config, symbol, meta, warnings)
