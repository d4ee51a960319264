"""The pipeline's cost: 1,000 orders through validate, batch, sign and journal (in process), and
how concurrent batches change the time to place 100 orders on the loopback simulator.

``python -m bench pipeline``. Figures are wall-clock on this machine; the loopback part also
shows the effect of the 5 batch requests per second the exchange allows.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import WallClock
from botkit.exchange import signing
from botkit.exchange.models import Balance, OrderSide, OrderType
from botkit.exchange.port import ExchangePort
from botkit.intents import OrderIntent
from botkit.journal import Journal, Synchronous
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.pipeline import build_plan
from botkit.runner.orders import Executor, RetryPolicy
from botkit.sim.config import SimConfig, load_sim_config
from botkit.sim.inprocess import make_sim
from botkit.sim.port import SimPort
from botkit.sim.server import SimServer
from botkit.snapshot import Snapshot

SYMBOL = "BTC_USDT_PERP"


def _config() -> SimConfig:
    config = load_sim_config(None)
    prices = config.prices.model_copy(update={"model": "static"})
    balance = config.balance.model_copy(update={"amount": Decimal(10_000_000)})
    return config.model_copy(update={"prices": prices, "balance": balance})


def _intents(count: int, tag: str) -> list[OrderIntent]:
    return [
        OrderIntent(
            strategy="bench",
            rule=tag,
            slot=1,
            leg=n,
            cl_ord_id=f"{tag}-{n}",
            symbol=SYMBOL,
            side=OrderSide.BUY,
            type=OrderType.LIMIT,
            sz=Decimal("1.5"),
            px=Decimal("59000") - Decimal(n % 1000) / 2 - Decimal("0.03"),
            inputs={"mark": "60000"},
        )
        for n in range(count)
    ]


def _snapshot(port: ExchangePort) -> Snapshot:
    return Snapshot(
        now_ms=0,
        balance=Balance(),
        instruments={i.symbol: i for i in port.instruments()},
        tickers={t.s: t for t in port.tickers()},
    )


def _client(url: str, config: SimConfig, transport: Any = None) -> ExchangeClient:
    key = config.auth.keys[0]
    return ExchangeClient(
        url,
        key=key.key,
        secret=SecretStr(key.secret.get_secret_value()),
        passphrase=SecretStr(key.passphrase.get_secret_value()),
        clock=ClockSync(interval_ms=0),
        transport=transport,
        timeout=30.0,
    )


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _executor(port: ExchangePort, journal: Journal, **kw: Any) -> Executor:
    return Executor(
        port, journal, policy=RetryPolicy(jitter=0.0), rng=random.Random(1), batch_rate=None, **kw
    )


class TimedPort:
    """Passes every call to ``port``; adds the time spent in ``place_orders`` (the exchange's
    own work) to ``exchange_s`` so the pipeline's share can be told apart."""

    def __init__(self, port: Any) -> None:
        self._port = port
        self.exchange_s = 0.0

    def place_orders(self, orders: Any) -> Any:
        start = time.perf_counter()
        try:
            return self._port.place_orders(orders)
        finally:
            self.exchange_s += time.perf_counter() - start

    def __getattr__(self, name: str) -> Any:
        return getattr(self._port, name)


def _end_to_end(label: str, port: Any, journal: Journal, plan: Any, count: int) -> None:
    timed = TimedPort(port)
    executor = _executor(timed, journal)
    elapsed, report = _timed(lambda: executor.run(plan))
    ours = elapsed - timed.exchange_s
    batches = len(plan.batches)
    accepted = sum(1 for o in report.outcomes if o.outcome.value == "accepted")
    print(
        f"  {label:<44} pipeline {ours / count * 1e6:7.1f} us/order {ours / batches * 1e3:6.2f}"
        f" ms/batch; exchange {timed.exchange_s / count * 1e6:7.1f} us/order ({accepted} ok)"
    )


def in_process(count: int = 1000) -> None:
    """Per-order and per-batch cost of each stage, then end to end (exchange time apart)."""
    config = _config()
    port = SimPort(make_sim(config, WallClock(), auto_step=False).engine)
    snap = _snapshot(port)
    intents = _intents(count, "plan")
    build_plan(intents[:50], snap)  # warm up
    t_plan, plan = _timed(lambda: build_plan(intents, snap))
    batches = len(plan.batches)
    print(f"orders: {count} in {batches} batches of <= 10")
    print(f"  validate + round + guards + batch: {t_plan / count * 1e6:8.1f} us/order")

    def sign_all() -> None:
        for batch in plan.batches:
            body = json.dumps([o.wire() for o in batch], separators=(",", ":"))
            signing.v3_headers(
                key="k",
                secret="bench",  # noqa: S106 - a benchmark, not a credential
                method="POST",
                path="/v3/trade/orders",
                params={},
                body=body,
                timestamp=1_700_000_000_000,
            )

    t_sign, _ = _timed(sign_all)
    print(f"  serialise + sign (v3):             {t_sign / batches * 1e6:8.1f} us/batch")

    with tempfile.TemporaryDirectory(dir=".") as tmp:
        for sync in ("FULL", "NORMAL", "OFF"):
            mode: Synchronous = sync
            with Journal(Path(tmp) / f"j-{sync}.sqlite", clock=_wall_ms, synchronous=mode) as j:
                sim = make_sim(config, WallClock(), auto_step=False)
                p = build_plan(_intents(count, f"j{sync}"), snap)
                _end_to_end(
                    f"SimPort, journal synchronous={sync}", SimPort(sim.engine), j, p, count
                )
        sim = make_sim(config, WallClock(), auto_step=False)
        client = _client(SIM_BASE_URL, config, sim.transport)
        with Journal(Path(tmp) / "j-client.sqlite", clock=_wall_ms) as j:
            p = build_plan(_intents(count, "client"), snap)
            _end_to_end("ExchangeClient in process (signed), FULL", client, j, p, count)
        client.close()


CASES: tuple[tuple[int, float | None], ...] = (
    (0, None),
    (0, 5.0),
    (50, None),
    (50, 5.0),
    (400, 5.0),
)
"""(answer latency in ms, batch requests per second or None for no limit)."""


def loopback(count: int = 100) -> None:
    """Time to place ``count`` orders on the loopback server by concurrency, with and without
    an answer latency (a stand-in for the network and the exchange) and the 5 req/s limit."""
    config = _config()
    first = make_sim(config, WallClock(), auto_step=False)
    print(f"loopback: {count} orders ({count // 10} batches) through ExchangeClient + uvicorn")
    with SimServer(first.http) as server, tempfile.TemporaryDirectory() as tmp:
        for latency_ms, rate in CASES:
            cells = []
            for workers in (1, 2, 4):
                sim = make_sim(config, WallClock(), auto_step=False)
                if latency_ms:
                    sim.faults.add("latency", method="POST", path="/v3/trade/orders",
                                   delay_ms=latency_ms)  # fmt: skip
                server.use(sim.http)
                client = _client(server.url, config)
                client.resync_clock()
                tag = f"l{latency_ms}r{int(rate or 0)}w{workers}"
                plan = build_plan(_intents(count, tag), _snapshot(client))
                path = Path(tmp) / f"{tag}.sqlite"
                with Journal(path, clock=_wall_ms) as j:
                    ex = Executor(client, j, concurrency=workers, batch_rate=rate,
                                  policy=RetryPolicy(jitter=0.0))  # fmt: skip
                    elapsed, report = _timed(partial(ex.run, plan))
                client.close()
                ok = sum(1 for o in report.outcomes if o.outcome.value == "accepted")
                cells.append(f"{workers} worker(s) {elapsed:6.3f} s ({ok} ok)")
            limit = "5 req/s" if rate else "no limit"
            print(f"  latency {latency_ms:>2} ms, {limit:>8}: " + " | ".join(cells))


def main() -> None:
    in_process()
    loopback()


if __name__ == "__main__":
    main()
