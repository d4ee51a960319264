"""The backtest driver: replay candles through the simulator and the live runner's cycle.

:func:`replay` is handed its parts by the composition root
(:func:`botkit.app.backtest.run_backtest`): the embedded simulator on a
:class:`~botkit.clock.ManualClock` with the ``static`` price model (only the replay moves
the mark), its in-process :class:`~botkit.sim.port.SimPort`, a journal, and the very
:class:`~botkit.runner.cycle.Runner` the service runs. Per candle opening at ``t`` (interval
``i``):

1. the four points of :func:`~botkit.backtest.path.candle_path` — open at ``t``, the nearer
   extreme at ``t + ¼i``, the other at ``t + ½i``, the close at ``t + ¾i`` — each sets the
   clock and the mark; the simulator fills every resting order the mark reaches;
2. at the candle's close (``t + i``, the mark still at the close) the runner runs one cycle if
   a strategy is due (each at its own period): orders it places rest from the next candle on;
3. the equity curve is sampled (equity and gross position size) at ``t + i``.

After the last candle the :class:`~botkit.backtest.result.BacktestResult` is built from the
journal (orders, refusals by reason, rejections by code) and the simulator (fills, positions,
PnL, fees). Everything runs on simulated time: the same inputs give the same result.
"""

from __future__ import annotations

import gc
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import numpy as np

from botkit.backtest.bars import Bar, CandleSeries
from botkit.backtest.bulk import proven_count
from botkit.backtest.columns import CHUNK, BarColumns, EquityCurve, PathReach
from botkit.backtest.path import PathPoint, candle_path
from botkit.backtest.result import (
    BacktestResult,
    EquityPoint,
    FillRow,
    OrderRow,
    PositionRow,
    order_rows,
)
from botkit.clock import ManualClock
from botkit.exchange.paging import iter_history
from botkit.exchange.port import AccountReads
from botkit.exchange.queries import FillQuery, PositionQuery
from botkit.journal import Journal, OrderFilter, Outcome
from botkit.pipeline.desired import Action
from botkit.rules.deps import Recheck
from botkit.runner.cycle import CycleReport, Runner
from botkit.runner.quiet import Envelope
from botkit.sim.engine import SimEngine

__all__ = ["BacktestRun", "frozen_heap", "price_points", "replay"]

PRICE_POINTS = 2000
"""At most about this many price points are kept for the chart (lowest and highest per bucket)."""

_ZERO = Decimal(0)


_REPLAY_THRESHOLDS = (50_000, 50, 1_000)


@contextmanager
def _replay_gc(thresholds: tuple[int, int, int] | None = _REPLAY_THRESHOLDS) -> Iterator[None]:
    """Garbage collection tuned for the replay, restored after.

    A replay allocates millions of short-lived objects that reference counting frees at once,
    while the candles and strategies loaded before it live to the end: with the default
    thresholds the cyclic collector would scan those again and again (about 7 % of a year's
    replay). They are frozen (moved out of the collector's generations) and young objects are
    collected 70 times less often; cyclic garbage is still collected, only later.
    ``thresholds=None``: frozen only (:func:`frozen_heap`).
    """
    global _replays
    with _GC_LOCK:
        _replays += 1
        if _replays == 1:  # the first of overlapping replays tunes, the last one restores
            _saved[:] = [gc.get_threshold(), gc.get_freeze_count() == 0]
            gc.freeze()
            if thresholds is not None:
                gc.set_threshold(*thresholds)
    try:
        yield
    finally:
        with _GC_LOCK:
            _replays -= 1
            if _replays == 0:
                thresholds, unfreeze = _saved
                gc.set_threshold(*thresholds)
                if unfreeze:  # never thaw what the caller had frozen
                    gc.unfreeze()


def frozen_heap() -> AbstractContextManager[None]:
    """The objects alive now left out of the cyclic collector's scans while the block runs
    (frozen; the thresholds as they are), for the work after a replay: the result, the figures
    and the report build a row or more per order while the run's objects (the candles, the
    simulator's history, the journal's) stay alive, and each full collection scanned them all
    again (about 2 % of a year of scenario B in three or four collections, which found almost
    nothing to free: a dozen objects on its first 150,000 minutes). Young objects are
    collected as usual, so the block's own garbage does not wait."""
    return _replay_gc(None)


_GC_LOCK = threading.Lock()
_replays = 0
_saved: list[Any] = []


@dataclass
class BacktestRun:
    """What a run leaves behind: the result, the cycles run and the problems they reported.

    ``problems`` counts them by where they arose (``read``, a strategy, ``strategy/rule``);
    ``first_problem`` keeps the first message of each (the runner also logs every one)."""

    result: BacktestResult
    cycles: int = 0
    cancelled: Counter[str] = field(default_factory=Counter)
    """Orders cancelled, per ``strategy/rule``."""
    replaced: Counter[str] = field(default_factory=Counter)
    """Kept orders replaced, per ``strategy/rule``."""
    problems: Counter[str] = field(default_factory=Counter)
    first_problem: dict[str, str] = field(default_factory=dict)

    def note(self, where: str, message: str) -> None:
        self.problems[where] += 1
        self.first_problem.setdefault(where, message)

    def problem_lines(self, limit: int = 5) -> list[str]:
        """One line per place, most frequent first: ``where: N× — first message``."""
        ranked = sorted(self.problems.items(), key=lambda kv: (-kv[1], kv[0]))
        lines = [f"{w}: {n:,}× — {self.first_problem[w]}" for w, n in ranked[:limit]]
        if len(ranked) > limit:
            lines.append(f"… and {len(ranked) - limit} more places")
        return lines


def _by_rule(run: BacktestRun) -> dict[str, dict[str, int]]:
    placed = Counter(f"{o.strategy}/{o.rule}" for o in run.result.orders if o.outcome == "accepted")
    rules = sorted(set(placed) | set(run.cancelled) | set(run.replaced))
    return {
        rule: {
            "placed": placed[rule],
            "cancelled": run.cancelled[rule],
            "replaced": run.replaced[rule],
        }
        for rule in rules
    }


def _reason_key(reason: str) -> str:
    return reason.split(":", 1)[0].strip() or reason


def _extreme(bar: Bar, interval_ms: int, price: Decimal) -> PathPoint:
    """The path point of ``bar`` at its low or high ``price`` (the second or third point)."""
    _, first, second, _ = candle_path(bar, interval_ms)
    return first if first[1] == price else second


def price_points(
    bars: Sequence[Bar], interval_ms: int, limit: int = PRICE_POINTS
) -> list[PathPoint]:
    """The replayed path for the chart: every point when short, else per bucket of candles its
    lowest and highest point in time order (the spikes stay; the memory stays small)."""
    if len(bars) * 4 <= limit:
        return [p for bar in bars for p in candle_path(bar, interval_ms)]
    size = -(-len(bars) * 2 // limit)
    out: list[PathPoint] = []
    for begin in range(0, len(bars), size):
        if isinstance(bars, BarColumns):  # the columns compared, two bars built
            stop = min(begin + size, len(bars))
            low = bars[bars.first_extreme(begin, stop, high=False)]
            high = bars[bars.first_extreme(begin, stop, high=True)]
        else:
            chunk = bars[begin : begin + size]
            low = min(chunk, key=lambda b: b.low)
            high = max(chunk, key=lambda b: b.high)
        points = {_extreme(low, interval_ms, low.low), _extreme(high, interval_ms, high.high)}
        out.extend(sorted(points))
    return out


def replay(
    series: CandleSeries,
    runner: Runner,
    *,
    engine: SimEngine,
    port: AccountReads,
    clock: ManualClock,
    journal: Journal,
    symbol: str,
    meta: Mapping[str, str] | None = None,
    on_candle: Callable[[], None] | None = None,
    on_candles: Callable[[int], None] | None = None,
    fast_forward: bool = True,
) -> BacktestRun:
    """Replay ``series`` through ``runner`` on the simulator ``engine`` (``port`` its in-process
    face, ``clock`` its manual clock, ``journal`` the runner's): the candle loop of the module
    doc, then the result. The parts are wired by :func:`botkit.app.backtest.run_backtest`."""
    bars = series.bars
    interval = series.interval_ms
    config = engine.config
    base = BacktestResult(symbol, interval, series.start_ms, series.end_ms, len(bars),
                          config.balance.amount, config.balance.currency)  # fmt: skip
    run = BacktestRun(result=base)
    with _replay_gc():
        equity = _replay(
            run, bars, interval, symbol, clock, engine, runner, on_candle, on_candles,
            fast_forward,
        )  # fmt: skip
    with frozen_heap():
        run.result = _result(run.result, series, port, journal, equity, meta or {})
    run.result = replace(run.result, by_rule=_by_rule(run))
    return run


def _replay(
    run: BacktestRun,
    bars: Sequence[Bar],
    interval: int,
    symbol: str,
    clock: ManualClock,
    engine: SimEngine,
    runner: Runner,
    on_candle: Callable[[], None] | None,
    on_candles: Callable[[int], None] | None = None,
    fast_forward: bool = True,
) -> EquityCurve:
    """The candle loop (see the module doc); returns the equity curve.

    Two shortcuts with the same effects as the plain loop (``tests/backtest/test_fast_forward.
    py`` compares them): a candle whose path stays inside the simulator's quiet band (no order
    can fill) moves the mark without the matcher (:meth:`SimEngine.pass_quietly`); and after
    a cycle, while the runner promises its cycles are quiet (:meth:`Runner.quiet_envelope`, a
    verdict without price rechecks), the candles up to the first that may matter — one that
    reaches the band, or closes at or after the envelope's time — are passed at once
    (:class:`_Forward`)."""
    equity = EquityCurve()
    sample = equity.append
    set_clock = clock.set
    set_mark = engine.set_mark
    band = engine.quiet_band
    move = engine.pass_quietly
    equity_now = engine.equity
    positions = engine.account.positions
    run_cycle = runner.run_cycle_unless_quiet
    next_due = runner.next_due_ms()
    columns = bars if isinstance(bars, BarColumns) else BarColumns.from_bars(bars)
    forward = _Forward(run, columns, interval, symbol, clock, engine, runner, equity)
    forward.on_candle, forward.on_candles = on_candle, on_candles
    probe = False
    moved = loud = -1  # the candle a stepped stretch handed back: its marks moved; its
    # due strategies found not quiet (see _Forward._step)
    total = len(columns)
    i = 0
    while i < total:
        chunk = columns.at_hand(i, i + CHUNK)  # a bar built only for the candles stepped
        base = i
        k = 0
        while k < len(chunk):
            bar = chunk[k]
            if base + k != moved:
                path = candle_path(bar, interval)
                low, high = band(symbol)
                _, o, h, lo, c, _ = bar
                if low < lo <= o <= h < high and lo <= c <= h and lo > _ZERO:  # nothing fills
                    move(symbol, path, 4)
                else:
                    for t, px in path:
                        set_clock(t)
                        set_mark(symbol, px)
            close_ms = bar.time_ms + interval
            set_clock(close_ms)
            if next_due is not None and next_due <= close_ms:
                # a candle handed back by a stretch stepped through: its cycle was found loud
                report = run_cycle() if base + k != loud else runner.run_loud_cycle()
                run.cycles += 1
                if report is not None and not report.quiet:
                    probe = fast_forward
                    if report.error or report.strategy_errors or report.rule_errors:
                        _note_problems(run, report)
                    if report.effects:
                        _count_churn(run, report)
                next_due = runner.next_due_ms()
            exposure = sum([abs(p.qty) for p in positions.values()], _ZERO) if positions else _ZERO
            sample(close_ms, equity_now(), exposure)
            if on_candle is not None:
                on_candle()
            if on_candles is not None:
                on_candles(1)
            k += 1
            if probe:
                forward.chunk = (base, chunk)  # the bars at hand, for a stretch stepped through
                done = forward.run(base + k)  # the progress calls of the candles passed made
                probe = forward.cut_by_band and done > 0
                if done:
                    next_due = runner.next_due_ms()
                    k += done
                moved, loud = forward.handed_back(base + k)
        i = base + k
    return equity


MIN_STRETCH = 32
"""Fewer candles than this to the envelope's time are replayed one by one."""

MIN_BULK = 8
"""Fewer candles than this proven quiet by their closes' range are stepped through instead
(:meth:`_Forward._bulk`, which tries twice as many first)."""

MAX_BULK = 4096
"""At most this many candles are passed at once by :meth:`_Forward._bulk` (then it asks
again)."""

BULK = True
"""Whether stretches whose verdicts recheck prices are passed at once where their closes are
proven quiet (:meth:`_Forward._bulk`); off, every such candle is stepped through."""

_BAND_AHEAD = 256
"""The candles the band is checked over at least at a time by :meth:`_Forward._bulk`."""
_SAMPLES = 16 * CHUNK
"""Equity samples worked out at a time when passing candles."""
_MINUTE_MS = 60_000
_DAY_MS = 86_400_000


class _Forward:
    """Passing the candles of a quiet envelope at once (see :func:`_replay`).

    For candles ``[a, b)`` inside the envelope (each candle's low above the band's bid and its
    high below its ask, compared as correctly rounded floats, which can only stop early; every
    close before the envelope's time) the effects of the plain loop are: the runner's skipped
    cycles (:meth:`Runner.pass_quiet`), the marks recorded (:meth:`SimEngine.pass_quietly`),
    the clock at the last close, and an equity sample per candle at its close
    (:meth:`SimEngine.equity_at`; the exposure is the positions', which do not change). The
    price series needs only the points it can still show: with minute-aligned candles of
    whole minutes, the candles whose minutes are older than the last day before the end and
    than the ``candle_history_minutes`` kept are dropped (their minutes would have left the
    24-hour window and the history; nothing traded in them)."""

    def __init__(
        self,
        run: BacktestRun,
        columns: BarColumns,
        interval: int,
        symbol: str,
        clock: ManualClock,
        engine: SimEngine,
        runner: Runner,
        equity: EquityCurve,
    ) -> None:
        self.run_ = run
        self.columns = columns
        self.times = columns.times
        self.interval = interval
        self.symbol = symbol
        self.clock = clock
        self.engine = engine
        self.runner = runner
        self.equity = equity
        self.keep_minutes = engine.config.prices.candle_history_minutes
        self.reach = PathReach(columns)
        """The candles' paths against the band (:meth:`_band_stop`)."""
        self.cut_by_band = False
        self.moved = False
        """Whether the candle after those passed had its marks moved by :meth:`_step` (its
        cycle is then the replay's to run)."""
        self.loud = False
        """With ``moved``: its due strategies were found not quiet (:meth:`Runner.
        run_loud_cycle` runs its cycle)."""
        self.chunk: tuple[int, Sequence[Bar]] = (0, ())
        """The replay's bars at hand: (index of the first, the bars)."""
        self.on_candle: Callable[[], None] | None = None
        self.on_candles: Callable[[int], None] | None = None
        """The replay's progress calls, made for the candles passed."""

    def handed_back(self, at: int) -> tuple[int, int]:
        """After :meth:`run`, the candle ``at`` following those passed: (``at`` when its
        marks were moved, else -1; ``at`` when its due strategies were found not quiet, else
        -1)."""
        return (at if self.moved else -1), (at if self.loud else -1)

    def _progress(self, done: int) -> None:
        if self.on_candle is not None:
            for _ in range(done):
                self.on_candle()
        if self.on_candles is not None:
            self.on_candles(done)

    def run(self, start: int) -> int:
        """Pass the quiet candles from ``start`` on; returns how many were passed."""
        self.cut_by_band = self.moved = self.loud = False
        envelope = self.runner.quiet_envelope()
        if envelope is None:
            return 0
        times = self.times
        total = len(times)
        if envelope.rechecks or envelope.keeps:
            done, limit = 0, None
            if BULK and not envelope.keeps:
                done, limit = self._bulk(start, envelope)
            if limit is None or limit > 0:
                done += self._step(start + done, limit)
            else:
                self.cut_by_band = True  # the band, the envelope's time or the end: ask again
            if done:
                self._progress(done)
            return done
        end = total
        if envelope.until_ms is not None:  # the first candle closing at or after it runs
            end = int(np.searchsorted(times, envelope.until_ms - self.interval, side="left"))
        if end - start < MIN_STRETCH:
            return 0
        stop = self._band_stop(start, end)
        self.cut_by_band = stop < end
        if stop - start < 1:
            return 0
        self._pass(start, stop)
        self._progress(stop - start)
        return stop - start

    def _band_stop(self, start: int, end: int) -> int:
        """The first candle in ``[start, end)`` whose path may reach the band (or ``end``)."""
        low, high = self.engine.quiet_band(self.symbol)
        return self.reach.first(start, end, float(low), float(high))

    def _bulk(self, start: int, envelope: Envelope) -> tuple[int, int | None]:
        """Pass at once the candles from ``start`` on whose closes stay within a range of marks
        over which every price recheck of ``envelope`` is proven false (:mod:`botkit.backtest.
        bulk`; each path inside the band and closing before the envelope's time, as for a
        stretch without rechecks). Returns the candles passed and how many after them to step
        through before asking again (the candles not proven: the one whose cycle is loud is
        among them, if any), or None: step through them all (a recheck reads a value not
        bounded by the mark, or of another symbol)."""
        symbol = self.symbol
        rechecks: list[Recheck] = []
        for on, found in envelope.rechecks:
            if on != symbol:
                return 0, None
            rechecks.extend(found)
        times = self.times
        end = len(times)
        if envelope.until_ms is not None:  # the first candle closing at or after it runs
            end = int(np.searchsorted(times, envelope.until_ms - self.interval, side="left"))
        end = min(end, start + MAX_BULK)
        clear = [start, end]  # the band is checked up to clear[0]; it stops them at clear[1]

        def room(count: int) -> int:
            upto = min(start + count, clear[1])
            if upto > clear[0]:  # the band looked at a block ahead (as cheap as a few candles)
                ahead = min(max(upto, clear[0] + _BAND_AHEAD), clear[1])
                stop = self._band_stop(clear[0], ahead)
                clear[0] = stop
                if stop < ahead:
                    clear[1] = stop
            return min(upto, clear[0]) - start

        engine, columns = self.engine, self.columns
        good, bad, bounded = proven_count(
            rechecks,
            lambda lo, hi: engine.figures_between(symbol, lo, hi),
            symbol,
            lambda i, j: columns.closes(start + i, start + j),
            room,
            2 * MIN_BULK,
            high_now=engine.high_24h(symbol),
            tops=lambda i, j: columns.tops(start + i, start + j),
            least=MIN_BULK,
        )
        if not bounded:
            return 0, None
        if good >= MIN_BULK:
            self._pass(start, start + good)
        else:
            good = 0
        return good, bad - good

    def _step(self, a: int, limit: int | None = None) -> int:
        """Step through the bars at hand from candle ``a`` on (at most ``limit`` of them) while
        their cycles are quiet, as the plain loop does, but for what only it needs: each
        candle's marks recorded
        (:meth:`SimEngine.pass_quietly`, which refuses a point outside the band before moving
        anything: that candle is then the replay's), the clock at its close and the runner's
        skip of its cycle (:meth:`Runner.skip_if_quiet`: the quiet check itself, its
        rechecks and keep checks made at that close; a candle at whose close no strategy is
        due, :meth:`Runner.next_due_ms` after it, asks nothing). The first candle whose cycle
        is not skipped is handed back with its marks moved (``moved``; ``loud``: its due
        strategies were found not quiet); the passed candles' equity samples are worked out at
        once (nothing but the mark moved: no order filled, no cycle ran). Returns the number
        of candles passed."""
        symbol, interval = self.symbol, self.interval
        move, set_clock = self.engine.pass_quietly, self.clock.set
        skip = self.runner.skip_if_quiet
        next_due = self.runner.next_due_ms
        base, bars = self.chunk
        done = skips = a
        upto = len(bars) if limit is None else min(len(bars), a - base + limit)
        closes: list[int] = []  # the closes passed and their marks, for the equity samples
        marks: list[Decimal] = []
        for k in range(a - base, upto):
            bar = bars[k]
            try:
                move(symbol, candle_path(bar, interval), 4)
            except ValueError:  # a point outside the band: refused, nothing moved
                break
            close = bar.time_ms + interval
            set_clock(close)
            skipped = skip()
            if skipped:
                skips += 1
            elif skipped is False or (due := next_due()) is None or due <= close:
                self.moved, self.loud = True, skipped is False  # the plain loop's cycle
                break
            done += 1  # skipped, or no strategy due: the plain loop asks nothing either
            closes.append(close)
            marks.append(bar.close)
        self.cut_by_band = not self.loud  # the band, the bars at hand, or a cycle to ask
        if done > a:
            self.run_.cycles += skips - a
            self._sample_at(closes, marks)
        return done - a

    def _sample(self, a: int, b: int) -> None:
        """The equity samples of candles ``[a, b)`` at their closes, all but the mark as now."""
        closes = self.times[a:b] + self.interval
        for begin in range(a, b, _SAMPLES):  # a block at a time: the memory stays small
            upto = min(b, begin + _SAMPLES)
            self._sample_at(closes[begin - a : upto - a].tolist(), self.columns.closes(begin, upto))

    def _sample_at(self, closes: list[int], marks: list[Decimal]) -> None:
        """The equity samples at ``closes``, each with the mark of the same place in ``marks``
        (the candles' closes) and all else as now: :meth:`_sample` of candles given by their
        closes (those a stretch stepped through, or passed, already has)."""
        positions = self.engine.account.positions
        exposure = sum([abs(p.qty) for p in positions.values()], _ZERO) if positions else _ZERO
        self.equity.extend(closes, self.engine.equity_at(self.symbol, marks), exposure)

    def _pass(self, a: int, b: int) -> None:
        times, interval = self.times, self.interval
        closes = times[a:b] + interval
        self.run_.cycles += self.runner.pass_quiet(closes)
        tail = self._tail(a, b)
        moves = 4 * (tail - a)  # the candles whose points are dropped moved the mark too
        # the closes of the candles recorded whole, for their equity samples (a short stretch
        # recorded whole from its first candle: the rest are sampled from the columns)
        marks: list[Decimal] | None = [] if tail == a and b - a <= _SAMPLES else None
        for begin in range(tail, b, CHUNK):  # a block at a time: candles off the minute
            upto = min(b, begin + CHUNK)  # boundaries keep every point of a long stretch
            moves += 4 * (upto - begin)
            if interval == _MINUTE_MS:  # whole minutes: each recorded as its candle
                prices = self.columns.prices(begin, upto)
                try:
                    self.engine.pass_minutes(
                        self.symbol, times[begin:upto].tolist(), *prices, moves
                    )
                    moves = 0
                    if marks is not None:
                        marks.extend(prices[3])
                    continue
                except ValueError:  # off the minute, or not consistent: point by point
                    pass
            marks = None
            bars = self.columns[begin:upto]
            points = [p for bar in bars for p in candle_path(bar, interval)]
            self.engine.pass_quietly(self.symbol, points, moves)
            moves = 0
        last_close = int(closes[-1])
        self.clock.set(last_close)
        if marks is not None:
            self._sample_at(closes.tolist(), marks)
        else:
            self._sample(a, b)

    def _tail(self, a: int, b: int) -> int:
        """The first candle of ``[a, b)`` whose points the price series must record (see the
        class doc); ``a`` unless candles are whole minutes on minute boundaries."""
        interval, times = self.interval, self.times
        if b - a <= self.keep_minutes + 1:  # by_count below is a or less: every point is kept
            return a
        if interval % _MINUTE_MS or (times[a:b] % _MINUTE_MS).any():
            return a
        # every candle opens a new minute: the last keep_minutes + 1 candles fill the history,
        # and the minutes of a candle opening a day before the last-but-one close are gone
        by_count = b - self.keep_minutes - 1
        by_time = int(np.searchsorted(times, int(times[b - 2]) - _DAY_MS, side="right")) - 1
        return max(a, min(by_count, by_time))


def _count_churn(run: BacktestRun, report: CycleReport) -> None:
    """Count the cancels of the cycle, and the replacements whose cancel went through."""
    done = set()
    for effect in report.effects:
        if effect.action == "cancel" and effect.ok:
            run.cancelled[f"{effect.strategy}/{effect.rule}"] += effect.orders
            done.add((effect.strategy, effect.rule))
    for diff in report.desired:
        if (diff.strategy, diff.rule) in done:
            run.replaced[f"{diff.strategy}/{diff.rule}"] += diff.count(Action.REPLACE)


def _note_problems(run: BacktestRun, report: CycleReport) -> None:
    if report.error:
        run.note("read", report.error)
    for name, error in report.strategy_errors.items():
        run.note(name, error)
    for strategy, rule, reason in report.rule_errors:
        run.note(f"{strategy}/{rule}", reason)


_REFUSED = Outcome.REJECTED_LOCAL.value
_REJECTED = Outcome.REJECTED.value


def _result(
    base: BacktestResult,
    series: CandleSeries,
    port: AccountReads,
    journal: Journal,
    equity: Sequence[EquityPoint],
    meta: Mapping[str, str],
) -> BacktestResult:
    """The result from the journal (decisions) and the simulator (fills, positions, money)."""
    refused: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    orders: list[OrderRow] = []
    tags: dict[str, tuple[str, str]] = {}
    # one record at a time: a year of orders as records at once was the run's peak of memory
    # the rows straight from the query's plain rows (order_rows): no record per order
    for row in order_rows(journal.iter_order_cells(OrderFilter(include_dry=False))):
        if row.outcome == _REFUSED:
            refused.update(_reason_key(r) for r in row.reasons)
        elif row.outcome == _REJECTED:
            rejected[row.code or "None"] += 1  # the code as text ("None": none given)
        tags[row.cl_ord_id] = (row.strategy, row.rule)
        orders.append(row)
    start, end = series.start_ms, series.end_ms
    fills = sorted(
        iter_history(port.fills, FillQuery(start=start, end=end)),
        key=lambda f: (f.cTime or 0, int(f.id)),
    )
    closed = list(iter_history(port.position_history, PositionQuery(start=start, end=end)))
    positions = sorted(port.open_positions(), key=lambda p: (p.symbol, p.posSide.value))
    realized = sum((p.pnl or _ZERO for p in closed), _ZERO)
    realized += sum((p.pnl or _ZERO for p in positions), _ZERO)
    return BacktestResult(
        symbol=base.symbol,
        interval_ms=base.interval_ms,
        start_ms=start,
        end_ms=end,
        candles=base.candles,
        starting_balance=base.starting_balance,
        currency=base.currency,
        equity=equity,
        prices=price_points(series.bars, series.interval_ms),
        orders=orders,
        fills=[FillRow.from_fill(f, *tags.get(f.clOrdId, ("", ""))) for f in fills],
        refused_by_reason=dict(refused),
        rejected_by_code=dict(rejected),
        final_positions=[PositionRow.from_position(p) for p in positions],
        realized_pnl=realized,
        unrealized_pnl=sum((p.upl or _ZERO for p in positions), _ZERO),
        fees=sum((f.feeAmt or _ZERO for f in fills), _ZERO),
        mark=series.bars[-1].close if series.bars else None,
        meta=dict(meta),
    )
