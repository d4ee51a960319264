"""Client-side cost of a 10-order batch: build the orders, serialise, sign, send, parse.

No network: an ``httpx.MockTransport`` answers a canned body of 10 results. The figure is
what the client itself adds per order (pydantic models in and out, JSON, HMAC, httpx's
request/response plumbing), for both signing schemes. Run: ``python -m bench client``.
"""

from __future__ import annotations

import functools
import json
import time
import timeit
from collections.abc import Callable
from decimal import Decimal

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


def _build_and_place(client: ExchangeClient) -> object:
    return client.place_orders(_orders())


if __name__ == "__main__":
    main()
