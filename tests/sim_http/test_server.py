"""The loopback server: real HTTP over uvicorn, faults as a client on the wire sees them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from botkit.sim.http import SimHttp
from botkit.sim.server import SimServer
from tests.sim_http.support import EchoApi, envelope, sign_request


@pytest.fixture
def server(http: SimHttp) -> Iterator[SimServer]:
    with SimServer(http) as running:
        yield running


@pytest.fixture
def client(server: SimServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=5.0) as c:
        yield c


def test_signed_post_round_trip_over_loopback(client: httpx.Client, api: EchoApi) -> None:
    req = sign_request("POST", "/v3/trade/orders", body=[{"px": "1.5"}], scheme="pf")
    response = client.post("/v3/trade/orders", headers=req.headers, content=req.body)
    assert response.status_code == 200
    assert envelope(response.content)["data"]["body"] == [{"px": "1.5"}]
    assert response.headers["content-type"] == "application/json"


def test_query_reaches_the_api_decoded(client: httpx.Client, api: EchoApi) -> None:
    req = sign_request("GET", "/v3/x", params={"q": "a b&c", "e": "é"})
    assert client.get(f"/v3/x?{req.raw_query}", headers=req.headers).status_code == 200
    assert api.calls[-1][2] == {"q": "a b&c", "e": "é"}


def test_drop_after_loses_the_connection_after_processing(
    client: httpx.Client, http: SimHttp, api: EchoApi
) -> None:
    http.faults.add("drop_after", nth=1)
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/public/orders", content=b"[]")
    assert len(api.calls) == 1
    assert client.get("/public/x").status_code == 200


def test_drop_before_loses_the_connection_without_processing(
    client: httpx.Client, http: SimHttp, api: EchoApi
) -> None:
    http.faults.add("drop_before", nth=1)
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/public/orders", content=b"[]")
    assert api.calls == []


def test_rate_limit_answer_has_retry_after_on_the_wire(client: httpx.Client, http: SimHttp) -> None:
    http.faults.add("rate_limit", retry_after=2)
    response = client.get("/public/x")
    assert (response.status_code, response.headers["retry-after"]) == (429, "2")


def test_a_slow_answer_does_not_hold_up_other_requests(server: SimServer, http: SimHttp) -> None:
    http.faults.add("latency", delay_ms=400, path="/public/slow")
    slow_done: list[float] = []

    def slow() -> None:
        with httpx.Client(base_url=server.url) as c:
            c.get("/public/slow")
        slow_done.append(time.monotonic())

    thread = threading.Thread(target=slow)
    thread.start()
    with httpx.Client(base_url=server.url) as c:
        time.sleep(0.05)  # let the slow request reach the server first (real sockets)
        c.get("/public/fast")
        fast_done = time.monotonic()
    thread.join(5)
    assert slow_done
    assert fast_done < slow_done[0]


def test_latency_past_the_client_timeout_is_a_read_timeout(
    server: SimServer, http: SimHttp
) -> None:
    http.faults.add("latency", delay_ms=300)
    with (
        httpx.Client(base_url=server.url, timeout=0.1) as c,
        pytest.raises(httpx.ReadTimeout),
    ):
        c.get("/public/x")


def test_server_stops_when_asked(http: SimHttp) -> None:
    server = SimServer(http).start()
    url = server.url
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/public/x", timeout=1)
