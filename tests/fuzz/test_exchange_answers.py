"""Hostile exchange answers through the real client's parsing: every field missing, wrong types,
huge numbers, NaN / Infinity strings, negative sizes. The client answers with models that hold
only finite, in-range values, or raises an :class:`ExchangeError` — nothing else. And a batch
answer, however garbled, never makes the pipeline journal an order as accepted unless the
exchange clearly said so (code 200 and an ``ordId`` for that very client order id).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from botkit.errors import ExchangeError
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.exchange.queries import FillQuery, OrderQuery
from botkit.journal.records import Outcome
from botkit.live.client import ExchangeClient
from botkit.runner.orders import RetryPolicy
from botkit.runner.orders.submit import Submitter
from tests.exchange import payloads as wire
from tests.fuzz.fakes import client_answering
from tests.fuzz.mutations import mutated
from tests.fuzz.profiles import FUZZ

_DEC = re.compile(r'"@@DEC(.*?)@@"')


def dump(doc: Any) -> bytes:
    """JSON as an exchange would write it: Decimals as bare numbers (huge ones included)."""

    def default(value: Any) -> Any:
        if isinstance(value, Decimal):
            return f"@@DEC{value}@@"
        raise TypeError(type(value).__name__)

    return _DEC.sub(r"\1", json.dumps(doc, default=default)).encode()


def envelope(data: Any) -> dict[str, Any]:
    return {"code": 200, "msg": "Success", "data": data}


class Answers:
    """A transport answering every request with the body set for its path."""

    def __init__(self) -> None:
        self.bodies: dict[str, bytes] = {}
        self.status = 200

    def handler(self, request: httpx.Request) -> httpx.Response:
        body = self.bodies.get(request.url.path, dump(envelope([])))
        return httpx.Response(self.status, content=body)


@pytest.fixture(scope="module")
def answers() -> Iterator[tuple[Answers, ExchangeClient]]:
    fake = Answers()
    client = client_answering(fake.handler)
    yield fake, client
    client.close()


def _check_values(value: Any, where: str = "") -> None:
    """Every Decimal finite; recursively through models and lists."""
    if isinstance(value, Decimal):
        assert value.is_finite(), where
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _check_values(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, list | tuple):
        for item in value:
            _check_values(item, where)


SIZES = ("sz", "px", "tSz", "lotSz", "minSz", "ctVal", "maxPx", "minPx", "limitMaxQty")

Read = Callable[[ExchangeClient], Any]
READS: dict[str, tuple[str, Any, Read]] = {
    "instruments": (
        "/v3/market/allInstruments",
        envelope([wire.INSTRUMENT]),
        lambda c: c.instruments(),
    ),
    "balance": ("/v3/account/balance", envelope(wire.BALANCE), lambda c: c.balance()),
    "positions": (
        "/v3/trade/position/opens",
        envelope([wire.POSITION]),
        lambda c: c.open_positions(),
    ),
    "open_orders": (
        "/v3/trade/order/opens",
        envelope([wire.OPEN_ORDER]),
        lambda c: c.open_orders_page(limit=100),
    ),
    "tickers": ("/v3/market/tickers", envelope([wire.TICKER]), lambda c: c.tickers()),
    "fills": (
        "/v3/trade/order/trades",
        envelope([wire.FILL]),
        lambda c: c.fills(FillQuery(limit=100)),
    ),
    "order_history": (
        "/v3/trade/order/history",
        envelope([wire.ORDER]),
        lambda c: c.order_history(OrderQuery(limit=100)),
    ),
}


@pytest.mark.parametrize("name", sorted(READS))
def test_a_hostile_read_answer_is_a_typed_error_or_finite_models(
    answers: tuple[Answers, ExchangeClient], name: str
) -> None:
    fake, client = answers
    path, valid, read = READS[name]

    @FUZZ
    @given(doc=mutated(valid))
    def check(doc: Any) -> None:
        fake.bodies[path] = dump(doc)
        try:
            result = read(client)
        except ExchangeError:
            return
        _check_values(result, name)
        for item in result if isinstance(result, list) else [result]:
            for field in SIZES:
                value = getattr(item, field, None)
                if isinstance(value, Decimal):
                    assert value >= 0, f"{name}.{field} = {value}"

    check()


@pytest.mark.parametrize("status", [200, 201, 400, 418, 429, 500, 503])
def test_garbage_bodies_of_any_status_are_typed_errors(
    answers: tuple[Answers, ExchangeClient], status: int
) -> None:
    fake, client = answers

    @FUZZ
    @given(body=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
    def check(body: bytes) -> None:
        fake.bodies["/v3/account/balance"] = body
        fake.status = status
        with contextlib.suppress(ExchangeError):
            client.balance()

    try:
        check()
    finally:
        fake.status = 200


# --- a batch answer never invents an accepted order ---------------------------------------


def _requests(count: int) -> list[OrderRequest]:
    return [
        OrderRequest(
            symbol="BTC_USDT_PERP",
            side=OrderSide.BUY,
            type=OrderType.LIMIT,
            px=Decimal("50000") - n,
            sz=Decimal(1),
            clOrdId=f"fz-{n}",
        )
        for n in range(count)
    ]


def _valid_batch(requests: list[OrderRequest]) -> dict[str, Any]:
    return envelope(
        [
            {"clOrdId": r.clOrdId, "ordId": str(900 + n), "code": 200, "msg": "Success"}
            for n, r in enumerate(requests)
        ]
    )


def _said_accepted(doc: Any, index: int, cl_ord_id: str, ord_id: str) -> bool:
    """Whether the answer says plainly: this order, at this position, placed as ``ord_id``."""
    if not isinstance(doc, dict) or doc.get("code") not in (200, "200"):
        return False
    data = doc.get("data")
    if not isinstance(data, list) or index >= len(data) or not isinstance(data[index], dict):
        return False
    item = data[index]
    code = item.get("code", 200)
    return (
        item.get("clOrdId") == cl_ord_id
        and code in (200, "200")
        and isinstance(item.get("ordId"), str)
        and item["ordId"] == ord_id
        and bool(ord_id)
    )


@FUZZ
@given(count=st.integers(1, 4), data=st.data())
def test_a_garbled_batch_answer_never_journals_an_order_the_exchange_did_not_confirm(
    count: int, data: st.DataObject
) -> None:
    requests = _requests(count)
    doc = data.draw(mutated(_valid_batch(requests)))
    fake = Answers()
    fake.bodies["/v3/trade/orders"] = dump(doc)  # lookups find nothing: order lists are empty
    with client_answering(fake.handler) as client:
        submitter = Submitter(client, sleep=lambda _s: None, policy=RetryPolicy(max_attempts=2))
        report = submitter.place(requests)
    by_id = {o.cl_ord_id: o for o in report.outcomes}
    for index, request in enumerate(requests):
        outcome = by_id.get(request.clOrdId or "")
        if outcome is not None and outcome.outcome is Outcome.ACCEPTED:
            assert _said_accepted(doc, index, request.clOrdId or "", outcome.ord_id), (
                doc,
                outcome,
            )
    settled = set(by_id) | set(report.unsettled)
    assert settled == {r.clOrdId for r in requests}  # every order accounted for
