"""An order request built directly equals the validated one, and its wire body is the plain
one (issue 20: the pipeline builds every order it sends through :func:`order_request`)."""

from __future__ import annotations

import copy
import pickle
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from botkit.exchange import models
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

D = Decimal

_AMOUNTS = st.sampled_from(
    ["1", "2.50", "0.001", "61234.5", "1E+3", "0", "-1", "NaN", "Infinity", "1E-30", "100.000"]
).map(Decimal)
_IDS = st.sampled_from(["a", "bk-x_1", "A" * 32, "A" * 33, "", "bad id", "é", "x\n", "ok-9"])


def _fields(values: dict[str, Any]) -> dict[str, Any]:
    """order_request's keywords as OrderRequest's field names."""
    names = {"order_type": "type", "mgn_mode": "mgnMode", "pos_side": "posSide",
             "cl_ord_id": "clOrdId", "reduce_only": "reduceOnly",
             "time_in_force": "timeInForce", "stp_mode": "stpMode"}  # fmt: skip
    return {names.get(k, k): v for k, v in values.items()}


def _plain_wire(order: OrderRequest) -> dict[str, Any]:
    """The body as the model's fields say it, written plainly (``.value``, the text helpers)."""
    body: dict[str, Any] = {
        "symbol": order.symbol,
        "side": order.side.value,
        "mgnMode": order.mgnMode.value,
        "posSide": order.posSide.value,
        "type": order.type.value,
        "sz": order.sz_text,
    }
    if order.clOrdId is not None:
        body["clOrdId"] = order.clOrdId
    if order.px is not None:
        body["px"] = order.px_text
    if order.reduceOnly:
        body["reduceOnly"] = True
    if order.timeInForce is not TimeInForce.GTC:
        body["timeInForce"] = order.timeInForce.value
    if order.stpMode is not StpMode.NONE:
        body["stpMode"] = order.stpMode.value
    return body


def _shape(order: OrderRequest) -> list[tuple[str, type, str]]:
    return [(k, type(v), str(v)) for k, v in order.__dict__.items()]


def test_the_direct_build_is_in_use_with_this_pydantic() -> None:
    assert models.FAST_ORDER_REQUESTS


@settings(max_examples=300, deadline=None)
@given(
    symbol=st.sampled_from(["BTC_USDT_PERP", "ETH_USDT_PERP"]),
    side=st.sampled_from(list(OrderSide)),
    order_type=st.sampled_from(list(OrderType)),
    sz=_AMOUNTS,
    mgn_mode=st.sampled_from(list(MarginMode)),
    pos_side=st.sampled_from(list(PosSide)),
    px=st.none() | _AMOUNTS,
    cl_ord_id=_IDS,
    reduce_only=st.booleans(),
    time_in_force=st.sampled_from(list(TimeInForce)),
    stp_mode=st.sampled_from(list(StpMode)),
)
def test_a_direct_build_equals_the_validated_model_or_is_refused_alike(**values: Any) -> None:
    """Fails if the direct build lets through a value validation refuses (a size or price of
    0, NaN or below, an id of a bad character or length) or stores anything differently."""
    refused: list[Any] | None
    try:
        slow = OrderRequest(**_fields(values))
    except ValidationError as exc:
        refused = exc.errors()
    else:
        refused = None
    if refused is not None:
        with pytest.raises(ValidationError) as fast_exc:
            order_request(**values)
        assert fast_exc.value.errors() == refused
        return
    fast = order_request(**values)
    assert fast == slow
    assert _shape(fast) == _shape(slow)
    assert fast.model_fields_set == slow.model_fields_set
    assert repr(fast) == repr(slow)
    assert fast.to_wire() == slow.to_wire() == _plain_wire(slow)
    assert list(fast.to_wire()) == list(_plain_wire(slow))
    assert all(type(v) in (str, bool) for v in fast.to_wire().values())
    with pytest.raises(ValidationError):  # frozen, as the validated one
        fast.sz = D(3)  # type: ignore[misc]
    assert fast.model_copy(update={"px": D("7")}).to_wire()["px"] == "7"


def test_values_of_other_types_go_through_validation() -> None:
    """Words and subclasses are what validation turns into members and plain strings."""

    class Text(str):
        pass

    got = order_request(
        symbol=Text("BTC_USDT_PERP"), side="buy", order_type="LIMIT", sz=D(1),  # type: ignore[arg-type]
        mgn_mode=MarginMode.CROSS, pos_side=PosSide.BOTH, px=D("5"), cl_ord_id="a",
        reduce_only=False, time_in_force=TimeInForce.GTC, stp_mode=StpMode.NONE,
    )  # fmt: skip
    assert got.side is OrderSide.BUY
    assert got.type is OrderType.LIMIT
    assert type(got.symbol) is str
    assert got.to_wire()["side"] == "BUY"


def test_the_kept_wire_body_is_never_a_stale_or_shared_one() -> None:
    """Fails if a copy keeps the body of the request it was copied from (an updated price
    would go out as the old one), or if a caller's change to a body reaches the next one."""
    order = order_request(
        symbol="BTC_USDT_PERP", side=OrderSide.BUY, order_type=OrderType.LIMIT, sz=D("1"),
        mgn_mode=MarginMode.CROSS, pos_side=PosSide.BOTH, px=D("100.5"), cl_ord_id="a",
        reduce_only=False, time_in_force=TimeInForce.IOC, stp_mode=StpMode.NONE,
    )  # fmt: skip
    first = order.to_wire()
    first["px"] = "1"
    assert order.to_wire() == _plain_wire(order)
    assert order.to_wire() is not order.to_wire()
    for deep in (False, True):
        moved = order.model_copy(update={"px": D("99.5"), "sz": D("2")}, deep=deep)
        assert moved.to_wire() == _plain_wire(moved)
        assert (moved.to_wire()["px"], moved.to_wire()["sz"]) == ("99.5", "2")
    assert copy.copy(order).to_wire() == copy.deepcopy(order).to_wire() == _plain_wire(order)
    again = pickle.loads(pickle.dumps(order))  # noqa: S301 - our own bytes
    assert again.to_wire() == _plain_wire(order)
    plain = OrderRequest(**dict(order))
    assert order == plain
    assert plain == order
    assert hash(order) == hash(plain)
    assert repr(order) == repr(plain)
    assert order.model_dump() == plain.model_dump()
    assert order.model_dump_json() == plain.model_dump_json()
    assert list(order) == list(plain)


def test_without_the_direct_build_every_request_is_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fallback a pydantic laid out otherwise gets: the same requests, validated."""
    values: dict[str, Any] = {
        "symbol": "BTC_USDT_PERP", "side": OrderSide.SELL, "order_type": OrderType.LIMIT,
        "sz": D("2.50"), "mgn_mode": MarginMode.CROSS, "pos_side": PosSide.BOTH,
        "px": D("7.5"), "cl_ord_id": "a", "reduce_only": False,
        "time_in_force": TimeInForce.GTC, "stp_mode": StpMode.NONE,
    }  # fmt: skip
    fast = order_request(**values)
    monkeypatch.setattr(models, "FAST_ORDER_REQUESTS", False)
    monkeypatch.setattr(models, "_direct", None)  # never reached
    slow = order_request(**values)
    assert _shape(slow) == _shape(fast)
    assert slow.to_wire() == fast.to_wire()
    with pytest.raises(ValidationError):
        order_request(**{**values, "sz": D(0)})
