"""The shapes on the wire, as any client sees them, and botkit's own client reading them.

Spec 4.1 gives the reference-data paths (``/markets``, ``/markets/{symbol}``, ``/currencies``,
``/currencies/{currency}``, ``/v2/currencies``, ``/v2/currencies/{currency}``, ``/timestamp``)
as bare arrays and objects; spec section 1 puts only the ``/v3/`` answers in the ``code`` /
``msg`` / ``data`` envelope. Every test runs over loopback and in process (see conftest).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from botkit.app.clients import SIM_BASE_URL
from botkit.clock import ManualClock
from botkit.errors import ExchangeRejected, ServerUnavailable
from botkit.live.client import ExchangeClient
from botkit.sim.api import is_reference
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimServer
from tests.contract.conftest import T0, static_config

ROOT = Path(__file__).resolve().parents[2]
ENVELOPE = {"code", "msg", "data"}

Get = Callable[..., httpx.Response]


@pytest.fixture
def get(sim: SimHandle, loopback: SimServer, transport_kind: str) -> Iterator[Get]:
    """``get(path, **params)``: a plain unsigned GET, as a browser or curl would send it."""
    if transport_kind == "loopback":
        loopback.use(sim.http)
        http = httpx.Client(base_url=loopback.url)
    else:
        http = httpx.Client(base_url=SIM_BASE_URL, transport=sim.transport)
    with http:
        yield lambda path, **params: http.get(path, params=params)


@pytest.mark.parametrize(
    ("path", "params", "kind", "key"),
    [
        ("/markets", {}, list, "symbol"),
        ("/markets/BTC_USDT", {}, dict, "symbol"),
        ("/currencies", {}, list, None),
        ("/currencies", {"includeMultiChainCurrencies": "true"}, list, None),
        ("/currencies/BTC", {}, dict, "BTC"),
        ("/currencies/USDT", {"includeMultiChainCurrencies": "true"}, dict, "USDT"),
        ("/v2/currencies", {}, list, "coin"),
        ("/v2/currencies/ETH", {}, dict, "coin"),
        ("/timestamp", {}, dict, "serverTime"),
    ],
)
def test_reference_paths_answer_bare_arrays_and_objects(
    get: Get, path: str, params: dict[str, str], kind: type, key: str | None
) -> None:
    answer = get(path, **params)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert isinstance(body, kind), body
    rows = body if isinstance(body, list) else [body]
    assert rows
    for row in rows:
        assert isinstance(row, dict)
        assert not ENVELOPE & row.keys(), row  # no code / msg / data anywhere
        if key is not None:
            assert key in row
        else:  # the v1 currency view: one key, the currency name, per object (spec 2.2)
            (name,) = row
            assert row[name]["name"] == name


def test_timestamp_is_exactly_the_server_time_object(get: Get, clock: ManualClock) -> None:
    clock.advance(42)
    assert get("/timestamp").json() == {"serverTime": T0 + 42}


def test_botkit_client_reads_the_bare_reference_data(get: Get, client: ExchangeClient) -> None:
    assert [m.symbol for m in client.markets()] == [m["symbol"] for m in get("/markets").json()]
    btc = get("/markets/BTC_USDT").json()
    market = client.market("BTC_USDT")
    assert market.symbol == btc["symbol"] == "BTC_USDT"
    assert market.symbolTradeLimit is not None
    assert str(market.symbolTradeLimit.minQuantity) == btc["symbolTradeLimit"]["minQuantity"]
    wire_names = [next(iter(c)) for c in get("/currencies").json()]
    assert [c.name for c in client.currencies()] == wire_names
    multi = [next(iter(c)) for c in get("/currencies", includeMultiChainCurrencies="true").json()]
    assert [c.name for c in client.currencies(include_multi_chain=True)] == multi
    assert len(multi) > len(wire_names)  # the child chains (USDTETH, USDTTRON)
    btc_fee = get("/currencies/BTC").json()["BTC"]["withdrawalFee"]
    assert client.currency("btc").withdrawalFee == Decimal(btc_fee)
    coins = get("/v2/currencies").json()
    assert [c.coin for c in client.currencies_v2()] == [c["coin"] for c in coins]
    usdt = client.currency_v2("USDT")
    assert [n.coin for n in usdt.networkList] == ["USDT", "USDTETH", "USDTTRON"]
    assert client.server_time() == get("/timestamp").json()["serverTime"] == T0


@pytest.mark.parametrize(
    ("path", "status", "code", "msg"),
    [
        ("/markets/NOPE_USDT", 400, 24101, "Invalid symbol: NOPE_USDT"),
        ("/currencies/NOPE", 400, 400, "Param error: unknown currency NOPE"),
        ("/v2/currencies/NOPE", 400, 400, "Param error: unknown currency NOPE"),
        ("/markets/BTC_USDT/extra", 404, 404, "Not Found"),
    ],
)
def test_reference_errors_are_code_and_msg_without_the_envelope(
    get: Get, path: str, status: int, code: int, msg: str
) -> None:
    answer = get(path)
    assert answer.status_code == status
    assert answer.json() == {"code": code, "msg": msg}


def test_botkit_client_maps_a_bare_reference_error(client: ExchangeClient) -> None:
    with pytest.raises(ExchangeRejected, match="Invalid symbol: NOPE_USDT") as caught:
        client.market("NOPE_USDT")
    assert caught.value.code == 24101


def test_a_fault_on_a_reference_path_keeps_the_bare_error_shape(
    get: Get, sim: SimHandle, client: ExchangeClient
) -> None:
    sim.faults.add("http_503", path="/markets", times=2)
    answer = get("/markets")
    assert answer.status_code == 503
    assert answer.json() == {"code": 503, "msg": "Service degraded, try again later"}
    with pytest.raises(ServerUnavailable):
        client.markets()


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/v3/market/allInstruments", {}),
        ("/v3/market/tickers", {"symbol": "BTC_USDT_PERP"}),
        ("/v3/market/markPrice", {"symbol": "BTC_USDT_PERP"}),
        ("/v3/market/candles", {"symbol": "BTC_USDT_PERP", "interval": "MINUTE_1"}),
        ("/v3/market/orderBook", {"symbol": "BTC_USDT_PERP"}),
        ("/v3/market/limitPrice", {"symbol": "BTC_USDT_PERP"}),
    ],
)
def test_v3_paths_answer_inside_the_envelope(get: Get, path: str, params: dict[str, str]) -> None:
    answer = get(path, **params)
    assert answer.status_code == 200
    body = answer.json()
    assert body.keys() == ENVELOPE
    assert (body["code"], body["msg"]) == (200, "Success")
    assert body["data"]


@pytest.mark.parametrize(
    ("path", "params", "status", "code"),
    [
        ("/v3/market/candles", {"interval": "MINUTE_1"}, 400, 400),
        ("/v3/market/candles", {"symbol": "BTC_USDT_PERP", "interval": "SECOND_1"}, 400, 24102),
    ],
)
def test_v3_errors_keep_the_envelope_with_null_data(
    get: Get, path: str, params: dict[str, str], status: int, code: int
) -> None:
    answer = get(path, **params)
    assert answer.status_code == status
    body = answer.json()
    assert body.keys() == ENVELOPE
    assert (body["code"], body["data"]) == (code, None)


def test_an_unknown_v3_path_is_a_404_envelope(raw: Callable[..., httpx.Response]) -> None:
    answer = raw("GET", "/v3/market/nothing")
    assert answer.status_code == 404
    assert answer.json() == {"code": 404, "msg": "Not Found", "data": None}


def test_an_unsigned_private_request_is_a_401_envelope(get: Get) -> None:
    body = get("/v3/account/balance").json()
    assert body == {
        "code": 401,
        "msg": "Unauthorized: signature headers missing (key, signTimestamp, signature)",
        "data": None,
    }


# --- the table in docs/simulator-http.md -------------------------------------------------

_ROW = re.compile(r"^\| `(GET|POST|DELETE) (/[^`]*)` \| ([^|]+) \|", re.MULTILINE)


def test_the_docs_table_has_one_row_per_path_with_its_shape() -> None:
    text = (ROOT / "docs" / "simulator-http.md").read_text()
    rows = {(m, p): shape.strip() for m, p, shape in _ROW.findall(text)}
    routes = make_sim(static_config(), ManualClock(T0)).api.routes
    assert sorted(rows) == sorted(routes)
    for (_method, path), shape in rows.items():
        wanted = "bare" if is_reference(path) else "envelope"
        assert shape.startswith(wanted), (path, shape)
