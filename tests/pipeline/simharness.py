"""Driving the pipeline against the simulator: a client, a snapshot, a recorder of placements, and
the checks every fault case ends with (no duplicate, one final outcome, exchange == journal).

Also runnable as the child process of the SIGKILL test:
``python -m tests.pipeline.simharness URL JOURNAL COUNT`` places COUNT orders through the pipeline
against the loopback simulator at URL, journaling to JOURNAL.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from pydantic import SecretStr

from botkit.exchange.models import Balance
from botkit.exchange.port import ExchangePort
from botkit.exchange.queries import OrderQuery
from botkit.intents import OrderIntent
from botkit.journal import Journal, OrderFilter, Outcome
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.pipeline import build_plan
from botkit.runner.orders import Executor, RetryPolicy
from botkit.sim.config import SimConfig, load_sim_config
from botkit.snapshot import Snapshot
from tests.pipeline.helpers import intent

SYMBOL = "BTC_USDT_PERP"
PLACE = "/v3/trade/orders"


def static_config() -> SimConfig:
    """The built-in simulator config with marks that move only when told (60000 for BTC)."""
    config = load_sim_config(None)
    prices = config.prices.model_copy(update={"model": "static"})
    return config.model_copy(update={"prices": prices})


def client_for(
    base_url: str,
    config: SimConfig,
    *,
    local: Callable[[], int] | None = None,
    transport: Any = None,
    timeout: float = 5.0,
) -> ExchangeClient:
    key = config.auth.keys[0]
    return ExchangeClient(
        base_url,
        key=key.key,
        secret=SecretStr(key.secret.get_secret_value()),
        passphrase=SecretStr(key.passphrase.get_secret_value()),
        clock=ClockSync(local=local, interval_ms=0) if local else ClockSync(interval_ms=0),
        transport=transport,
        timeout=timeout,
    )


def public_snapshot(port: ExchangePort, now_ms: int) -> Snapshot:
    """A snapshot from public reads only (instruments and marks)."""
    return Snapshot(
        now_ms=now_ms,
        balance=Balance(),
        instruments={i.symbol: i for i in port.instruments()},
        tickers={t.s: t for t in port.tickers()},
    )


def ladder(count: int, *, strategy: str = "ladder", base: str = "59000") -> list[OrderIntent]:
    """``count`` resting BUY limits below the 60000 mark, off tick so they get rounded."""
    return [
        intent(
            n,
            strategy=strategy,
            rule="buy",
            px=str(Decimal(base) - n - Decimal("0.05")),
            inputs={"mark": "60000"},
        )
        for n in range(count)
    ]


class PlacementRecorder:
    """Wraps the simulator's wire API and counts placement answers per client order id."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self.placed: Counter[str] = Counter()
        self.duplicates: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()

    def is_public(self, method: str, path: str) -> bool:
        result: bool = self._api.is_public(method, path)
        return result

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        data = self._api.call(method, path, query, body)
        if method == "POST" and path == PLACE:
            for item in data:
                code = int(item["code"])
                target = {200: self.placed, 250: self.duplicates}.get(code, self.rejected)
                target[item["clOrdId"]] += 1
        return data


def exchange_orders(port: ExchangePort) -> dict[str, str]:
    """clOrdId → ordId of every order the exchange has (open or closed)."""
    found: dict[str, str] = {o.clOrdId: o.ordId for o in port.open_orders(SYMBOL)}
    for order in port.order_history(OrderQuery(symbol=SYMBOL, limit=100)):
        found.setdefault(order.clOrdId, order.ordId)
    return found


def check_invariants(journal: Journal, port: ExchangePort, recorder: PlacementRecorder) -> None:
    """No client order id placed twice, one final outcome per order, exchange == journal."""
    assert all(n == 1 for n in recorder.placed.values()), recorder.placed
    assert not recorder.duplicates, f"re-sent orders the exchange had: {recorder.duplicates}"
    rows = journal.orders(OrderFilter(include_dry=False))
    assert rows
    unsettled = [r.cl_ord_id for r in rows if r.outcome is None]
    assert not unsettled, f"orders without a final outcome: {unsettled}"
    accepted = {r.cl_ord_id: r.ord_id for r in rows if r.outcome is Outcome.ACCEPTED}
    assert accepted == exchange_orders(port)
    assert set(accepted) == set(recorder.placed)


def run_pipeline(
    port: ExchangePort,
    journal: Journal,
    intents: list[OrderIntent],
    *,
    resync: Callable[[], object] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    concurrency: int = 1,
    batch_rate: float | None = None,
    grace_ms: int = 15_000,
    start_up: bool = False,
) -> Any:
    executor = Executor(
        port,
        journal,
        resync=resync,
        sleep=sleep,
        policy=RetryPolicy(jitter=0.0, base_delay=0.01),
        concurrency=concurrency,
        batch_rate=batch_rate,
        reconcile_grace_ms=grace_ms,
    )
    if start_up:  # what the runner does first: settle what a previous run left open
        executor.reconcile()
    plan = build_plan(
        intents, public_snapshot(port, journal.clock())
    )  # the executor skips known ids
    return executor.run(plan, cycle_id=journal.begin_cycle())


def _child(url: str, journal_path: str, count: int) -> int:
    """The SIGKILL victim: places ``count`` orders and waits (the parent kills it meanwhile)."""
    config = static_config()
    client = client_for(url, config, timeout=120.0)
    with Journal(journal_path, clock=lambda: time.time_ns() // 1_000_000) as journal:
        run_pipeline(
            client, journal, ladder(count), resync=client.resync_clock, grace_ms=1_000,
            start_up=True,
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2], int(sys.argv[3])))
