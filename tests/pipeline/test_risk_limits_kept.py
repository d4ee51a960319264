"""A strategy's limits as the risk book judges them are built once per pair of limit objects
and kept across plans (:func:`~botkit.pipeline.risk.limits_in_force`, issue 20: a cycle of 20
strategies built 20 stricter limit sets per plan): the kept answer is the plain one
(:func:`~botkit.pipeline.risk.judged_limits`) for every pair, and a strategy reloaded with
other limits is judged by its new ones at once."""

from __future__ import annotations

from decimal import Decimal
from itertools import product

from botkit.exchange.models import OrderSide, OrderType
from botkit.intents import OrderIntent, RiskLimits
from botkit.pipeline.risk import RiskBook, StrategyPolicy, Valuation, judged_limits
from botkit.pipeline.risk import limits_in_force as kept
from tests.pipeline.helpers import LIMIT_SETS

D = Decimal

_PAIRS = [
    *LIMIT_SETS,
    RiskLimits(max_orders_per_cycle=1, max_position=D("2")),
    RiskLimits(max_notional_per_cycle=D("50")),
]


def test_the_kept_limits_are_the_plain_ones_for_every_pair() -> None:
    """Asked twice (the second time from the kept entry), each pair gives what
    :func:`judged_limits` gives. Fails if the entry is kept by one of the two objects only, or
    by a value the other objects share."""
    for own, global_limits in product(_PAIRS, _PAIRS):
        plain = judged_limits(own, global_limits)
        assert kept(own, global_limits) == plain
        assert kept(own, global_limits) == plain


def _buy(n: int) -> OrderIntent:
    return OrderIntent(
        strategy="s", rule="r", slot=0, leg=n, cl_ord_id=f"s-{n}", symbol="AAA",
        side=OrderSide.BUY, type=OrderType.LIMIT, sz=D("1"), px=D("100"),
    )  # fmt: skip


def _admitted(book: RiskBook) -> int:
    valuation = Valuation(D("100"), D("1"))
    return sum(not book.admit_order(_buy(n), D("1"), D("100"), valuation)[0] for n in range(4))


def test_a_strategy_reloaded_with_other_limits_is_judged_by_its_new_ones() -> None:
    """The same global limits, the strategy's policy replaced between two plans' books (a
    reload): 3 orders a cycle, then 1, then 3 again. Fails if the kept limits were found by the
    strategy's name or by the global limits alone."""
    global_limits = RiskLimits()
    for cap in (3, 1, 3):
        policy = StrategyPolicy(limits=RiskLimits(max_orders_per_cycle=cap))
        book = RiskBook(global_limits=global_limits, policies={"s": policy})
        assert _admitted(book) == cap
