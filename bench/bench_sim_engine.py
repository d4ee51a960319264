"""The simulator engine in process: set_mark throughput and the cost of SimPort calls.

The backtest moves the mark about 2 million times for a year of minute candles (4 path points a
candle) and reads the account every minute, so these are the figures that bound it:

* ``set_mark`` calls per second with 20 resting orders none of which the mark crosses (the
  common case: two comparisons), and with the path crossing and refilling orders now and then;
* ``SimPort.place_orders`` cost per order (batches of 10 resting LIMIT orders, then cancelled);
* per candle of the backtest: four ``set_mark`` calls, then the reads of one runner cycle through
  SimPort and the driver's ``engine.equity()`` sample — with one position and 12 resting orders,
  and with none. Two cycles: one reading everything (tickers, limit price, position mode,
  balance, open positions, open orders), and the usual cycle of the year-long backtest, whose
  rules stop at ``position.qty`` so that the runner's lazy snapshot reads only the open
  positions and the open orders (the balance totals are then summed by no one).

Run: ``python -m bench sim_engine``.
"""

from __future__ import annotations

import time
from decimal import Decimal

from botkit.clock import ManualClock
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.sim import SimEngine, load_sim_config
from botkit.sim.port import SimPort

SYMBOL = "BTC_USDT_PERP"
T0 = 1_700_000_000_000
MARKS = 400_000


def _engine() -> tuple[SimEngine, ManualClock]:
    base = load_sim_config(None)
    config = base.model_copy(update={"prices": base.prices.model_copy(update={"model": "static"})})
    clock = ManualClock(T0)
    return SimEngine(config, clock), clock


def _rest(port: SimPort, prefix: str, per_side: int = 10) -> None:
    """``per_side`` resting LIMIT orders each side, 10 apart, away from the 60,000 mark."""
    for side, start in ((OrderSide.BUY, 59000), (OrderSide.SELL, 61000)):
        step = -10 if side is OrderSide.BUY else 10
        orders = [
            OrderRequest(
                symbol=SYMBOL,
                side=side,
                type=OrderType.LIMIT,
                sz=Decimal(1),
                px=Decimal(start + i * step),
                clOrdId=f"{prefix}-{side.value}-{i}",
            )
            for i in range(per_side)
        ]
        assert all(r.accepted for r in port.place_orders(orders))


def bench_set_mark_quiet() -> float:
    engine, clock = _engine()
    _rest(SimPort(engine), "q")
    path = [Decimal(60000 + (i % 400) - 200) for i in range(MARKS)]
    set_mark = engine.set_mark
    start = time.perf_counter()
    for px in path:
        clock.advance(15_000)
        set_mark(SYMBOL, px)
    return MARKS / (time.perf_counter() - start)


def bench_set_mark_crossing() -> tuple[float, int]:
    """A wider path that crosses the ladders; crossed orders are re-placed every 1,000 marks."""
    engine, clock = _engine()
    port = SimPort(engine)
    _rest(port, "c0")
    path = [Decimal(60000 + ((i * 7) % 2400) - 1200) for i in range(MARKS)]
    start = time.perf_counter()
    refills = 0
    for i, px in enumerate(path):
        clock.advance(15_000)
        engine.set_mark(SYMBOL, px)
        if i % 1000 == 999:
            port.cancel_all(SYMBOL)
            engine.set_mark(SYMBOL, Decimal(60000))
            _rest(port, f"c{i}")
            refills += 1
    return MARKS / (time.perf_counter() - start), refills


def bench_place_orders(batches: int = 2000) -> float:
    engine, _ = _engine()
    port = SimPort(engine)
    orders = [
        [
            OrderRequest(
                symbol=SYMBOL,
                side=OrderSide.BUY,
                type=OrderType.LIMIT,
                sz=Decimal(1),
                px=Decimal(59000 - i),
                clOrdId=f"b{b}-{i}",
            )
            for i in range(10)
        ]
        for b in range(batches)
    ]
    elapsed = 0.0
    for batch in orders:
        start = time.perf_counter()
        port.place_orders(batch)
        elapsed += time.perf_counter() - start
        port.cancel_all(SYMBOL)
    return elapsed / (batches * 10) * 1e6


def _cycle_engine(position: bool) -> tuple[SimEngine, ManualClock, SimPort]:
    """The backtest's simulator (one instrument, static prices) holding one open position and 12
    resting orders, or nothing at all."""
    base = load_sim_config(None)
    config = base.model_copy(
        update={
            "instruments": [i for i in base.instruments if i.symbol == SYMBOL],
            "prices": base.prices.model_copy(update={"model": "static"}),
        }
    )
    clock = ManualClock(T0)
    engine = SimEngine(config, clock)
    port = SimPort(engine)
    if position:
        buy = OrderRequest(symbol=SYMBOL, side=OrderSide.BUY, type=OrderType.MARKET, sz=Decimal(5))
        assert port.place_orders([buy])[0].accepted
        _rest(port, "l", per_side=6)
    return engine, clock, port


def bench_cycle_reads(
    cycles: int = 5000, position: bool = True, repeats: int = 5, every_read: bool = True
) -> tuple[float, ...]:
    """(set_mark µs per call, reads µs per cycle, equity µs): per candle 4 marks 15 s apart,
    then the reads of one runner cycle (``every_read``: tickers, limit price, position mode,
    balance, open positions, open orders; else only open positions and open orders) and the
    driver's equity sample; the best of ``repeats`` runs."""
    best = (float("inf"), float("inf"), float("inf"))
    for _ in range(repeats):
        engine, clock, port = _cycle_engine(position)
        paths = [
            [Decimal(60000 + (i * 37) % 400 - 200 + k) for k in range(4)] for i in range(cycles)
        ]
        marks = reads = equity = 0.0
        clock_ = time.perf_counter
        for path in paths:
            t0 = clock_()
            for px in path:
                clock.advance(15_000)
                engine.set_mark(SYMBOL, px)
            t1 = clock_()
            if every_read:
                port.tickers()
                port.limit_price(SYMBOL)
                port.position_mode()
                port.balance()
            port.open_positions()
            port.open_orders()
            t2 = clock_()
            engine.equity()
            t3 = clock_()
            marks += t1 - t0
            reads += t2 - t1
            equity += t3 - t2
        run = (marks / cycles / 4 * 1e6, reads / cycles * 1e6, equity / cycles * 1e6)
        best = (min(best[0], run[0]), min(best[1], run[1]), min(best[2], run[2]))
    return best


def main() -> None:
    quiet = bench_set_mark_quiet()
    crossing, refills = bench_set_mark_crossing()
    per_order = bench_place_orders()
    year = 525_600 * 4
    print(f"set_mark, 20 resting orders, nothing crossed: {quiet:12,.0f} calls/s")
    print(
        f"set_mark, path crossing the ladders ({refills} refills of 20): {crossing:12,.0f} calls/s"
    )
    print(f"  -> a year of minute candles ({year:,} marks): {year / quiet:.1f} s quiet")
    print(f"SimPort.place_orders (batches of 10 resting LIMIT): {per_order:8.1f} µs/order")
    for position, label in ((True, "1 position + 12 resting orders"), (False, "empty account")):
        for every_read, reads_label in ((True, "every read"), (False, "positions + orders")):
            mark, reads, equity = bench_cycle_reads(position=position, every_read=every_read)
            print(
                f"backtest candle, {label}: set_mark {mark:.2f} µs/call (4 a candle, clock"
                f" included), cycle reads ({reads_label}) {reads:.1f} µs,"
                f" engine.equity() {equity:.2f} µs"
            )


if __name__ == "__main__":
    main()
