"""An order's body text, written directly (:meth:`OrderRequest.wire_text`), is what
``json.dumps`` writes of its wire body, and a batch's request body is the list of them as the
encoder joins it (issue 20: the batch body without the JSON encoder's string per key and
value). Orders of every shape: each optional field there or not, symbols and client order ids
that need escaping (made without validation, as ``model_construct`` allows), amounts with
exponents."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from botkit.exchange import models
from botkit.exchange.models import (
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.live import http
from botkit.live.clock import ClockSync
from botkit.live.session import Session

_TEXTS = st.sampled_from(
    ["BTC_USDT_PERP", "ETH-USDT", 'a"b', "a\\b", "é", "x\ny", "tab\t", "del\x7f", "%s", " "]
) | st.text(max_size=12)
_AMOUNTS = st.sampled_from(["1", "2.50", "0.001", "1E+3", "1E-30", "100.000", "7e2"]).map(Decimal)


@st.composite
def _orders(draw: st.DrawFn) -> OrderRequest:
    fields: dict[str, Any] = {
        "symbol": draw(_TEXTS),
        "side": draw(st.sampled_from(list(OrderSide))),
        "type": draw(st.sampled_from(list(OrderType))),
        "sz": draw(_AMOUNTS),
        "mgnMode": draw(st.sampled_from(list(MarginMode))),
        "posSide": draw(st.sampled_from(list(PosSide))),
        "px": draw(st.none() | _AMOUNTS),
        "clOrdId": draw(st.none() | st.sampled_from(["bk-1_a", "A" * 32]) | _TEXTS),
        "reduceOnly": draw(st.booleans()),
        "timeInForce": draw(st.sampled_from(list(TimeInForce))),
        "stpMode": draw(st.sampled_from(list(StpMode))),
    }
    return OrderRequest.model_construct(**fields)  # no validation: any text gets here


@settings(max_examples=500, deadline=None)
@given(order=_orders())
def test_an_orders_text_is_what_json_dumps_writes_of_its_body(order: OrderRequest) -> None:
    """Fails if a key is written out of the body's order, an optional one is missed, or a text
    needing an escape is written as it is."""
    assert order.wire_text() == json.dumps(order.to_wire(), separators=(",", ":"))


@settings(max_examples=200, deadline=None)
@given(orders=st.lists(_orders(), min_size=1, max_size=10))
def test_a_batchs_body_is_the_encoders_text_of_the_list(orders: list[OrderRequest]) -> None:
    joined = "[" + ",".join([o.wire_text() for o in orders]) + "]"
    assert joined == http.dumps([o.to_wire() for o in orders])


def test_every_word_an_order_holds_is_written_as_it_is() -> None:
    """The direct text is in use with these enums (their values need no escaping)."""
    assert models._PLAIN_WORDS
    for kind in (OrderSide, OrderType, MarginMode, PosSide, TimeInForce, StpMode):
        for member in kind:
            assert json.dumps(member.value) == f'"{member.value}"'


def test_a_body_given_as_text_is_sent_as_the_same_body_given_as_a_value() -> None:
    """The session sends ``body_text`` as it sends the text of ``body`` (the same bytes and
    headers, Content-Type included); both at once is a mistake, refused before anything
    leaves."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"code": 200, "msg": "Success", "data": []})

    session = Session(
        "https://api.test", key="k", secret=SecretStr("s"), passphrase=SecretStr("p"),
        signing="v3", clock=ClockSync(), transport=httpx.MockTransport(answer),
    )  # fmt: skip
    body = [{"symbol": "BTC_USDT_PERP", "sz": "1"}]
    session.request("POST", "/v3/trade/orders", body=body, signed=False)
    session.request("POST", "/v3/trade/orders", body_text=http.dumps(body), signed=False)
    with pytest.raises(ValueError, match="one body"):
        session.request("POST", "/v3/trade/orders", body=body, body_text="[]", signed=False)
    session.close()
    assert len(seen) == 2
    assert seen[0].content == seen[1].content
    assert seen[0].headers.raw == seen[1].headers.raw
    assert seen[1].headers["content-type"] == "application/json"


_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=40) | st.sampled_from(["", "a\n", "K", "ab-_9", "a b", "ٳ"]))
def test_the_text_checks_say_what_the_plain_ones_say(text: str) -> None:
    """The client order id's characters (the planner's check, the direct build) as the set of
    them says, a trailing newline and look-alike letters included; a text the encoder writes
    as it is exactly when ``json.dumps`` adds only the quotes."""
    assert (models.only_cl_ord_id_chars(text) is not None) == _ID_CHARS.issuperset(text)
    assert (models._JSON_AS_IS(text) is not None) == (json.dumps(text) == f'"{text}"')
