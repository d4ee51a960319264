"""The simulator engine in process: set_mark throughput and the cost of SimPort calls.

The backtest moves the mark about 2 million times for a year of minute candles (4 path points a
candle) and reads the account every minute, so these are the figures that bound it:

* ``set_mark`` calls per second with 20 resting orders none of which the mark crosses (the
  common case: two comparisons), and with the path crossing and refilling orders now and then;
* ``SimPort.place_orders`` cost per order (batches of 10 resting LIMIT orders, then cancelled);
* one strategy cycle of reads through SimPort (balance, positions, open orders, ticker).

Run: ``python -m bench sim_engine``.
"""

from __future__ import annotations

import time
from decimal import Decimal

from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.sim import ManualClock, SimEngine, load_sim_config
from botkit.sim.port import SimPort

SYMBOL = "BTC_USDT_PERP"
T0 = 1_700_000_000_000
MARKS = 400_000


def _engine() -> tuple[SimEngine, ManualClock]:
    base = load_sim_config(None)
    config = base.model_copy(update={"prices": base.prices.model_copy(update={"model": "static"})})
    clock = ManualClock(T0)
    return SimEngine(config, clock), clock


def _rest_twenty(port: SimPort, prefix: str) -> None:
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
            for i in range(10)
        ]
        assert all(r.accepted for r in port.place_orders(orders))


def bench_set_mark_quiet() -> float:
    engine, clock = _engine()
    _rest_twenty(SimPort(engine), "q")
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
    _rest_twenty(port, "c0")
    path = [Decimal(60000 + ((i * 7) % 2400) - 1200) for i in range(MARKS)]
    start = time.perf_counter()
    refills = 0
    for i, px in enumerate(path):
        clock.advance(15_000)
        engine.set_mark(SYMBOL, px)
        if i % 1000 == 999:
            port.cancel_all(SYMBOL)
            engine.set_mark(SYMBOL, Decimal(60000))
            _rest_twenty(port, f"c{i}")
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


def bench_cycle_reads(cycles: int = 5000, marks: bool = False) -> float:
    engine, clock = _engine()
    port = SimPort(engine)
    _rest_twenty(port, "r")
    port.place_orders(
        [OrderRequest(symbol=SYMBOL, side=OrderSide.BUY, type=OrderType.MARKET, sz=Decimal(5))]
    )
    start = time.perf_counter()
    path = [Decimal(60000 + (i % 40) * 10 - 200) for i in range(4)]
    for _ in range(cycles):
        clock.advance(60_000)
        if marks:
            for px in path:
                engine.set_mark(SYMBOL, px)
        port.balance()
        port.open_positions(SYMBOL)
        port.open_orders(SYMBOL)
        port.tickers(SYMBOL)
    return (time.perf_counter() - start) / cycles * 1e6


def main() -> None:
    quiet = bench_set_mark_quiet()
    crossing, refills = bench_set_mark_crossing()
    per_order = bench_place_orders()
    cycle = bench_cycle_reads()
    cycle_moving = bench_cycle_reads(marks=True)
    year = 525_600 * 4
    print(f"set_mark, 20 resting orders, nothing crossed: {quiet:12,.0f} calls/s")
    print(
        f"set_mark, path crossing the ladders ({refills} refills of 20): {crossing:12,.0f} calls/s"
    )
    print(f"  -> a year of minute candles ({year:,} marks): {year / quiet:.1f} s quiet")
    print(f"SimPort.place_orders (batches of 10 resting LIMIT): {per_order:8.1f} µs/order")
    print(f"SimPort cycle reads (balance, positions, open orders, ticker): {cycle:8.1f} µs")
    print(
        f"  the same after 4 set_mark calls (marks moved, caches refreshed): {cycle_moving:8.1f} µs"
    )


if __name__ == "__main__":
    main()
