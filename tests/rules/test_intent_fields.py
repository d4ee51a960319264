"""Every field of an order intent is the one its rule says (issue 20: intents are built
positionally, and a rung whose size is a constant reads no names of its own)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.exchange.models import (
    MarginMode,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.intents import OrderIntent
from botkit.rules import client_order_id, evaluate
from tests.rules.helpers import HEADER, NOW, snapshot, strategy

D = Decimal
SLOT = NOW // 60_000

_HEDGE = HEADER + "margin: {position_mode: HEDGE}\nrules:\n"
_FIELDS = (
    "side: SELL, type: LIMIT_MAKER, pos_side: SHORT, mgn_mode: ISOLATED, reduce_only: true,"
    " time_in_force: GTC, stp_mode: EXPIRE_MAKER"
)


def _intents(action: str) -> list[OrderIntent]:
    rules = f"  - name: the-rule\n    when: price.mark > 0\n    place:\n      {action}\n"
    strat = strategy(rules, header=_HEDGE)
    evaluation = evaluate(strat, snapshot(mode=PositionMode.HEDGE), {}, NOW)
    found = [i for r in evaluation.results for i in r.intents]
    assert all(isinstance(i, OrderIntent) for i in found), evaluation
    return [i for i in found if isinstance(i, OrderIntent)]


def _expected(leg: int, sz: str, px: str, side: OrderSide = OrderSide.SELL) -> OrderIntent:
    name = "test"
    return OrderIntent(
        strategy=name,
        rule="the-rule",
        slot=SLOT,
        leg=leg,
        cl_ord_id=client_order_id(name, "the-rule", SLOT, leg),
        symbol="BTC_USDT_PERP",
        side=side,
        type=OrderType.LIMIT_MAKER,
        sz=D(sz),
        px=D(px),
        mgn_mode=MarginMode.ISOLATED,
        pos_side=PosSide.SHORT,
        reduce_only=True,
        time_in_force=TimeInForce.GTC,
        stp_mode=StpMode.EXPIRE_MAKER,
    )


@pytest.mark.parametrize(("sz", "sizes"), [("2", ["2", "2", "2"]), ("1 + i", ["1", "2", "3"])])
def test_a_ladder_s_intents_carry_every_field_of_the_rule(sz: str, sizes: list[str]) -> None:
    """Fails if two fields of the intent are swapped, or a constant size is read per rung
    otherwise than an expression of ``i``."""
    got = _intents(f"ladder: {{{_FIELDS}, count: 3, from_px: 100, step_px: 10, sz: {sz}}}")
    want = [_expected(k, s, str(100 + 10 * k)) for k, s in enumerate(sizes)]
    assert got == want
    assert [(i.strategy, i.rule, i.symbol, i.cl_ord_id, i.slot, i.leg) for i in got] == [
        (w.strategy, w.rule, w.symbol, w.cl_ord_id, w.slot, w.leg) for w in want
    ]
    assert all(i.inputs is got[0].inputs for i in got)


def test_a_rung_size_that_fails_names_its_rung() -> None:
    [result] = evaluate(
        strategy(
            "  - name: the-rule\n    when: price.mark > 0\n    place:\n"
            "      ladder: {side: BUY, count: 3, from_px: 100, step_px: 10, sz: 1 - i}\n"
        ),
        snapshot(),
        {},
        NOW,
    ).results
    assert result.reason.endswith("ladder rung 1 sz evaluated to 0, must be > 0 (1 - i)")
