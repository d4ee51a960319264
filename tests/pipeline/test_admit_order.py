"""The risk book admits a planned order from its intent and checked amounts
(:meth:`RiskBook.admit_order`, what :func:`build_plan` calls) exactly as it admits the order's
:class:`Candidate` (:meth:`RiskBook.admit_valued`): the same trips, the same value, and the
same counts and resting sizes recorded for the orders after it (issue 20: no candidate built
for an order no guard applies to)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderSide, OrderType, Position, PosSide
from botkit.intents import OrderIntent, RiskLimits
from botkit.pipeline.risk import Candidate, RiskBook, StrategyPolicy, Valuation
from tests.pipeline.helpers import LIMIT_SETS

D = Decimal


@st.composite
def _order(draw: st.DrawFn, n: int) -> tuple[OrderIntent, Decimal, Decimal | None]:
    """An intent with the size and price its checks settled on."""
    order_type = draw(st.sampled_from([OrderType.LIMIT, OrderType.MARKET]))
    px = None if order_type is OrderType.MARKET else draw(st.sampled_from([D("90"), D("110")]))
    sz = draw(st.sampled_from([D("1"), D("2.5"), D("4")]))
    intent = OrderIntent(
        strategy=draw(st.sampled_from(["s1", "s2", "s3"])),
        rule="r",
        slot=0,
        leg=n,
        cl_ord_id=f"id{n}",
        symbol=draw(st.sampled_from(["AAA", "BBB"])),
        side=draw(st.sampled_from(list(OrderSide))),
        type=order_type,
        sz=sz + D("0.3"),  # the intent's own size: the checked one is what counts
        px=None if px is None else px + D("0.7"),
        pos_side=draw(st.sampled_from([PosSide.BOTH, PosSide.LONG, PosSide.SHORT])),
        reduce_only=draw(st.booleans()),
    )
    return intent, sz, px


@settings(max_examples=200, deadline=None)
@given(
    orders=st.integers(min_value=1, max_value=25).flatmap(
        lambda k: st.tuples(*[_order(n) for n in range(k)])
    ),
    own=st.tuples(*[st.sampled_from(LIMIT_SETS) for _ in range(3)]),
    global_limits=st.sampled_from([RiskLimits(), RiskLimits(), *LIMIT_SETS[2:]]),
    mark=st.sampled_from([D("100"), None]),
)
def test_an_order_is_admitted_from_its_intent_as_its_candidate_is(
    orders: tuple[tuple[OrderIntent, Decimal, Decimal | None], ...],
    own: tuple[RiskLimits, ...],
    global_limits: RiskLimits,
    mark: Decimal | None,
) -> None:
    """Two books, one admitting each order's candidate, one its intent: every answer the same,
    whatever the limits (none, position, counts, notional; per strategy and global), so what
    each recorded is the same too. Fails if the intent's way values the order at its own
    (unchecked) price or size, reads the wrong price for a market order, or leaves out the
    resting size another strategy's position limit reads."""
    policies = {f"s{k + 1}": StrategyPolicy(limits=limits) for k, limits in enumerate(own)}
    positions = [Position(symbol="AAA", qty=D("2"), posSide=PosSide.BOTH, side=OrderSide.BUY)]
    by_candidate = RiskBook(global_limits=global_limits, policies=policies, positions=positions)
    by_intent = RiskBook(global_limits=global_limits, policies=policies, positions=positions)
    valuation = Valuation(mark, D("1"))
    for intent, sz, px in orders:
        expected = by_candidate.admit_valued(Candidate.of(intent, sz=sz, px=px), valuation)
        assert repr(by_intent.admit_order(intent, sz, px, valuation)) == repr(expected)
    assert by_intent.positions == by_candidate.positions


def test_an_order_admitted_from_its_intent_rests_for_another_strategy_s_position_limit() -> None:
    """s1 has no limit: its order is admitted without a candidate, and what it adds to the
    symbol's resting BUYs still counts against s2's position limit (2 held + 2 resting + 2 >
    5). Fails if the intent's way does not record the resting size."""
    book = RiskBook(
        global_limits=RiskLimits(),
        policies={"s2": StrategyPolicy(limits=RiskLimits(max_position=D("5")))},
        positions=[Position(symbol="AAA", qty=D("2"), posSide=PosSide.BOTH, side=OrderSide.BUY)],
    )
    valuation = Valuation(D("100"), D("1"))

    def buy(strategy: str) -> OrderIntent:
        return OrderIntent(
            strategy=strategy, rule="r", slot=0, leg=0, cl_ord_id=f"{strategy}-0", symbol="AAA",
            side=OrderSide.BUY, type=OrderType.LIMIT, sz=D("2"), px=D("100"),
        )  # fmt: skip

    assert book.admit_order(buy("s1"), D("2"), D("100"), valuation) == ((), D("200"))
    (trip,), value = book.admit_order(buy("s2"), D("2"), D("100"), valuation)
    assert (trip.guard, trip.value, value) == ("max_position", D("6"), D("200"))
