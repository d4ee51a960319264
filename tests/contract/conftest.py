"""The contract suite's fixtures: the real ExchangeClient against the simulator, over real
loopback HTTP (one uvicorn server for the session, a fresh simulator behind it per test) and in
process (the httpx transport). Every ``client`` / ``connect`` test runs on both.

The simulator runs on a :class:`ManualClock` with a static price model, so nothing moves unless a
test moves it; the client's local clock is the manual clock's own time (without the server
offset), so a server offset is exactly the skew the client sees.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.exchange import signing
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.sim.config import SimConfig, load_sim_config
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimServer

T0 = 1_700_000_000_000
TRANSPORTS = ["loopback", "inprocess"]

Connect = Callable[..., ExchangeClient]
Raw = Callable[..., httpx.Response]


def static_config(**changes: object) -> SimConfig:
    """The built-in simulator config with marks that move only when a test moves them."""
    config = load_sim_config(None)
    prices = config.prices.model_copy(update={"model": "static"})
    return config.model_copy(update={"prices": prices, **changes})


@pytest.fixture(scope="session")
def loopback() -> Iterator[SimServer]:
    placeholder = make_sim(static_config(), ManualClock(T0))
    with SimServer(placeholder.http) as server:
        yield server


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


def with_instrument(symbol: str, **fields: object) -> SimConfig:
    """The static config with some fields of one instrument changed (re-validated)."""
    config = static_config()
    data = config.model_dump()
    for inst in data["instruments"]:
        if inst["symbol"] == symbol:
            inst.update(fields)
    data["auth"] = config.auth
    return SimConfig.model_validate(data)


@pytest.fixture
def sim_config(request: pytest.FixtureRequest) -> SimConfig:
    """``static_config()``, or the SimConfig a test passes with ``indirect=True``."""
    given = getattr(request, "param", None)
    return given if isinstance(given, SimConfig) else static_config()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def sim(sim_config: SimConfig, clock: ManualClock, sleeps: list[float]) -> SimHandle:
    return make_sim(sim_config, clock, sleep=sleeps.append, auto_step=False)


@pytest.fixture(params=TRANSPORTS)
def transport_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
def connect(
    sim: SimHandle, loopback: SimServer, transport_kind: str, clock: ManualClock
) -> Iterator[Connect]:
    """``connect(signing="v3", key=..., secret=..., passphrase=..., timeout=5.0)``."""
    made: list[ExchangeClient] = []
    if transport_kind == "loopback":
        loopback.use(sim.http)
    default = sim.credential

    def make(
        signing: str = "v3",
        *,
        key: str | None = None,
        secret: str | None = None,
        passphrase: str | None = None,
        timeout: float = 5.0,
    ) -> ExchangeClient:
        client = ExchangeClient(
            loopback.url if transport_kind == "loopback" else SIM_BASE_URL,
            key=key if key is not None else default.key,
            secret=SecretStr(secret) if secret is not None else default.secret,
            passphrase=SecretStr(passphrase) if passphrase is not None else default.passphrase,
            signing="pf" if signing == "pf" else "v3",
            clock=ClockSync(local=lambda: clock.now_ms() - clock.offset_ms, interval_ms=0),
            transport=sim.transport if transport_kind == "inprocess" else None,
            timeout=timeout,
        )
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def client(connect: Connect) -> ExchangeClient:
    return connect()


@pytest.fixture
def raw(
    sim: SimHandle, loopback: SimServer, transport_kind: str, clock: ManualClock
) -> Iterator[Raw]:
    """``raw(method, path, body=None, params=None)``: a v3-signed request the typed client
    would refuse to send (a batch of 11, lower-case enum words, half-filled mgnMode/posSide)."""
    if transport_kind == "loopback":
        loopback.use(sim.http)
        http = httpx.Client(base_url=loopback.url)
    else:
        http = httpx.Client(base_url=SIM_BASE_URL, transport=sim.transport)
    cred = sim.credential

    def send(
        method: str, path: str, body: Any = None, params: dict[str, str] | None = None
    ) -> httpx.Response:
        text = "" if body is None else json.dumps(body, separators=(",", ":"))
        query = signing.encode_query(params or {})
        headers = signing.v3_headers(
            key=cred.key,
            secret=cred.secret.get_secret_value(),
            timestamp=clock.now_ms(),
            method=method,
            path=path,
            params=params or {},
            body=text,
        )
        url = path + (f"?{query}" if query else "")
        return http.request(method, url, headers=headers, content=text.encode() or None)

    yield send
    http.close()
