"""Paper trading on simulated time: the service's loop and runner wired to the in-process
simulator (the composition root's job: the engine itself never names the simulator).

:func:`run_paper` is the main job of ``botkit demo``: it runs the real :class:`Loop` and
:class:`Runner` — rules, validation, batching, signed requests, journal — against the embedded
simulator on a manual clock, so hours of trading take seconds. :func:`summarize` then reads the
journal and the exchange back into the figures the demo prints.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Literal

from botkit.app.clients import SIM_BASE_URL
from botkit.backtest.result import FillRow
from botkit.backtest.trades import Trade, build_trades
from botkit.clock import ManualClock, SimulatedTime
from botkit.exchange.models import Position
from botkit.exchange.paging import iter_history
from botkit.exchange.queries import FillQuery, PositionQuery
from botkit.journal import Journal, OrderFilter, Outcome
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.rules import Strategy
from botkit.rules.store import StrategyStore
from botkit.runner.cycle import CycleReport, Runner
from botkit.runner.execution import LiveExecution
from botkit.runner.loop import Loop
from botkit.runner.orders import Executor
from botkit.service.notify import Notifier
from botkit.sim.inprocess import SimHandle
from botkit.sources import FileSource

__all__ = ["PaperRun", "Summary", "run_paper", "sim_client", "summarize"]


def sim_client(sim: SimHandle, *, signing: Literal["v3", "pf"] = "v3") -> ExchangeClient:
    """A signed client of the in-process simulator ``sim`` with its own credential, on the
    simulator's clock less the server-clock skew it may be given (the demo's client)."""
    clock = sim.clock
    key = sim.credential
    return ExchangeClient(
        SIM_BASE_URL,
        key=key.key,
        secret=key.secret,
        passphrase=key.passphrase,
        signing=signing,
        clock=ClockSync(local=lambda: clock.now_ms() - int(getattr(clock, "offset_ms", 0))),
        transport=sim.transport,
    )


@dataclass
class PaperRun:
    """What a paper run leaves behind for the summary."""

    runner: Runner
    journal: Journal
    start_ms: int
    end_ms: int
    cycles: int


def run_paper(
    sim: SimHandle,
    client: ExchangeClient,
    *,
    strategies: list[Path],
    journal: Journal,
    span_ms: int,
    on_progress: Callable[[int], None] = lambda _ms: None,
) -> PaperRun:
    """Run the strategies for ``span_ms`` of simulated time on ``sim`` (a manual clock)."""
    clock = sim.clock
    if not isinstance(clock, ManualClock):
        raise TypeError("paper runs need the simulator on a ManualClock")
    executor = Executor(client, journal, resync=client.resync_clock, batch_rate=None)
    runner = Runner(
        port=client,
        store=StrategyStore(FileSource(strategies)),
        journal=journal,
        execution=LiveExecution(executor, client, journal),
        now_ms=client.clock.now_ms,
        clock_offset_ms=lambda: client.clock.offset_ms,
    )
    start = clock.now_ms()
    end = start + span_ms

    def advance(now_ms: int) -> None:
        sim.engine.step()  # the random walk catches up, filling what it crosses
        on_progress(min(now_ms, end) - start)
        if now_ms > end:  # also ends a run in which no strategy is loaded
            loop.request_stop()

    loop: Loop

    def stop_at_end(report: CycleReport) -> None:
        if report.now_ms >= end or runner.next_due_ms() is None:
            loop.request_stop()

    loop = Loop(
        runner,
        SimulatedTime(clock, on_advance=advance),
        notifier=Notifier(),
        sync=client.clock.maybe_resync,
        on_cycle=stop_at_end,
    )
    loop.run()
    return PaperRun(runner, journal, start, clock.now_ms(), loop.cycles_run)


@dataclass
class Summary:
    """The demo's figures."""

    cycles: int
    start_ms: int
    end_ms: int
    outcomes: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    trades: list[Trade] = field(default_factory=list)
    """The run's round trips, each fill tagged with its order's strategy and rule
    (:func:`~botkit.backtest.trades.build_trades`; open ones valued at the mark)."""
    fees: Decimal = Decimal(0)
    marks: dict[str, Decimal] = field(default_factory=dict)
    positions: list[Position] = field(default_factory=list)
    realized: dict[str, Decimal] = field(default_factory=dict)
    """Realized PnL per symbol as the exchange books it (closed and open positions)."""
    equity: Decimal = Decimal(0)
    start_equity: Decimal = Decimal(0)
    strategies: tuple[str, ...] = ()


def _reason_key(reason: str) -> str:
    return reason.split(":", 1)[0].strip() or reason


def summarize(run: PaperRun, client: ExchangeClient, start_equity: Decimal) -> Summary:
    """Figures of a paper run, from the journal (decisions) and the exchange (fills, balance)."""
    rows = run.journal.orders(OrderFilter(include_dry=False))
    summary = Summary(run.cycles, run.start_ms, run.end_ms, start_equity=start_equity)
    tags: dict[str, tuple[str, str]] = {}
    for row in rows:
        tags[row.cl_ord_id] = (row.strategy, row.rule)
        summary.outcomes[row.outcome.value if row.outcome else "unsettled"] += 1
        if row.outcome is Outcome.REJECTED_LOCAL:
            for reason in row.reasons:
                summary.refused[_reason_key(reason)] += 1
        elif row.outcome is Outcome.REJECTED:
            summary.rejected[f"{row.code} {row.msg}".strip()] += 1
    fills = sorted(
        iter_history(client.fills, FillQuery(start=run.start_ms, end=run.end_ms)),
        key=lambda f: (f.cTime or 0, int(f.id) if f.id.isdigit() else 0),
    )
    summary.marks = {t.s: t.mPx for t in client.tickers() if t.mPx is not None}
    rows_ = [FillRow.from_fill(f, *tags.get(f.clOrdId, ("", ""))) for f in fills]
    summary.trades = build_trades(rows_, end_ms=run.end_ms, marks=summary.marks)
    summary.fees = sum((r.fee for r in rows_), Decimal(0))
    summary.positions = client.open_positions()
    closed = iter_history(
        client.position_history, PositionQuery(start=run.start_ms, end=run.end_ms)
    )
    for symbol, pnl in [(r.symbol, r.pnl) for r in closed] + [
        (p.symbol, p.pnl) for p in summary.positions
    ]:
        summary.realized[symbol] = summary.realized.get(symbol, Decimal(0)) + (pnl or Decimal(0))
    summary.equity = client.balance().eq or Decimal(0)
    loaded: dict[str, Strategy] = run.runner.store.strategies
    summary.strategies = tuple(sorted(loaded))
    return summary


@functools.cache
def _quant(places: int) -> Decimal:
    return Decimal(1).scaleb(-places)


def money(value: Decimal, places: int = 2) -> str:
    """A decimal rounded for display only (never for trading)."""
    return format(value.quantize(_quant(places)), "f")
