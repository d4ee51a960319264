"""The port's open-order models built from the view's two parts (``order_parts``) are the
models of the whole view: the same fields, extras, key order and fields set, and the models the
wire's answer validates to."""

from __future__ import annotations

from botkit.exchange.models import OpenOrder, OrderRequest
from botkit.sim.port import _OPEN_ORDER, SimPort
from botkit.sim.views import order_parts, order_view
from tests.sim.conftest import BTC, Sim

_WIRE_ORDER = [  # the spec's fields of an order (2.5), in the order the wire writes them
    "symbol", "side", "type", "ordId", "clOrdId", "mgnMode", "posSide", "px", "sz", "state",
    "cancelReason", "source", "reduceOnly", "timeInForce", "stpMode", "avgPx", "execQty",
    "execAmt", "feeCcy", "feeAmt", "deductCcy", "deductAmt", "actType", "qCcy", "lever", "slPx",
    "slTrgPx", "slTrgPxType", "tpPx", "tpTrgPx", "tpTrgPxType", "cTime", "uTime",
]  # fmt: skip


def _req(side: str, type_: str, sz: str, cid: str, **kw: str) -> OrderRequest:
    fields = {"symbol": BTC, "side": side, "type": type_, "sz": sz, "clOrdId": cid, **kw}
    return OrderRequest.model_validate(fields)


def _orders(sim: Sim) -> SimPort:
    """Orders in every state: resting, filled (a market order), cancelled, a reduce-only
    limit resting against the position."""
    port = SimPort(sim.engine)
    port.place_orders(
        [
            _req("BUY", "MARKET", "2", "m1"),
            _req("BUY", "LIMIT", "1", "l1", px="59000"),
            _req("BUY", "LIMIT", "3", "l2", px="58000.5"),
            _req("SELL", "LIMIT", "1", "r1", px="61000", reduceOnly="true"),
        ]
    )
    sim.clock.advance(60_000)
    sim.mark("60100")
    port.cancel_order(BTC, cl_ord_id="l2")
    return port


def test_open_order_models_from_parts_are_the_whole_views(sim: Sim) -> None:
    port = _orders(sim)
    engine = sim.engine
    orders = [engine.find(cl_ord_id=c) for c in ("m1", "l1", "l2", "r1")]
    assert all(o is not None for o in orders)
    for order in orders:
        assert order is not None
        view = order_view(order, engine)
        assert list(view) == _WIRE_ORDER
        fields, extras = order_parts(order, engine)
        assert {**fields, **extras} == view
        whole = _OPEN_ORDER(order_view(order, engine))
        split = _OPEN_ORDER.parts(fields, extras)
        assert split == whole
        assert list(split.__dict__.items()) == list(whole.__dict__.items())
        assert list((split.model_extra or {}).items()) == list((whole.model_extra or {}).items())
        assert split.model_fields_set == whole.model_fields_set
    # the fields of the models the port hands out are those of the wire's answer validated
    # (the wire's extras stay text: not validated)
    wire = [OpenOrder.model_validate(o) for o in sim.get("/v3/trade/order/opens")]
    assert sorted(o.clOrdId for o in wire) == ["l1", "r1"]
    mine = sorted(port.open_orders(BTC), key=_cid)
    assert [_fields(o) for o in mine] == [_fields(o) for o in sorted(wire, key=_cid)]


def _cid(order: OpenOrder) -> str:
    return order.clOrdId


def _fields(order: OpenOrder) -> dict[str, object]:
    return {name: getattr(order, name) for name in OpenOrder.model_fields}
