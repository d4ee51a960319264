"""The exchange answers the fuzz pass found crashing the client (a bare ValueError or
OverflowError, or minutes spent building a million-digit integer) instead of raising a typed
:class:`ExchangeError`. Each stays here as a fixed example."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import pytest

from botkit.errors import ExchangeError, MalformedResponse
from botkit.live.client import ExchangeClient
from tests.fuzz.fakes import client_answering


class _Fixed:
    def __init__(self) -> None:
        self.body = b""

    def handler(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=self.body)


@pytest.fixture
def fixed() -> Iterator[tuple[_Fixed, ExchangeClient]]:
    fake = _Fixed()
    client = client_answering(fake.handler)
    yield fake, client
    client.close()


@pytest.mark.parametrize(
    "code",
    ["1E+999999", "Infinity", "-Infinity", "NaN", '"' + "9" * 5000 + '"', '"²"', '"١٢"'],
    ids=["huge", "inf", "-inf", "nan", "5000-digit-string", "superscript", "arabic-digits"],
)
def test_an_envelope_code_that_is_no_sane_integer_is_a_malformed_answer(
    fixed: tuple[_Fixed, ExchangeClient], code: str
) -> None:
    fake, client = fixed
    fake.body = b'{"code": ' + code.encode() + b', "msg": "x", "data": {}}'
    started = time.monotonic()
    with pytest.raises(MalformedResponse, match="envelope code"):
        client.balance()
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(
    "value", ["Infinity", "1E+999999", '"²"', '"' + "9" * 5000 + '"', "-1"], ids=str
)
def test_a_hostile_timestamp_in_a_model_is_a_typed_error(
    fixed: tuple[_Fixed, ExchangeClient], value: str
) -> None:
    fake, client = fixed
    order = (
        '{"symbol": "BTC_USDT_PERP", "side": "BUY", "type": "LIMIT", "ordId": "1", '
        '"clOrdId": "c", "px": "1", "sz": "1", "cTime": ' + value + "}"
    )
    fake.body = b'{"code": 200, "msg": "Success", "data": [' + order.encode() + b"]}"
    started = time.monotonic()
    with contextlib.suppress(ExchangeError):
        client.open_orders_page(limit=100)
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("value", ['"²"', '"' + "9" * 5000 + '"', "1E+999999", "Infinity"])
def test_a_hostile_server_time_is_a_typed_error(
    fixed: tuple[_Fixed, ExchangeClient], value: str
) -> None:
    fake, client = fixed
    fake.body = b'{"serverTime": ' + value.encode() + b"}"
    with pytest.raises(ExchangeError):
        client.server_time()


@pytest.mark.parametrize(
    "item",
    [
        {"clOrdId": "c-0", "code": 200, "msg": "Success"},
        {"clOrdId": "c-0", "ordId": "", "code": 200},
        {"clOrdId": "c-0", "ordId": "  "},
    ],
    ids=["no-ordId", "empty-ordId", "blank-ordId-no-code"],
)
def test_an_accepted_result_without_an_order_id_is_looked_up_not_journaled_as_placed(
    item: dict[str, object],
) -> None:
    """Found by the fuzz pass: such a result was settled ``accepted`` with ordId ''."""
    import json

    from botkit.exchange.models import OrderRequest, OrderSide, OrderType
    from botkit.journal.records import Outcome
    from botkit.runner.orders import RetryPolicy
    from botkit.runner.orders.submit import Submitter

    placed = {"code": 200, "msg": "Success", "data": [item]}
    empty = {"code": 200, "msg": "Success", "data": []}

    def handler(request: httpx.Request) -> httpx.Response:
        body = placed if request.url.path == "/v3/trade/orders" else empty
        return httpx.Response(200, content=json.dumps(body).encode())

    order = OrderRequest(
        symbol="BTC_USDT_PERP", side=OrderSide.BUY, type=OrderType.LIMIT, sz=1, px=1, clOrdId="c-0"
    )
    with client_answering(handler) as client:
        report = Submitter(client, sleep=lambda _s: None, policy=RetryPolicy()).place([order])
    assert [o.outcome for o in report.outcomes if o.outcome is Outcome.ACCEPTED] == []
    assert report.unsettled == ("c-0",)  # never found, re-sent a bounded number of times
