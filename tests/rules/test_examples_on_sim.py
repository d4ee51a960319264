"""The example strategies do something sensible on the simulator within a few simulated hours.

A deliberately small driver stands in for the runner here: read a snapshot from the in-process
simulator each minute, evaluate, round prices passively to the tick and sizes to the lot, place
in batches of 10, cancel what a cancel intent names, reconcile the keep: rules' declared orders
(the runner's :func:`~botkit.runner.keeping.diffs`), and remember each rule's activity as the
journal would.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR
from pathlib import Path

from botkit.clock import ManualClock
from botkit.exchange.models import OrderSide, PositionMode
from botkit.exchange.queries import FillQuery, OrderQuery, PositionQuery
from botkit.intents import Activity, CancelIntent, OrderIntent, RuleActivity
from botkit.rules import Strategy, belongs_to, evaluate
from botkit.runner.candles import CandleBook
from botkit.runner.keeping import diffs
from botkit.sim.config import load_sim_config
from botkit.sim.engine import SimEngine
from botkit.sim.port import SimPort
from botkit.snapshot import Snapshot
from botkit.sources import load

REPO = Path(__file__).resolve().parents[2]
START = 1_700_006_400_000  # a whole hour
MINUTE = 60_000
DAY = 86_400_000


@dataclass
class Driver:
    port: SimPort
    clock: ManualClock
    strategies: list[Strategy]
    activity: dict[str, Activity] = field(default_factory=dict)
    placed: Counter[tuple[str, str]] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    fired: Counter[tuple[str, str]] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    candles: CandleBook = field(init=False)

    def __post_init__(self) -> None:
        port = self.port
        self.candles = CandleBook(
            lambda symbol, word, start, end, limit: port.candles(
                symbol, word, start=start, end=end, limit=limit
            )
        )

    def snapshot(self) -> Snapshot:
        p, now = self.port, self.clock.now_ms()
        return Snapshot(
            now_ms=now,
            balance=p.balance(),
            instruments={i.symbol: i for i in p.instruments()},
            tickers={t.s: t for t in p.tickers()},
            positions=p.open_positions(),
            open_orders=p.open_orders(),
            order_history=p.order_history(OrderQuery(start=now - DAY, limit=100)),
            fills=p.fills(FillQuery(start=now - DAY, limit=100)),
            position_history=p.position_history(PositionQuery(start=now - DAY, limit=100)),
            position_mode=p.position_mode(),
            candles=self.candles.at(
                now, {x.bind(s.symbol) for s in self.strategies for x in s.series}
            ),
        )

    def cycle(self) -> None:
        snap = self.snapshot()
        for strategy in self.strategies:
            acts = self.activity.setdefault(strategy.name, {})
            result = evaluate(strategy, snap, acts, snap.now_ms)
            self.errors += [r.reason for r in result.errors]
            orders = [i for i in result.intents if isinstance(i, OrderIntent)]
            for r in result.results:
                if r.fired:
                    self.fired[(strategy.name, r.rule)] += 1
                    old = acts.get(r.rule, RuleActivity())
                    acts[r.rule] = RuleActivity((*old.fire_times_ms, snap.now_ms), old.orders)
            for intent in result.intents:
                if isinstance(intent, CancelIntent):
                    self.cancel(intent, snap)
            for diff in diffs([(strategy, result)], snap, lambda s: self.activity[s.name]):
                ids = [o.clOrdId for o in diff.cancels]
                for k in range(0, len(ids), 10):
                    self.port.cancel_orders(strategy.symbol, cl_ord_ids=ids[k : k + 10])
                orders += [d.intent for d in diff.changes if d.intent is not None]
            for k in range(0, len(orders), 10):
                self.place(orders[k : k + 10], snap, acts)

    def place(self, orders: list[OrderIntent], snap: Snapshot, acts: Activity) -> None:
        requests = []
        for o in orders:
            inst = snap.instruments[o.symbol]
            px = None
            if o.px is not None:
                rounding = ROUND_FLOOR if o.side is OrderSide.BUY else ROUND_CEILING
                px = (o.px / inst.tSz).to_integral_value(rounding) * inst.tSz
            sz = (o.sz / inst.lotSz).to_integral_value(ROUND_FLOOR) * inst.lotSz
            requests.append(o.to_request(px=px, sz=sz))
        for o, res in zip(orders, self.port.place_orders(requests), strict=True):
            if res.accepted:
                self.placed[(o.strategy, o.rule)] += 1
                old = acts.get(o.rule, RuleActivity())
                acts[o.rule] = RuleActivity(
                    old.fire_times_ms, (*old.orders, (snap.now_ms, o.cl_ord_id))
                )
            else:
                self.refused[f"{o.rule}: {res.code} {res.msg}"] += 1

    def cancel(self, intent: CancelIntent, snap: Snapshot) -> None:
        ids = [
            o.clOrdId
            for o in snap.open_orders
            if o.symbol == intent.symbol
            and belongs_to(o.clOrdId, intent.strategy, intent.only_rule)
        ]
        for k in range(0, len(ids), 10):
            self.port.cancel_orders(intent.symbol, cl_ord_ids=ids[k : k + 10])

    def run(self, minutes: int) -> None:
        for _ in range(minutes):
            self.clock.advance(MINUTE)
            self.port.engine.step()
            self.cycle()


def driver(paths: list[Path], mode: PositionMode = PositionMode.ONE_WAY) -> Driver:
    config = load_sim_config(None).model_copy(update={"position_mode": mode})
    clock = ManualClock(START)
    port = SimPort(SimEngine(config, clock))
    instruments = {i.symbol: i for i in port.instruments()}
    strategies = [load(p, instruments=instruments) for p in paths]
    return Driver(port, clock, strategies)


def test_one_way_examples_trade_within_six_simulated_hours() -> None:
    d = driver(sorted((REPO / "strategies").glob("*.yaml")))
    d.run(6 * 60)
    assert d.errors == []
    assert d.refused == Counter()
    assert d.placed[("btc-dip-ladder", "ladder-on-dip")] >= 12
    assert d.placed[("btc-grid-keep", "grid")] >= 8
    assert d.fired[("btc-exits", "take-profit")] + d.fired[("btc-exits", "stop-loss")] >= 1
    assert d.placed[("eth-margin-sized", "enter-long")] >= 1
    assert d.port.fills(FillQuery(limit=100))


def test_hedge_example_opens_both_legs_and_takes_profit() -> None:
    d = driver([REPO / "strategies" / "hedge" / "eth-hedge-legs.yaml"], PositionMode.HEDGE)
    d.run(6 * 60)
    assert d.errors == []
    assert d.refused == Counter()
    assert d.placed[("eth-hedge-legs", "open-long")] >= 1
    assert d.placed[("eth-hedge-legs", "open-short")] >= 1
    assert d.fired[("eth-hedge-legs", "take-long")] + d.fired[("eth-hedge-legs", "take-short")] >= 1
