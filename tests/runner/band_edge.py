"""Prices at the edge of the price band, on a simulator whose mark moves between two reads of
one cycle (``prices.drift_per_request``): how many orders the exchange refuses with 10014.

Every cycle one strategy rests a ladder of BUY orders from the band's top (``price.buy_limit``)
down, 2 bps apart, in 3 batches; the mark drifts down 5 bps before each request is answered, so
the band the plan was checked against is stale by the time each batch leaves. With a 429 on
every third placement, batches are re-sent later still.

    .venv/bin/python -m tests.runner.band_edge            # before (no margin, no re-check) vs after

prints the figures (docs/strategies.md, "Price band", quotes them).
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from loguru import logger

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.journal import Journal
from botkit.rules.store import StrategyStore
from botkit.runner.cycle import DEFAULT_BAND_MARGIN_BPS, Runner
from botkit.runner.execution import LiveExecution
from botkit.runner.orders import Executor
from botkit.sim.config import SimConfig
from botkit.sim.faults import FaultKind
from botkit.sim.inprocess import make_sim
from botkit.sources import FileSource
from tests.pipeline.simharness import client_for, static_config

T0 = 1_763_000_000_000 - (1_763_000_000_000 % 60_000)
MINUTE = 60_000

AT_THE_EDGE = """\
    strategy: at-the-edge
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: top-of-band
        when: price.mark > 0
        place:
          ladder: {side: BUY, count: 25, from_px: price.buy_limit, step_px: price.mark * 0.0002,
                   sz: 1}
"""


@dataclass(frozen=True, slots=True)
class Figures:
    cycles: int
    orders: int
    accepted: int
    refused_10014: int
    refused_locally: int
    other: Counter[str]
    events: Counter[str]
    """Journal events by kind (``price_band``: a 10014 journaled; ``band_recheck``: a
    re-check that refused orders)."""

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.cycles} cycles, {self.orders} orders: {self.accepted} accepted,"
            f" {self.refused_10014} refused by the exchange with 10014,"
            f" {self.refused_locally} refused locally (band re-check or margin)"
        )


def drifting_config(drift: str) -> SimConfig:
    config = static_config()
    prices = config.prices.model_copy(update={"drift_per_request": Decimal(drift)})
    return config.model_copy(update={"prices": prices})


def run_band_edge(
    folder: Path,
    *,
    cycles: int = 5,
    margin_bps: Decimal = DEFAULT_BAND_MARGIN_BPS,
    recheck: bool = True,
    drift: str = "-0.0005",
    rate_limit_every: int | None = 3,
) -> Figures:
    """Run ``cycles`` cycles of :data:`AT_THE_EDGE` and count what became of the orders."""
    clock = ManualClock(T0)
    sim = make_sim(drifting_config(drift), clock, auto_step=False, sleep=lambda s: None)
    if rate_limit_every:
        sim.faults.add(
            FaultKind.RATE_LIMIT, path="/v3/trade/orders", every=rate_limit_every, retry_after=0
        )
    client = client_for(SIM_BASE_URL, sim.config, local=clock.now_ms, transport=sim.transport)
    journal = Journal(folder / "journal.sqlite", clock=clock.now_ms, synchronous="NORMAL")
    strategies = folder / "strategies"
    strategies.mkdir(exist_ok=True)
    (strategies / "edge.yaml").write_text(textwrap.dedent(AT_THE_EDGE))
    executor = Executor(
        client,
        journal,
        resync=client.resync_clock,
        batch_rate=None,
        sleep=lambda s: None,
        band_recheck=recheck,
    )
    runner = Runner(
        port=client,
        store=StrategyStore(FileSource(strategies)),
        journal=journal,
        execution=LiveExecution(executor, client, journal),
        now_ms=client.clock.now_ms,
        band_margin_bps=margin_bps,
    )
    try:
        for _ in range(cycles):
            report = runner.run_cycle()
            assert report.ok, report.error
            clock.advance(MINUTE)
        orders = journal.orders()
        events = Counter(e.kind for e in journal.events_after(0, limit=100_000))
    finally:
        client.close()
        journal.close()
    outcomes = Counter(o.outcome.value if o.outcome else "unsettled" for o in orders)
    other = Counter(f"{o.code} {o.msg[:40]}" for o in orders if o.code not in (None, 200, 10014))
    return Figures(
        cycles=cycles,
        orders=len(orders),
        accepted=outcomes["accepted"],
        refused_10014=sum(1 for o in orders if o.code == 10014),
        refused_locally=outcomes["rejected_local"],
        other=other,
        events=events,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--drift", default="-0.0005")
    args = parser.parse_args()
    logger.remove()  # the figures only
    runs: dict[str, tuple[Decimal, bool]] = {
        "before (margin 0, no re-check)": (Decimal(0), False),
        "margin only (10 bps)": (Decimal(10), False),
        "re-check only (margin 0)": (Decimal(0), True),
        "after (margin 10 bps + re-check)": (Decimal(10), True),
    }
    for name, (margin, recheck) in runs.items():
        with tempfile.TemporaryDirectory() as folder:
            figures = run_band_edge(
                Path(folder), cycles=args.cycles, drift=args.drift, margin_bps=margin,
                recheck=recheck,
            )  # fmt: skip
        print(figures.line(name))  # noqa: T201 - a figures script prints them


if __name__ == "__main__":
    main()
