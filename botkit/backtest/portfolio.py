"""A portfolio replay: several symbols' candles in lockstep on one simulated account.

:func:`replay_portfolio` is :func:`botkit.backtest.driver.replay` for several symbols (the
files aligned by :mod:`botkit.backtest.legs`): one simulator holding every symbol, one account,
one :class:`~botkit.runner.cycle.Runner` for every strategy — so a strategy on ETH sees, and is
limited by, the margin that BTC's positions and orders hold, as on a live account. For each
candle time ``t`` (interval ``i``), over the symbols that have a candle at ``t``:

1. the four path points (:func:`~botkit.backtest.path.candle_path`) in time order, each point
   setting the clock and then every symbol's mark (symbols in the order of ``--data``): all
   symbols' prices at ``t + ¼i`` are set before any moves on to ``t + ½i``; each mark move
   fills the resting orders of its symbol it reaches;
2. at ``t + i`` — every symbol's candle has closed — the runner runs one cycle if a strategy
   is due: a rule reading another symbol's price, position or candles reads what the
   simulator holds for it, i.e. what its file has replayed up to ``t + i``, never later;
3. the equity is sampled for the account and per symbol.

A symbol without a candle at ``t`` (a gap ``--allow-gaps`` let through) keeps its mark: none of
its orders fill and the simulator makes it no candle, as an exchange whose market was quiet.

The result is the account's :class:`~botkit.backtest.result.BacktestResult` (every order, fill
and position; ``marks`` each symbol's last close) and one per symbol
(:attr:`PortfolioRun.parts`): its orders, fills, positions, PnL and fees, and its own equity
curve — the starting balance plus what that symbol booked (realized PnL of its positions, closed
or open, less their fees, plus their unrealized PnL at its mark). The parts add up to the
account: Σ of the symbols' net PnL is the account's, exactly (the simulator books every amount
to one position, and equity is wallet + unrealized PnL).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from botkit.backtest.bars import Bar
from botkit.backtest.driver import (
    BacktestRun,
    _by_rule,
    _count_churn,
    _note_problems,
    _reason_key,
    _replay_gc,
    _result,
    price_points,
)
from botkit.backtest.legs import Legs
from botkit.backtest.path import candle_path
from botkit.backtest.result import BacktestResult, EquityPoint
from botkit.clock import ManualClock
from botkit.exchange.paging import iter_history
from botkit.exchange.port import AccountReads
from botkit.exchange.queries import PositionQuery
from botkit.journal import Journal
from botkit.runner.cycle import Runner
from botkit.sim.accounts import unrealized_pnl
from botkit.sim.engine import SimEngine

__all__ = ["PortfolioRun", "replay_portfolio"]

_ZERO = Decimal(0)


@dataclass
class PortfolioRun(BacktestRun):
    """A portfolio run: :attr:`result` is the account's, :attr:`parts` one result per symbol
    (in the order of ``--data``)."""

    parts: dict[str, BacktestResult] = field(default_factory=dict)


class _Books:
    """What each symbol has booked so far, read from the simulator's account: realized PnL less
    fees of its closed positions (counted once, as they close) and of its open ones, plus their
    unrealized PnL at the symbol's mark; and its gross open size."""

    def __init__(self, engine: SimEngine, symbols: Sequence[str]) -> None:
        self._engine = engine
        self._closed = dict.fromkeys(symbols, _ZERO)
        self._seen = 0  # the last closed-position id counted
        self._ct_val = {s: engine.instruments[s].ctVal for s in symbols}

    def sample(self) -> dict[str, tuple[Decimal, Decimal]]:
        """Per symbol: (net PnL so far, gross open size)."""
        records = self._engine.history.positions.records
        new = len(records)
        while new and records[new - 1].id > self._seen:
            new -= 1
        for record in records[new:]:
            self._closed[record.symbol] += record.pnl - record.fee
        if records:
            self._seen = max(self._seen, records[-1].id)
        out = {s: (booked, _ZERO) for s, booked in self._closed.items()}
        prices = self._engine.prices
        for pos in self._engine.account.positions.values():
            s = pos.symbol
            upl = unrealized_pnl(pos.qty * self._ct_val[s], pos.avg_px, prices[s].mark)
            net, size = out[s]
            out[s] = (net + pos.pnl - pos.fee + upl, size + abs(pos.qty))
        return out


def _timeline(legs: Legs) -> list[tuple[int, list[tuple[str, Bar]]]]:
    """Per candle open time (ascending), the symbols that have a candle then, with it."""
    at: dict[int, list[tuple[str, Bar]]] = {}
    for symbol, series in legs:
        for bar in series.bars:
            at.setdefault(bar.time_ms, []).append((symbol, bar))
    return sorted(at.items())


def replay_portfolio(
    legs: Legs,
    runner: Runner,
    *,
    engine: SimEngine,
    port: AccountReads,
    clock: ManualClock,
    journal: Journal,
    meta: Mapping[str, str] | None = None,
    on_candle: Callable[[], None] | None = None,
    strategy_symbols: Mapping[str, str] | None = None,
) -> PortfolioRun:
    """Replay ``legs`` in lockstep through ``runner`` (see the module doc). The parts are
    wired by :func:`botkit.app.backtest.run_backtest`; ``strategy_symbols`` (strategy name →
    the symbol it trades) splits the per-rule order counts by symbol."""
    first = legs[0][1]
    interval = first.interval_ms
    config = engine.config
    timeline = _timeline(legs)
    label = "+".join(symbol for symbol, _ in legs)
    base = BacktestResult(label, interval, first.start_ms, first.end_ms, len(timeline),
                          config.balance.amount, config.balance.currency)  # fmt: skip
    run = PortfolioRun(result=base)
    books = _Books(engine, [symbol for symbol, _ in legs])
    with _replay_gc():
        curves = _replay(run, timeline, interval, clock, engine, runner, books, on_candle)
    account = _result(run.result, first, port, journal, curves.pop(""), meta or {})
    marks = {symbol: series.bars[-1].close for symbol, series in legs}
    account = replace(account, candles=len(timeline), prices=(), mark=None, marks=marks)
    run.result = account
    run.result = replace(account, by_rule=_by_rule(run))
    query = PositionQuery(start=first.start_ms, end=first.end_ms)
    realized: dict[str, Decimal] = {}
    for symbol, pnl in (
        *((p.symbol, p.pnl) for p in iter_history(port.position_history, query)),
        *((p.symbol, p.pnl) for p in port.open_positions()),
    ):
        realized[symbol] = realized.get(symbol, _ZERO) + (pnl or _ZERO)
    owner = strategy_symbols or {}
    for symbol, series in legs:
        part = _part(run.result, symbol, realized.get(symbol, _ZERO), curves[symbol], owner)
        part = replace(
            part,
            candles=len(series),
            prices=price_points(series.bars, interval),
            mark=series.bars[-1].close,
            meta={**part.meta, "data": series.source},
        )
        run.parts[symbol] = part
    return run


def _replay(
    run: PortfolioRun,
    timeline: Sequence[tuple[int, Sequence[tuple[str, Bar]]]],
    interval: int,
    clock: ManualClock,
    engine: SimEngine,
    runner: Runner,
    books: _Books,
    on_candle: Callable[[], None] | None,
) -> dict[str, list[EquityPoint]]:
    """The lockstep loop (see the module doc); the equity curves, the account's under ``""``."""
    start = engine.config.balance.amount
    curves: dict[str, list[EquityPoint]] = {"": []}
    curves.update((symbol, []) for symbol in books.sample())
    next_due = runner.next_due_ms()
    for t, bars in timeline:
        paths = [(symbol, candle_path(bar, interval)) for symbol, bar in bars]
        for point in range(4):
            clock.set(paths[0][1][point][0])  # the same instants for every symbol
            for symbol, path in paths:
                engine.set_mark(symbol, path[point][1])
        close_ms = t + interval
        clock.set(close_ms)
        if next_due is not None and next_due <= close_ms:
            report = runner.run_cycle()
            run.cycles += 1
            if report.error or report.strategy_errors or report.rule_errors:
                _note_problems(run, report)
            if report.effects:
                _count_churn(run, report)
            next_due = runner.next_due_ms()
        gross = _ZERO
        for symbol, (net, size) in books.sample().items():
            curves[symbol].append(EquityPoint(close_ms, start + net, size))
            gross += size
        curves[""].append(EquityPoint(close_ms, engine.equity(), gross))
        if on_candle is not None:
            on_candle()
    return curves


def _part(
    account: BacktestResult,
    symbol: str,
    realized: Decimal,
    equity: list[EquityPoint],
    owner: Mapping[str, str],
) -> BacktestResult:
    """``account`` cut to ``symbol``: its orders, fills, positions, money and equity curve."""
    orders = [o for o in account.orders if o.symbol == symbol]
    fills = [f for f in account.fills if f.symbol == symbol]
    positions = [p for p in account.final_positions if p.symbol == symbol]
    refused: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    for order in orders:
        if order.outcome == "rejected_local":
            refused.update(_reason_key(r) for r in order.reasons)
        elif order.outcome == "rejected":
            rejected[order.code] += 1
    by_rule = {
        rule: counts
        for rule, counts in account.by_rule.items()
        if owner.get(rule.partition("/")[0]) == symbol
    }
    return replace(
        account,
        symbol=symbol,
        equity=equity,
        orders=orders,
        fills=fills,
        refused_by_reason=dict(refused),
        rejected_by_code=dict(rejected),
        final_positions=positions,
        realized_pnl=realized,
        unrealized_pnl=sum((p.unrealized_pnl for p in positions), _ZERO),
        fees=sum((f.fee for f in fills), _ZERO),
        marks={},
        by_rule=by_rule,
    )
