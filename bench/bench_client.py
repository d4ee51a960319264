"""Client-side cost of a 10-order batch: build the orders, serialise, sign, send, parse.

No network: an ``httpx.MockTransport`` answers a canned body of 10 results. The figure is
what the client itself adds per order (pydantic models in and out, JSON, HMAC, httpx's
request/response plumbing), for both signing schemes. Run: ``python -m bench client``.

Then the client alone over a live cycle's requests (``bench runner``'s cycle: 20 strategies, 5
orders each, so 10 batch places, a price band read before each and the cycle's reads): each
request the cycle makes is recorded once against the in-process simulator, then made again
through a client whose transport hands back the recorded answer, the orders new each time (so
nothing the client keeps from one send helps the next). The transport's own time (building the
answer) is left out: what remains is the client's, per order. The machine's reference line
comes first, to compare runs.
"""

from __future__ import annotations

import functools
import json
import statistics
import tempfile
import time
import timeit
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.exchange.signing import pf_headers, v3_headers
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.live.http import dumps

BATCH = 10
SECRET = "bench-secret"  # noqa: S105 - a throwaway value for the benchmark
PASSPHRASE = "bench-pass"  # noqa: S105 - same
NUMBER = 300
REPEAT = 5

_RESULTS = json.dumps(
    {
        "code": 200,
        "msg": "Success",
        "data": [
            {"clOrdId": f"bench-{i}", "ordId": str(400000000000000000 + i), "code": 200,
             "msg": "Success"}
            for i in range(BATCH)
        ],
    }
).encode()  # fmt: skip


def _answer(_request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=_RESULTS, headers={"content-type": "application/json"})


def _orders() -> list[OrderRequest]:
    return [
        OrderRequest(
            symbol="BTC_USDT_PERP",
            side=OrderSide.BUY if i % 2 else OrderSide.SELL,
            type=OrderType.LIMIT,
            sz=Decimal(1 + i),
            px=Decimal("60000.1") + i,
            clOrdId=f"bench-{i}",
        )
        for i in range(BATCH)
    ]


def _client(scheme: str) -> ExchangeClient:
    clock = ClockSync(lambda: 0, local=lambda: 1_700_000_000_000, interval_ms=0)
    clock.set_offset(0)
    return ExchangeClient(
        "https://bench.invalid",
        key="bench-key",
        secret=SECRET,
        passphrase=PASSPHRASE,
        signing="pf" if scheme == "pf" else "v3",
        clock=clock,
        transport=httpx.MockTransport(_answer),
    )


def _per_order_us(step: Callable[[], object]) -> float:
    best = min(timeit.repeat(step, number=NUMBER, repeat=REPEAT, timer=time.perf_counter))
    return best / NUMBER / BATCH * 1e6


def _row(label: str, value: str) -> None:
    print(f"  {label:<40}{value}")


def main() -> None:
    from bench.bench_backtest import _reference_s

    print(f"machine {_reference_s():.2f} s for the reference loop (bench_backtest._reference_s)")
    body = dumps([o.to_wire() for o in _orders()])
    print(f"10-order batch, best of {REPEAT} x {NUMBER} batches, microseconds per order:")
    _row("build 10 OrderRequest models", f"{_per_order_us(_orders):7.1f}")
    wire = _per_order_us(lambda: dumps([o.to_wire() for o in _orders()]))
    _row("build + to_wire + compact JSON", f"{wire:7.1f}")
    sign_v3 = _per_order_us(
        lambda: v3_headers(key="k", secret=SECRET, timestamp=1, method="POST",
                           path="/v3/trade/orders", params={}, body=body)
    )  # fmt: skip
    sign_pf = _per_order_us(
        lambda: pf_headers(key="k", secret=SECRET, passphrase=PASSPHRASE, timestamp=1,
                           method="POST", path="/v3/trade/orders", query="", body=body)
    )  # fmt: skip
    _row("sign the batch body (v3 / pf)", f"{sign_v3:7.1f} / {sign_pf:.1f}")
    for scheme in ("v3", "pf"):
        client = _client(scheme)
        orders = _orders()
        assert all(r.accepted for r in client.place_orders(orders))
        place = _per_order_us(functools.partial(client.place_orders, orders))
        full = _per_order_us(functools.partial(_build_and_place, client))
        _row(f"place_orders, {scheme} (sign+send+parse)", f"{place:7.1f}")
        _row(f"build + place_orders, {scheme}", f"{full:7.1f}   <- the figure")
        client.close()
    _cycle()


def _build_and_place(client: ExchangeClient) -> object:
    return client.place_orders(_orders())


class _Replay(httpx.BaseTransport):
    """Hands back the recorded answer of each request (method and path); ``cpu_seconds``: its
    own time, building the answer (this thread's CPU), left out of the client's."""

    def __init__(self, answers: dict[tuple[str, str], tuple[int, Any, bytes]]) -> None:
        self.answers = answers
        self.cpu_seconds = 0.0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.thread_time()
        status, headers, body = self.answers[(request.method, request.url.path)]
        answer = httpx.Response(status, headers=headers, content=body, request=request)
        self.cpu_seconds += time.thread_time() - started
        return answer


_Calls = list[tuple[str, tuple[Any, ...]]]


def _record_cycle() -> tuple[_Calls, dict[tuple[str, str], tuple[int, Any, bytes]], Any]:
    """The client calls of one cycle of ``bench runner`` (name, arguments) and the answers
    the simulator gave (the runner's own set-up, the warm-up cycle run first)."""
    from bench.bench_runner import MINUTE, _setup  # the runner's cycle, as it measures it

    calls: _Calls = []
    answers: dict[tuple[str, str], tuple[int, Any, bytes]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runner, clock, transport = _setup(Path(tmp), strategies=20, legs=5)
        runner.run_cycle()
        client = runner.port
        inner = transport.inner

        class Recording(httpx.BaseTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                answer = inner.handle_request(request)
                key = (request.method, request.url.path)
                answers[key] = (answer.status_code, answer.headers.raw, answer.read())
                return answer

        transport.inner = Recording()
        for name in _CYCLE_CALLS:
            method = getattr(client, name)

            def noted(*args: Any, _name: str = name, _method: Any = method) -> Any:
                calls.append((_name, args))
                return _method(*args)

            setattr(client, name, noted)
        clock.advance(MINUTE)
        runner.run_cycle()
        client.server_time()  # the clock's source, asked when a client starts
        return calls, answers, clock


_CYCLE_CALLS = ("place_orders", "limit_price", "tickers", "open_positions", "open_orders",
                "position_mode", "balance", "instruments")  # fmt: skip


def _cycle_client_us(rounds: int = 9, cycles: int = 20) -> tuple[float, int, int]:
    """The client's CPU per order over the recorded cycle's calls, median of ``rounds``; and
    the requests and orders of one cycle."""
    from bench.bench_runner import _config
    from botkit.app.clients import SIM_BASE_URL
    from tests.pipeline.simharness import client_for

    calls, answers, clock = _record_cycle()
    replay = _Replay(answers)
    client = client_for(SIM_BASE_URL, _config(), local=clock.now_ms, transport=replay)
    orders = sum(len(args[0]) for name, args in calls if name == "place_orders")

    def fresh() -> _Calls:  # new orders, their wire bodies built as the journal builds them
        out: _Calls = []
        for name, args in calls:
            if name == "place_orders":
                args = ([o.model_copy() for o in args[0]],)
                for order in args[0]:
                    order.to_wire()
            out.append((name, args))
        return out

    def run(todo: _Calls) -> None:
        for name, args in todo:
            getattr(client, name)(*args)

    run(fresh())
    per_order: list[float] = []
    for _ in range(rounds):
        todos = [fresh() for _ in range(cycles)]
        replay.cpu_seconds = 0.0
        started = time.thread_time()
        for todo in todos:
            run(todo)
        spent = time.thread_time() - started - replay.cpu_seconds
        per_order.append(spent / cycles / orders * 1e6)
    client.close()
    return statistics.median(per_order), len(calls), orders


def _cycle() -> None:
    from botkit.service.logs import configure_logging

    configure_logging(level="WARNING", fmt="text")
    us, requests, orders = _cycle_client_us()
    print(f"a live cycle's requests ({requests} requests, {orders} orders), answers replayed:")
    _row("the client's CPU per order (median)", f"{us:7.1f}   <- the cycle figure")


if __name__ == "__main__":
    main()
