"""build_plan: validation, guards, kill switch, batching and ordering through the planner."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from botkit.errors import BatchMismatch
from botkit.exchange.models import (
    OpenOrder,
    OrderRequest,
    OrderSide,
    OrderType,
    PlaceResult,
    Position,
    PositionMode,
    PosSide,
)
from botkit.pipeline import (
    GuardSettings,
    OffTick,
    RiskLimits,
    StrategyPolicy,
    build_plan,
    make_batches,
    match_results,
)
from botkit.runner.killswitch import kill_switch_reason
from botkit.settings import Settings
from tests.pipeline.helpers import SYMBOL, intent, snapshot

D = Decimal


def codes(plan_refusals: object) -> list[list[str]]:
    return [[r.code for r in ref.reasons] for ref in plan_refusals]  # type: ignore[attr-defined]


# --- batching ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "sizes"),
    [(0, []), (1, [1]), (10, [10]), (11, [10, 1]), (25, [10, 10, 5])],
)
def test_batches_hold_at_most_ten(count: int, sizes: list[int]) -> None:
    assert [len(b) for b in make_batches(list(range(count)))] == sizes


def test_batches_refuse_a_size_above_ten() -> None:
    with pytest.raises(ValueError, match="outside"):
        make_batches([1], 11)


def _req(cid: str) -> OrderRequest:
    return OrderRequest(
        symbol=SYMBOL, side=OrderSide.BUY, type=OrderType.MARKET, sz=D(1), clOrdId=cid
    )


def test_results_are_matched_by_position_and_client_order_id() -> None:
    reqs = [_req("a"), _req("b")]
    results = [PlaceResult(clOrdId="a", ordId="1"), PlaceResult(clOrdId="b", code=10014)]
    assert [(q.clOrdId, r.code) for q, r in match_results(reqs, results)] == [
        ("a", 200),
        ("b", 10014),
    ]


@pytest.mark.parametrize(
    "results",
    [
        [PlaceResult(clOrdId="a", ordId="1")],
        [PlaceResult(clOrdId="b", ordId="2"), PlaceResult(clOrdId="a", ordId="1")],
        [PlaceResult(clOrdId="a", ordId="1"), PlaceResult(clOrdId="", code=400)],
    ],
    ids=["missing_result", "swapped", "empty_id"],
)
def test_result_mismatch_is_an_error_not_a_guess(results: list[PlaceResult]) -> None:
    with pytest.raises(BatchMismatch):
        match_results([_req("a"), _req("b")], results)


# --- the plan ----------------------------------------------------------------------------


def test_plan_is_deterministic_whatever_the_intent_order() -> None:
    intents = [intent(n, rule=f"r{n % 3}") for n in range(23)]
    a = build_plan(intents, snapshot())
    b = build_plan(list(reversed(intents)), snapshot())
    assert [o.cl_ord_id for o in a.accepted] == [o.cl_ord_id for o in b.accepted]
    assert [len(batch) for batch in a.batches] == [10, 10, 3]


def test_reduce_only_orders_go_first() -> None:
    plan = build_plan(
        [intent(0, rule="a"), intent(1, rule="z", side=OrderSide.SELL, reduce_only=True)],
        snapshot(positions=[Position(symbol=SYMBOL, qty=D(5))]),
    )
    assert [o.intent.rule for o in plan.accepted] == ["z", "a"]


def test_refused_orders_keep_every_reason_and_are_not_batched() -> None:
    plan = build_plan([intent(0), intent(1, px="100.05", sz="0.2")], snapshot(),
                      policies={"s1": StrategyPolicy(off_tick=OffTick.REFUSE)})  # fmt: skip
    assert [o.cl_ord_id for o in plan.accepted] == ["s1-r1-0"]
    assert codes(plan.refused) == [["px_off_tick", "sz_rounds_to_zero"]]
    assert sum(len(b) for b in plan.batches) == 1


def test_a_duplicate_id_within_a_cycle_is_refused() -> None:
    plan = build_plan([intent(0), intent(0)], snapshot())
    assert len(plan.accepted) == 1
    assert codes(plan.refused) == [["duplicate_cl_ord_id"]]


# --- guards ------------------------------------------------------------------------------


def test_max_orders_per_cycle_per_strategy_and_global() -> None:
    intents = [intent(n) for n in range(4)] + [intent(n, strategy="s2") for n in range(4)]
    plan = build_plan(
        intents,
        snapshot(),
        policies={"s1": StrategyPolicy(limits=RiskLimits(max_orders_per_cycle=2))},
        limits=RiskLimits(max_orders_per_cycle=5),
    )
    assert [o.cl_ord_id for o in plan.accepted] == [
        "s1-r1-0", "s1-r1-1", "s2-r1-0", "s2-r1-1", "s2-r1-2",
    ]  # fmt: skip
    assert [(t.guard, t.scope, t.cl_ord_id, t.limit, t.value) for t in plan.trips] == [
        ("max_orders_per_cycle", "strategy", "s1-r1-2", D(2), D(3)),
        ("max_orders_per_cycle", "strategy", "s1-r1-3", D(2), D(3)),
        ("max_orders_per_cycle", "global", "s2-r1-3", D(5), D(6)),
    ]


@pytest.mark.parametrize(
    ("sz", "limit", "admitted"),
    [("10", "1.0", True), ("11", "1.0", False)],
    ids=["at_limit", "over_limit"],
)
def test_max_notional_per_order_is_size_times_ctval_times_price(
    sz: str, limit: str, admitted: bool
) -> None:
    # 10 contracts × 0.001 × 100 = 1.0
    plan = build_plan(
        [intent(0, sz=sz)], snapshot(), limits=RiskLimits(max_notional_per_order=D(limit))
    )
    assert bool(plan.accepted) is admitted
    if not admitted:
        (trip,) = plan.trips
        assert (trip.guard, trip.limit, trip.value) == (
            "max_notional_per_order",
            D(limit),
            D("1.100"),
        )


def test_market_order_notional_uses_the_mark() -> None:
    plan = build_plan(
        [intent(0, type=OrderType.MARKET, px=None, sz="10")],
        snapshot(mark="200"),
        limits=RiskLimits(max_notional_per_order=D("1.5")),
    )
    assert plan.trips[0].value == D("2.000")


def test_market_order_without_mark_is_refused_when_notional_is_limited() -> None:
    plan = build_plan(
        [intent(0, type=OrderType.MARKET, px=None)],
        snapshot(mark=None),
        limits=RiskLimits(max_notional_per_cycle=D(100)),
    )
    assert codes(plan.refused) == [["guard_notional_unknown"]]


def test_max_notional_per_cycle_accumulates() -> None:
    plan = build_plan(
        [intent(n, sz="10") for n in range(4)],  # 1.0 each
        snapshot(),
        policies={"s1": StrategyPolicy(limits=RiskLimits(max_notional_per_cycle=D("2.5")))},
    )
    assert len(plan.accepted) == 2
    assert [t.value for t in plan.trips] == [D("3.000"), D("3.000")]


@pytest.mark.parametrize(
    ("position", "resting", "side", "sz", "admitted"),
    [
        ("0", "0", OrderSide.BUY, "5", True),
        ("0", "0", OrderSide.BUY, "6", False),
        ("3", "0", OrderSide.BUY, "2", True),
        ("3", "0", OrderSide.BUY, "3", False),
        ("3", "2", OrderSide.BUY, "1", False),  # resting buys count in the worst case
        ("3", "0", OrderSide.SELL, "8", True),  # long 3, sell 8 -> short 5
        ("3", "0", OrderSide.SELL, "9", False),
        ("-5", "0", OrderSide.BUY, "10", True),
    ],
)
def test_max_position_bounds_the_worst_case_after_the_order(
    position: str, resting: str, side: OrderSide, sz: str, admitted: bool
) -> None:
    positions = [Position(symbol=SYMBOL, qty=D(position))] if position != "0" else []
    opens = (
        [
            OpenOrder(
                symbol=SYMBOL,
                side=OrderSide.BUY,
                type=OrderType.LIMIT,
                sz=D(resting),
                px=D(99),
                clOrdId="old",
                posSide=PosSide.BOTH,
            )
        ]
        if resting != "0"
        else []
    )
    plan = build_plan(
        [intent(0, side=side, sz=sz)],
        snapshot(positions=positions, open_orders=opens),
        limits=RiskLimits(max_position=D(5)),
    )
    assert bool(plan.accepted) is admitted


def test_max_position_counts_orders_accepted_earlier_in_the_cycle() -> None:
    plan = build_plan([intent(n, sz="2") for n in range(3)], snapshot(),
                      limits=RiskLimits(max_position=D(5)))  # fmt: skip
    assert len(plan.accepted) == 2
    assert plan.trips[0].value == D(6)


def test_reduce_only_orders_pass_the_position_guard() -> None:
    plan = build_plan(
        [intent(0, side=OrderSide.SELL, sz="9", reduce_only=True)],
        snapshot(positions=[Position(symbol=SYMBOL, qty=D(9))]),
        limits=RiskLimits(max_position=D(5)),
    )
    assert len(plan.accepted) == 1


def test_hedge_legs_are_guarded_separately() -> None:
    plan = build_plan(
        [
            intent(0, pos_side=PosSide.LONG, sz="2"),
            intent(1, side=OrderSide.SELL, pos_side=PosSide.SHORT, sz="2"),
        ],
        snapshot(
            position_mode=PositionMode.HEDGE,
            positions=[
                Position(symbol=SYMBOL, posSide=PosSide.LONG, qty=D(4)),
                Position(symbol=SYMBOL, posSide=PosSide.SHORT, qty=D(1)),
            ],
        ),
        limits=RiskLimits(max_position=D(5)),
    )
    assert [o.cl_ord_id for o in plan.accepted] == ["s1-r1-1"]
    assert plan.trips[0].value == D(6)


def test_the_stricter_of_strategy_and_global_limit_applies() -> None:
    strict = RiskLimits(max_notional_per_order=D("0.5"))
    loose = RiskLimits(max_notional_per_order=D("5"))
    assert strict.stricter(loose).max_notional_per_order == D("0.5")
    assert loose.stricter(strict).max_notional_per_order == D("0.5")
    assert RiskLimits().stricter(loose) == loose


def test_kill_switch_stops_every_new_order_and_is_journaled_once(tmp_path: Path) -> None:
    flag = tmp_path / "STOP"
    guards = GuardSettings(kill_switch_file=str(flag))
    assert kill_switch_reason(guards) is None
    flag.touch()
    reason = kill_switch_reason(guards)
    assert reason is not None
    assert str(flag) in reason
    plan = build_plan([intent(0), intent(1)], snapshot(), kill_switch=reason)
    assert not plan.accepted
    assert not plan.batches
    assert codes(plan.refused) == [["kill_switch"], ["kill_switch"]]
    assert [(t.guard, t.value) for t in plan.trips] == [("kill_switch", D(2))]
    assert "KILL SWITCH" in plan.render()
    assert kill_switch_reason(GuardSettings(kill_switch=True)) is not None


def test_render_shows_rounding_refusals_and_batches() -> None:
    plan = build_plan([intent(0, px="100.05"), intent(1, px=None)], snapshot())
    text = plan.render()
    assert "1 to send in 1 batch(es), 1 refused" in text
    assert "rounded px 100.05 -> 100.0 (step 0.1)" in text
    assert "px_missing" in text


def test_guard_settings_come_from_the_settings(tmp_path: Path) -> None:
    settings = Settings(
        max_orders_per_cycle=3,
        max_notional_per_order=D("250"),
        max_position=D("7"),
        kill_switch_file=tmp_path / "STOP",
    )
    guards = GuardSettings.from_settings(settings)
    assert guards.limits == RiskLimits(
        max_orders_per_cycle=3, max_notional_per_order=D("250"), max_position=D("7")
    )
    assert guards.kill_switch_file == str(tmp_path / "STOP")
    assert not guards.kill_switch
