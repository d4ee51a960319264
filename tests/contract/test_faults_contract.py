"""Each injected fault, as the client reports it: the error class says what the caller does next."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.errors import (
    MalformedResponse,
    OutcomeUnknown,
    RateLimited,
    ReadTimedOut,
    ServerUnavailable,
    TimestampExpired,
)
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.live.client import ExchangeClient
from botkit.sim.inprocess import SimHandle
from tests.contract.conftest import Connect, static_config

BTC = "BTC_USDT_PERP"
ORDERS = "/v3/trade/orders"


def resting(cl_ord_id: str) -> OrderRequest:
    return OrderRequest(
        symbol=BTC,
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(59000),
        clOrdId=cl_ord_id,
    )


def test_drop_after_accept_is_outcome_unknown_and_the_order_exists(
    client: ExchangeClient, sim: SimHandle
) -> None:
    sim.faults.add("drop_after", method="POST", path=ORDERS, nth=1)
    with pytest.raises(OutcomeUnknown) as info:
        client.place_orders([resting("amb-1")])
    assert info.value.context.client_order_ids == ("amb-1",)
    (found,) = client.open_orders(BTC, cl_ord_id="amb-1")
    assert found.clOrdId == "amb-1"
    assert sim.faults.counts == {"drop_after": 1}


def test_drop_before_processing_is_outcome_unknown_and_no_order_exists(
    client: ExchangeClient, sim: SimHandle
) -> None:
    sim.faults.add("drop_before", method="POST", path=ORDERS)
    with pytest.raises(OutcomeUnknown):
        client.place_orders([resting("lost-1")])
    sim.faults.clear()
    assert client.open_orders(BTC, cl_ord_id="lost-1") == []


def test_dropped_read_is_read_timed_out(client: ExchangeClient, sim: SimHandle) -> None:
    sim.faults.add("drop_after", method="GET", path="/v3/account/*")
    with pytest.raises(ReadTimedOut):
        client.balance()


def test_429_is_rate_limited_with_retry_after(client: ExchangeClient, sim: SimHandle) -> None:
    sim.faults.add("rate_limit", path=ORDERS, retry_after=2)
    with pytest.raises(RateLimited) as info:
        client.place_orders([resting("rl-1")])
    assert info.value.retry_after == 2.0
    sim.faults.clear()
    assert client.open_orders(BTC) == []


@pytest.mark.parametrize("kind", ["http_500", "http_503"])
def test_5xx_is_server_unavailable_and_nothing_happened(
    client: ExchangeClient, sim: SimHandle, kind: str
) -> None:
    sim.faults.add(kind, path=ORDERS, times=1)
    with pytest.raises(ServerUnavailable):
        client.place_orders([resting("5xx-1")])
    assert client.open_orders(BTC) == []
    assert client.place_orders([resting("5xx-1")])[0].code == 200


def test_expired_answer_is_timestamp_expired(client: ExchangeClient, sim: SimHandle) -> None:
    sim.faults.add("expired", path=ORDERS, nth=1)
    with pytest.raises(TimestampExpired):
        client.place_orders([resting("exp-1")])
    assert client.place_orders([resting("exp-1")])[0].code == 200


@pytest.mark.parametrize("kind", ["html", "truncated", "empty"])
def test_malformed_bodies_on_a_read_are_malformed_response(
    client: ExchangeClient, sim: SimHandle, kind: str
) -> None:
    sim.faults.add(kind, path="/v3/account/balance")
    with pytest.raises(MalformedResponse) as info:
        client.balance()
    assert not isinstance(info.value, OutcomeUnknown)


def test_truncated_answer_to_an_accepted_write_is_also_outcome_unknown(
    client: ExchangeClient, sim: SimHandle
) -> None:
    sim.faults.add("truncated", path=ORDERS)
    with pytest.raises(MalformedResponse) as info:
        client.place_orders([resting("cut-1")])
    assert isinstance(info.value, OutcomeUnknown)
    sim.faults.clear()
    assert len(client.open_orders(BTC, cl_ord_id="cut-1")) == 1


def test_latency_within_the_timeout_only_slows_the_answer(
    client: ExchangeClient, sim: SimHandle, sleeps: list[float], transport_kind: str
) -> None:
    sim.faults.add("latency", delay_ms=50, path="/v3/account/balance")
    assert client.balance().eq == Decimal(10000)
    if transport_kind == "inprocess":
        assert sleeps == [0.05]


def test_latency_past_the_timeout_on_a_write_is_outcome_unknown_and_the_order_exists(
    connect: Connect, sim: SimHandle
) -> None:
    client = connect(timeout=0.2)
    client.server_time()
    sim.faults.add("latency", delay_ms=400, path=ORDERS, nth=1)
    with pytest.raises(OutcomeUnknown):
        client.place_orders([resting("slow-1")])
    assert len(client.open_orders(BTC, cl_ord_id="slow-1")) == 1


def test_latency_past_the_timeout_on_a_read_is_read_timed_out(
    connect: Connect, sim: SimHandle
) -> None:
    client = connect(timeout=0.2)
    client.server_time()
    sim.faults.add("latency", delay_ms=400, path="/v3/account/balance")
    with pytest.raises(ReadTimedOut):
        client.balance()


@pytest.mark.parametrize(
    "sim_config",
    [static_config(faults=[{"kind": "rate_limit", "path": ORDERS, "every": 2}])],
    indirect=True,
    ids=["every-2nd-batch-429"],
)
def test_faults_of_the_config_file_are_active_from_the_start(client: ExchangeClient) -> None:
    outcomes = []
    for i in range(4):
        try:
            client.place_orders([resting(f"cfg-{i}")])
            outcomes.append("ok")
        except RateLimited:
            outcomes.append("429")
    assert outcomes == ["ok", "429", "ok", "429"]
