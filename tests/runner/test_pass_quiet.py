""":meth:`Runner.pass_quiet` moves each strategy's next run time on and counts the cycles as
calling it at each close in turn does (one close at a time is the plain loop's rule: a
strategy is due when its next run time is reached), for strategies of several periods, next
run times in the past, the future or between the closes, and closes with gaps."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from botkit.app.backtest import make_runner
from botkit.backtest.setup import backtest_sim_config
from botkit.clock import ManualClock
from botkit.journal import Journal
from botkit.rules.loader import loads
from botkit.runner.cycle import Runner
from botkit.sim.config import load_sim_config
from botkit.sim.inprocess import make_sim
from botkit.sim.port import SimPort

T0 = 1_704_067_200_000
MINUTE = 60_000

QUIET = (
    "strategy: s{index}\nsymbol: BTC_USDT_PERP\nevery: {every}\n"
    "rules:\n  - name: tidy\n    when: strategy.open_orders > 5\n    cancel: {{}}\n"
)


def _runner(everies: list[str]) -> tuple[Runner, ManualClock, Journal]:
    config = backtest_sim_config(
        load_sim_config(None), symbol="BTC_USDT_PERP", first_price=Decimal(60000)
    )
    clock = ManualClock(T0)
    sim = make_sim(config, clock, auto_step=False)
    journal = Journal(":memory:", clock=clock.now_ms, synchronous="OFF")
    strategies = [
        loads(QUIET.format(index=i, every=every), f"s{i}.yaml") for i, every in enumerate(everies)
    ]
    return make_runner(SimPort(sim.engine), journal, strategies, skip_quiet=True), clock, journal


def _evaluated(runner: Runner, clock: ManualClock, start: int, minutes: int) -> list[list[str]]:
    """The strategies each cycle at the next ``minutes`` minute closes from ``start`` runs."""
    out: list[list[str]] = []
    for minute in range(1, minutes + 1):
        clock.set(start + minute * MINUTE)
        report = runner.run_cycle()
        out.append(sorted(e.strategy for e in report.evaluations))
    return out


@settings(max_examples=40, deadline=None)
@given(
    everies=st.lists(st.sampled_from(["1m", "3m", "5m", "15m", "1h"]), min_size=1, max_size=3),
    first_run=st.integers(0, 90),
    gaps=st.lists(st.sampled_from([1, 1, 1, 1, 2, 7, 30]), min_size=1, max_size=150),
)
@example(everies=["3m"], first_run=0, gaps=[1, 1, 1, 1, 7])  # two closes in one period, a gap
def test_passing_closes_at_once_is_passing_them_one_at_a_time(
    everies: list[str], first_run: int, gaps: list[int]
) -> None:
    seen = []
    for whole in (True, False):
        runner, clock, journal = _runner(everies)
        clock.set(T0 + first_run * MINUTE)  # a cycle first: each strategy's next run time set
        runner.run_cycle()
        closes = T0 + (first_run + np.cumsum(np.array(gaps, dtype=np.int64))) * MINUTE
        if whole:
            cycles = runner.pass_quiet(closes)
        else:
            cycles = sum(runner.pass_quiet(closes[i : i + 1]) for i in range(len(closes)))
        seen.append((cycles, _evaluated(runner, clock, int(closes[-1]), 70)))
        journal.close()
    assert seen[0] == seen[1]
