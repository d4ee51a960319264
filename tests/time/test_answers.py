"""Issue 14 items 7 and 9 at the client: every request has an overall deadline, and an answer
has a size cap, read as a stream so memory stays bounded.

The simulator's ``drip`` fault sends an answer a byte at a time, ``huge`` pads it (valid JSON) to
any size. In process, the drip's pauses advance a manual clock that the client's deadline reads,
so nothing waits for real; over loopback the real server and socket are used.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from decimal import Decimal

import httpx
import pytest
from pydantic import SecretStr

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock, WallClock
from botkit.errors import (
    MalformedResponse,
    MalformedWriteResponse,
    OutcomeUnknown,
    ReadTimedOut,
)
from botkit.exchange.models import OrderRequest
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimServer
from tests.pipeline.simharness import static_config

T0 = 1_763_000_000_000


class Seconds:
    """A manual monotonic clock in seconds; ``sleep`` advances it (and the simulator's)."""

    def __init__(self, sim_clock: ManualClock) -> None:
        self.now = 0.0
        self.sim_clock = sim_clock

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sim_clock.advance(int(seconds * 1000))


def _client(
    sim: SimHandle, transport: httpx.BaseTransport, base_url: str, **kw: object
) -> ExchangeClient:
    key = sim.config.auth.keys[0]
    return ExchangeClient(
        base_url,
        key=key.key,
        secret=SecretStr(key.secret.get_secret_value()),
        passphrase=SecretStr(key.passphrase.get_secret_value()),
        clock=ClockSync(local=sim.clock.now_ms, interval_ms=0),
        transport=transport,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
def dripping() -> Iterator[tuple[SimHandle, Seconds, ExchangeClient]]:
    clock = ManualClock(T0)
    holder: list[Seconds] = []
    sim = make_sim(static_config(), clock, auto_step=False, sleep=lambda s: holder[0].sleep(s))
    seconds = Seconds(clock)
    holder.append(seconds)
    with _client(sim, sim.transport, SIM_BASE_URL, timeout=2.0, monotonic=seconds) as client:
        yield sim, seconds, client


def _order() -> OrderRequest:
    return OrderRequest(
        symbol="BTC_USDT_PERP", side="BUY", type="LIMIT", px=Decimal("59000"), sz=Decimal("1"),
        clOrdId="bk-drip-1",
    )  # fmt: skip


def test_a_dripped_read_is_cut_at_the_deadline(
    dripping: tuple[SimHandle, Seconds, ExchangeClient],
) -> None:
    sim, seconds, client = dripping
    sim.faults.add("drip", method="GET", path="/v3/market/tickers", delay_ms=1000)
    with pytest.raises(ReadTimedOut, match="request deadline of 2 s"):
        client.tickers()
    assert 2.0 < seconds() <= 3.0  # one pause past the deadline, not one per byte


def test_a_dripped_write_is_an_unknown_outcome_at_the_deadline(
    dripping: tuple[SimHandle, Seconds, ExchangeClient],
) -> None:
    sim, seconds, client = dripping
    sim.faults.add("drip", method="POST", path="/v3/trade/orders", delay_ms=1000)
    with pytest.raises(OutcomeUnknown, match="look the orders up"):
        client.place_orders([_order()])
    assert 2.0 < seconds() <= 3.0
    assert client.order_details(cl_ord_id="bk-drip-1").clOrdId == "bk-drip-1"  # it was placed


def test_request_deadline_is_its_own_setting() -> None:
    clock = ManualClock(T0)
    seconds = Seconds(clock)
    transport = make_sim(static_config(), clock, auto_step=False, sleep=seconds.sleep)
    transport.faults.add("drip", method="GET", path="/v3/market/tickers", delay_ms=100)
    with (
        _client(
            transport,
            transport.transport,
            SIM_BASE_URL,
            timeout=2.0,
            deadline=0.5,
            monotonic=seconds,
        ) as client,
        pytest.raises(ReadTimedOut, match=r"deadline of 0\.5 s"),
    ):
        client.tickers()
    assert 0.5 < seconds() <= 0.6


@pytest.fixture(scope="module")
def loopback() -> Iterator[tuple[SimHandle, SimServer]]:
    sim = make_sim(static_config(), WallClock(), auto_step=False)
    with SimServer(sim.http) as server:
        yield sim, server


def _peak_mib(call: object) -> tuple[BaseException | None, float]:
    tracemalloc.start()
    try:
        try:
            call()  # type: ignore[operator]
        except Exception as exc:
            error: BaseException | None = exc
        else:
            error = None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return error, peak / 2**20


def test_a_huge_answer_is_refused_as_malformed_with_memory_bounded(
    loopback: tuple[SimHandle, SimServer],
) -> None:
    sim, server = loopback
    with _client(sim, httpx.HTTPTransport(), server.url) as client:
        client.tickers()  # warm: imports and the connection pool out of the figure
        rule = sim.faults.add("huge", method="GET", path="/v3/market/tickers", size_bytes=10**8)
        try:
            error, peak = _peak_mib(client.tickers)
        finally:
            sim.faults.remove(rule)
    assert isinstance(error, MalformedResponse), error
    assert "max_answer_bytes" in str(error)
    assert peak < 16, f"{peak:.1f} MiB"  # 100 MB were offered


def test_a_huge_answer_to_a_write_is_an_unknown_outcome(
    loopback: tuple[SimHandle, SimServer],
) -> None:
    sim, server = loopback
    rule = sim.faults.add("huge", method="POST", path="/v3/trade/orders", size_bytes=50_000_000)
    try:
        with (
            _client(sim, httpx.HTTPTransport(), server.url) as client,
            pytest.raises(MalformedWriteResponse, match="max_answer_bytes"),
        ):
            client.place_orders([_order()])
    finally:
        sim.faults.remove(rule)


def test_an_answer_without_length_is_cut_as_it_passes_the_cap() -> None:
    served: list[int] = []

    def endless() -> Iterator[bytes]:
        yield b'{"code":200,"msg":"Success","data":['
        while True:
            served.append(1)
            yield b"1," * 32_768

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Stream(endless()))

    client = ExchangeClient(
        "http://exchange.invalid",
        transport=httpx.MockTransport(handler),
        max_answer_bytes=1_000_000,
    )
    with client, pytest.raises(MalformedResponse, match="more than 1000000 bytes"):
        client.tickers()
    assert len(served) <= 16  # stopped reading at the cap


class _Stream(httpx.SyncByteStream):
    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        return self.chunks
