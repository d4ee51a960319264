"""An order's kept JSON text is what ``json.dumps`` writes for its wire body, and the HMAC key
made once signs as ``hmac.digest`` does (issue 20: the client writes an order batch's body from
each order's text and signs with the key's blocks hashed once)."""

from __future__ import annotations

import copy
import hmac
import json
import pickle
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import (
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    PosSide,
    StpMode,
    TimeInForce,
    order_request,
)
from botkit.exchange.signing import HmacKey, sign
from botkit.live import http

D = Decimal

_AMOUNTS = st.sampled_from(
    ["1", "2.50", "0.001", "61234.5", "1E+3", "1E-30", "100.000", "12345678901234567890.1"]
).map(Decimal) | st.decimals(min_value=D("1E-12"), max_value=D("1E12"), places=8).filter(
    lambda d: d > 0
)
# a symbol is any text the model takes: quotes, backslashes, controls and non-ASCII escaped
_SYMBOLS = st.sampled_from(["BTC_USDT_PERP", 'A"B', "a\\b", "é€", "x\n\t", "\x00", "𝄞"]) | st.text(
    max_size=12
)
_IDS = st.none() | st.sampled_from(["a", "bk-x_1", "A" * 32, "ok-9"])


def _reference(body: Any) -> str:
    """The body as the client wrote it before: ``json.dumps`` of the wire objects."""
    return json.dumps(body, separators=(",", ":"))


@st.composite
def _orders(draw: st.DrawFn) -> OrderRequest:
    values: dict[str, Any] = {
        "symbol": draw(_SYMBOLS),
        "side": draw(st.sampled_from(list(OrderSide))),
        "type": draw(st.sampled_from(list(OrderType))),
        "sz": draw(_AMOUNTS),
        "mgnMode": draw(st.sampled_from(list(MarginMode))),
        "posSide": draw(st.sampled_from(list(PosSide))),
        "px": draw(st.none() | _AMOUNTS),
        "clOrdId": draw(_IDS),
        "reduceOnly": draw(st.booleans()),
        "timeInForce": draw(st.sampled_from(list(TimeInForce))),
        "stpMode": draw(st.sampled_from(list(StpMode))),
    }
    if values["clOrdId"] is not None and draw(st.booleans()):  # the pipeline's direct build
        return order_request(
            symbol=values["symbol"], side=values["side"], order_type=values["type"],
            sz=values["sz"], mgn_mode=values["mgnMode"], pos_side=values["posSide"],
            px=values["px"], cl_ord_id=values["clOrdId"], reduce_only=values["reduceOnly"],
            time_in_force=values["timeInForce"], stp_mode=values["stpMode"],
        )  # fmt: skip
    return OrderRequest(**values)


@settings(max_examples=500, deadline=None)
@given(orders=st.lists(_orders(), min_size=1, max_size=10), wire_first=st.booleans())
def test_an_orders_text_is_json_dumps_of_its_wire_body(
    orders: list[OrderRequest], wire_first: bool
) -> None:
    """Fails if a key, its order, a value's escaping (a symbol's quote, backslash, control or
    non-ASCII character) or an optional field's presence differs from ``json.dumps``."""
    if wire_first:  # the journal usually asks for the body first; either order gives the same
        for order in orders:
            order.to_wire()
    for order in orders:
        assert order.wire_text() == _reference(order.to_wire())
        assert json.loads(order.wire_text()) == order.to_wire()
    body = http.JsonText("[" + ",".join(o.wire_text() for o in orders) + "]")
    assert http.dumps(body) == _reference([o.to_wire() for o in orders])
    assert type(http.dumps(body)) is str


def test_the_kept_text_is_no_field_and_never_a_stale_one() -> None:
    """Fails if the kept text shows in equality, ``repr`` or a dump, or if a copy made with an
    update keeps the text of the order it was copied from (the old price would be sent)."""
    order = order_request(
        symbol="BTC_USDT_PERP", side=OrderSide.BUY, order_type=OrderType.LIMIT, sz=D("1"),
        mgn_mode=MarginMode.CROSS, pos_side=PosSide.BOTH, px=D("100.5"), cl_ord_id="a",
        reduce_only=False, time_in_force=TimeInForce.IOC, stp_mode=StpMode.NONE,
    )  # fmt: skip
    fresh = OrderRequest(**{k: getattr(order, k) for k in OrderRequest.model_fields})
    text = order.wire_text()
    assert '"px":"100.5"' in text
    assert order == fresh
    assert repr(order) == repr(fresh)
    assert order.model_dump() == fresh.model_dump()
    moved = order.model_copy(update={"px": D("7")})
    assert '"px":"7"' in moved.wire_text()
    assert moved.wire_text() == _reference(moved.to_wire())
    assert copy.deepcopy(order).wire_text() == text
    assert pickle.loads(pickle.dumps(order)).wire_text() == text  # noqa: S301 - our own bytes


def test_a_body_that_is_not_json_text_is_still_written_by_json_dumps() -> None:
    body = [{"symbol": "A", "sz": D("1.50")}, "x"]
    assert http.dumps(body) == '[{"symbol":"A","sz":"1.50"},"x"]'
    assert http.dumps("[1]") == '"[1]"'  # a plain str is a JSON string, not a body's text


_KEYS = st.binary(max_size=200) | st.sampled_from([b"", b"k" * 64, b"k" * 65, b"\x00" * 70])


@settings(max_examples=300, deadline=None)
@given(key=_KEYS, message=st.binary(max_size=3000))
def test_the_key_made_once_signs_as_hmac_digest_does(key: bytes, message: bytes) -> None:
    """Fails if the key's padding, its hashing when longer than a block, or the inner and
    outer pads are wrong: every signature the client sends would be refused."""
    made = HmacKey(key)
    assert made.digest(message) == hmac.digest(key, message, "sha256")
    assert made.digest(message) == made.digest(message)  # the kept states are not consumed


@settings(max_examples=100, deadline=None)
@given(secret=st.text(max_size=80), message=st.text(max_size=300))
def test_signing_with_the_key_or_its_text_gives_one_signature(secret: str, message: str) -> None:
    assert sign(HmacKey(secret), message) == sign(secret, message)


def test_the_key_shows_and_writes_nothing_of_the_secret() -> None:
    made = HmacKey("very-secret-value")
    assert "very-secret" not in repr(made)
    assert "very-secret" not in str(made)
    with pytest.raises(TypeError):
        pickle.dumps(made)
    with pytest.raises(AttributeError):  # no place to keep the secret's text
        made.secret = "x"  # type: ignore[attr-defined]
