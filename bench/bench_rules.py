"""Rule evaluations per second for the example strategies over a varied set of snapshots.

``python -m bench rules``. Snapshots are seeded and varied: marks on a random walk, flat / long
/ short positions (both legs for the hedge example), resting orders of the strategies' own rules,
fills and closed orders in the last hours, and journal activity (recent fires). Each strategy is
evaluated against every snapshot; the figures are the best of several rounds (wall clock).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from botkit.exchange.models import (
    Balance,
    BalanceDetail,
    Fill,
    Instrument,
    OpenOrder,
    Order,
    OrderHistoryState,
    OrderSide,
    OrderType,
    Position,
    PosSide,
    Ticker,
)
from botkit.intents import Activity, RuleActivity
from botkit.rules import Strategy, client_order_id, evaluate
from botkit.snapshot import Snapshot
from botkit.sources import load

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "strategies").glob("**/*.yaml"))
START = 1_700_006_400_000
MINUTE = 60_000
SNAPSHOTS = 400
ROUNDS = 5

INSTRUMENTS = {
    "BTC_USDT_PERP": Instrument(
        symbol="BTC_USDT_PERP", tSz=Decimal("0.1"), lotSz=Decimal(1), minSz=Decimal(1),
        ctVal=Decimal("0.001"), minPx=Decimal("0.1"), maxPx=Decimal(1_000_000),
        ordPxRange=Decimal("0.05"), lever=Decimal(20),
    ),
    "ETH_USDT_PERP": Instrument(
        symbol="ETH_USDT_PERP", tSz=Decimal("0.01"), lotSz=Decimal(1), minSz=Decimal(1),
        ctVal=Decimal("0.01"), minPx=Decimal("0.01"), maxPx=Decimal(100_000),
        ordPxRange=Decimal("0.05"), lever=Decimal(20),
    ),
}  # fmt: skip
START_PX = {"BTC_USDT_PERP": Decimal(60_000), "ETH_USDT_PERP": Decimal(3_000)}


def _d(value: float, places: str = "0.01") -> Decimal:
    return Decimal(str(value)).quantize(Decimal(places))


def _position(rng: random.Random, symbol: str, mark: Decimal, pos_side: PosSide) -> Position:
    qty = Decimal(rng.randint(1, 30))
    short = pos_side is PosSide.SHORT or (pos_side is PosSide.BOTH and rng.random() < 0.3)
    entry = mark * _d(1 + rng.uniform(-0.01, 0.01), "0.0001")
    upl = (mark - entry) * qty * INSTRUMENTS[symbol].ctVal * (-1 if short else 1)
    im = entry * qty * INSTRUMENTS[symbol].ctVal / 20
    return Position(
        symbol=symbol, posSide=pos_side, side=OrderSide.SELL if short else OrderSide.BUY,
        qty=-qty if short else qty, availQty=qty, openAvgPx=entry, upl=upl, im=im, mm=im / 3,
        cTime=START,
    )  # fmt: skip


def _snapshot(
    rng: random.Random, k: int, marks: dict[str, Decimal], strategies: list[Strategy]
) -> Snapshot:
    now = START + k * MINUTE
    tickers = {}
    for symbol, mark in marks.items():
        high, low = (
            mark * _d(1 + rng.uniform(0, 0.02), "0.0001"),
            mark * _d(1 - rng.uniform(0, 0.02), "0.0001"),
        )
        tickers[symbol] = Ticker(
            s=symbol, c=mark, mPx=mark, iPx=mark, bPx=mark - 1, aPx=mark + 1,
            o=mark * _d(1 + rng.uniform(-0.02, 0.02), "0.0001"), h=high, l=low,
        )  # fmt: skip
    positions: list[Position] = []
    for symbol, mark in marks.items():
        if rng.random() < 0.5:
            positions.append(_position(rng, symbol, mark, PosSide.BOTH))
        for side in (PosSide.LONG, PosSide.SHORT):
            if rng.random() < 0.4:
                positions.append(_position(rng, symbol, mark, side))
    open_orders: list[OpenOrder] = []
    for s in strategies:
        for rule in s.rules:
            if rng.random() < 0.2:
                for leg in range(rng.randint(1, 5)):
                    open_orders.append(
                        OpenOrder(
                            symbol=s.symbol, side=OrderSide.BUY, type=OrderType.LIMIT,
                            px=marks[s.symbol] * Decimal("0.99"), sz=Decimal(1),
                            clOrdId=client_order_id(s.name, rule.name, now // MINUTE - 3, leg),
                            cTime=now - rng.randint(1, 60) * MINUTE,
                        )
                    )  # fmt: skip
    fills = [
        Fill(
            id=str(i), symbol=rng.choice(list(marks)), side=rng.choice(list(OrderSide)),
            px=Decimal(rng.randint(2_900, 61_000)), qty=Decimal(rng.randint(1, 10)),
            cTime=now - rng.randint(0, 600) * MINUTE,
        )
        for i in range(rng.randint(0, 40))
    ]  # fmt: skip
    history = [
        Order(
            symbol=rng.choice(list(marks)), side=rng.choice(list(OrderSide)),
            type=OrderType.LIMIT, state=OrderHistoryState.FILLED, px=Decimal(60_000),
            sz=Decimal(1), uTime=now - rng.randint(0, 600) * MINUTE,
        )
        for _ in range(rng.randint(0, 20))
    ]  # fmt: skip
    avail = _d(rng.uniform(0, 20_000))
    return Snapshot(
        now_ms=now,
        balance=Balance(eq=avail, availMgn=avail, details=[BalanceDetail(ccy="USDT", avail=avail)]),
        instruments=INSTRUMENTS,
        tickers=tickers,
        positions=positions,
        open_orders=open_orders,
        order_history=history,
        fills=fills,
    )


def _activity(rng: random.Random, strategy: Strategy, now: int) -> Activity:
    out: Activity = {}
    for rule in strategy.rules:
        if rng.random() < 0.5:
            fires = tuple(
                sorted(now - rng.randint(1, 300) * MINUTE for _ in range(rng.randint(1, 6)))
            )
            out[rule.name] = RuleActivity(fires, tuple((t, "x") for t in fires))
    return out


def _best(rounds: int, fn: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    rng = random.Random(7)
    t0 = time.perf_counter()
    strategies = [load(p, instruments=INSTRUMENTS) for p in EXAMPLES]
    load_ms = (time.perf_counter() - t0) * 1000 / len(strategies)
    marks = dict(START_PX)
    cases: list[tuple[Strategy, Snapshot, Activity]] = []
    for k in range(SNAPSHOTS):
        for symbol in marks:
            marks[symbol] = _d(float(marks[symbol]) * (1 + rng.gauss(0, 0.002)))
        snap = _snapshot(rng, k, marks, strategies)
        cases += [(s, snap, _activity(rng, s, snap.now_ms)) for s in strategies]

    def run() -> None:
        for strategy, snap, activity in cases:
            evaluate(strategy, snap, activity, snap.now_ms)

    run()  # warm up the caches (client id hashes, duration parses)
    seconds = _best(ROUNDS, run)
    rules = sum(len(s.rules) for s, _, _ in cases)
    results = [evaluate(s, snap, a, snap.now_ms) for s, snap, a in cases]
    fired = sum(len(e.fired) for e in results)
    intents = sum(len(e.intents) for e in results)
    errors = sum(len(e.errors) for e in results)
    print(f"strategies: {', '.join(s.name for s in strategies)}")
    print(f"load + check + compile: {load_ms:.1f} ms per file")
    print(
        f"{len(cases)} strategy evaluations ({rules} rule evaluations) over {SNAPSHOTS} "
        f"snapshots: best of {ROUNDS} rounds {seconds * 1000:.0f} ms"
    )
    per_case = seconds / len(cases) * 1e6
    print(f"  {len(cases) / seconds:,.0f} strategy evaluations/s ({per_case:.1f} µs each)")
    print(f"  {rules / seconds:,.0f} rule evaluations/s ({seconds / rules * 1e6:.1f} µs each)")
    print(f"  rules fired: {fired} ({fired / rules:.1%}), intents: {intents}, errors: {errors}")
    quiet = [c for c, e in zip(cases, results, strict=True) if not e.fired]

    def run_quiet() -> None:
        for strategy, snap, activity in quiet:
            evaluate(strategy, snap, activity, snap.now_ms)

    quiet_rules = sum(len(s.rules) for s, _, _ in quiet)
    seconds = _best(ROUNDS, run_quiet)
    print(
        f"  when nothing fires ({len(quiet)} evaluations): "
        f"{seconds / len(quiet) * 1e6:.1f} µs per strategy evaluation, "
        f"{quiet_rules / seconds:,.0f} rule evaluations/s"
    )
    for strategy in strategies:
        mine = [c for c in cases if c[0] is strategy]

        def one(mine: list[tuple[Strategy, Snapshot, Activity]] = mine) -> None:
            for s, snap, activity in mine:
                evaluate(s, snap, activity, snap.now_ms)

        per = _best(ROUNDS, one) / len(mine)
        print(f"  {strategy.name}: {per * 1e6:.1f} µs per evaluation ({len(strategy.rules)} rules)")


if __name__ == "__main__":
    main()
