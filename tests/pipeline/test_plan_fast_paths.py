"""The planner's per-plan shortcuts give what checking each order on its own gives (issue 20).

``build_plan`` reads each symbol's instrument, mark and band once per plan and hands the band
to :func:`validate_intent`; :func:`on_step` keeps each step's quantum; the risk book reads each
strategy's limits once. These tests compare with the plain path: every order validated alone
(its band computed inside), and quanta computed afresh.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.errors import ExchangeError
from botkit.exchange.models import (
    Balance,
    Instrument,
    InstrumentStatus,
    LimitPrice,
    OrderSide,
    OrderType,
    Position,
    PositionMode,
    PosSide,
    Ticker,
    TimeInForce,
)
from botkit.intents import OffTick, OrderIntent
from botkit.pipeline import RiskLimits, StrategyPolicy, build_plan
from botkit.pipeline.band import BandCheck
from botkit.pipeline.batching import order_key
from botkit.pipeline.risk import Candidate, GuardTrip, RiskBook, Valuation
from botkit.pipeline.validate import band_reason, on_step, step_decimals, validate_intent
from botkit.snapshot import Snapshot
from tests.pipeline.helpers import LIMIT_SETS, instrument

D = Decimal

# two symbols whose bands differ in every part: a band mixed up between them shows
_MARKETS: dict[str, tuple[Instrument, Decimal, LimitPrice | None]] = {
    "AAA": (
        instrument(symbol="AAA", tSz=D("0.1"), lotSz=D("1"), ordPxRange=D("0.05")),
        D("100"),
        None,
    ),
    "BBB": (
        instrument(symbol="BBB", tSz=D("0.5"), lotSz=D("0.01"), minSz=D("0.01"),
                   ordPxRange=D("0.02"), maxPx=D("10000")),
        D("2000"),
        LimitPrice(symbol="BBB", buyLmt=D("2030"), sellLmt=D("1975")),
    ),
}  # fmt: skip


def _snapshot() -> Snapshot:
    return Snapshot(
        now_ms=1_700_000_000_000,
        balance=Balance(eq=D("10000")),
        instruments={s: m[0] for s, m in _MARKETS.items()},
        tickers={s: Ticker(s=s, mPx=m[1]) for s, m in _MARKETS.items()},
        positions=[],
        open_orders=[],
        limit_prices={s: m[2] for s, m in _MARKETS.items() if m[2] is not None},
        position_mode=PositionMode.ONE_WAY,
    )


@st.composite
def _intent(draw: st.DrawFn, n: int) -> OrderIntent:
    symbol = draw(st.sampled_from(sorted(_MARKETS)))
    mark = _MARKETS[symbol][1]
    # prices from far outside the band to deep inside it, on and off the tick
    share = draw(st.integers(min_value=-80, max_value=80))
    px = (mark * (1 + D(share) / 1000)).quantize(D("0.01"))
    return OrderIntent(
        strategy=draw(st.sampled_from(["s1", "s2"])),
        rule="r",
        slot=1,
        leg=n,
        cl_ord_id=f"id{n}",
        symbol=symbol,
        side=draw(st.sampled_from(list(OrderSide))),
        type=draw(st.sampled_from([OrderType.LIMIT, OrderType.LIMIT_MAKER])),
        sz=draw(st.sampled_from([D("1"), D("2.50"), D("0.004"), D("3")])),
        px=px,
    )


@settings(max_examples=60, deadline=None)
@given(
    intents=st.integers(min_value=1, max_value=12).flatmap(
        lambda k: st.tuples(*[_intent(n) for n in range(k)])
    ),
    margin=st.sampled_from([D(0), D("0.001"), D("0.01")]),
)
def test_a_plan_checks_each_order_as_validating_it_alone_does(
    intents: tuple[OrderIntent, ...], margin: Decimal
) -> None:
    """Fails if the band a plan keeps per symbol is not that symbol's (another symbol's, or
    without the plan's margin): the orders near a band's edge then change side."""
    plan = build_plan(list(intents), _snapshot(), band_margin=margin)
    alone = {}
    for i in intents:
        inst, mark, band = _MARKETS[i.symbol]
        alone[i.cl_ord_id] = validate_intent(
            i, inst, mark=mark, limit_price=band, band_margin=margin
        )
    assert len(plan.accepted) + len(plan.refused) == len(intents)
    for order in plan.accepted:
        checked = alone[order.cl_ord_id]
        assert checked.ok
        assert checked.request == order.request
        assert checked.request is not None
        assert checked.request.to_wire() == order.request.to_wire()
        assert checked.notes == order.notes
    for refusal in plan.refused:
        checked = alone[refusal.cl_ord_id]
        assert not checked.ok
        assert checked.reasons == refusal.reasons
        assert (checked.notes, checked.px, checked.sz) == (refusal.notes, refusal.px, refusal.sz)


def test_the_bps_of_the_margin_are_named_only_in_a_band_refusal() -> None:
    inst, mark, band = _MARKETS["BBB"]
    args = {"mark": mark, "limit_price": band, "band_margin": D("0.001")}
    below = validate_intent(_intent_at("BBB", D("1900")), inst, **args)  # type: ignore[arg-type]
    assert [r.code for r in below.reasons] == ["px_below_band"]
    assert "10 bps inside the band" in below.reasons[0].message
    assert validate_intent(_intent_at("BBB", D("2000")), inst, **args).ok  # type: ignore[arg-type]


def _intent_at(symbol: str, px: Decimal, strategy: str = "s1") -> OrderIntent:
    return OrderIntent(
        strategy=strategy, rule="r", slot=1, leg=0, cl_ord_id=f"{strategy}-0", symbol=symbol,
        side=OrderSide.BUY, type=OrderType.LIMIT, sz=D(1), px=px,
    )  # fmt: skip


def test_each_step_keeps_its_own_quantum_whatever_came_before() -> None:
    """Fails if a step's kept quantum is another step's (kept under the wrong key)."""
    steps = ["0.10", "0.1", "1E-1", "0.01", "1", "10", "1E+1", "0.0025", "0.5", "0.10"]
    for text in steps:
        step = D(text)
        value = step * 7
        plain = value.quantize(D(1).scaleb(-step_decimals(step)))
        got = on_step(value, step)
        assert (str(got), got.as_tuple()) == (str(plain), plain.as_tuple()), text


def test_the_risk_book_reads_each_strategy_s_own_limits() -> None:
    """Fails if the limits read once per strategy are shared between strategies."""
    tight = StrategyPolicy(limits=RiskLimits(max_notional_per_order=D("50")))
    loose = StrategyPolicy(limits=RiskLimits(max_notional_per_order=D("500")))
    intents = [_intent_at("AAA", D("100"), strategy=s) for s in ("s1", "s2", "s3")]
    ctval = {"AAA": instrument(symbol="AAA", ctVal=D("1"))}
    snap = _snapshot()
    snap = Snapshot(
        now_ms=snap.now_ms, balance=snap.balance, instruments=ctval, tickers=snap.tickers,
        positions=[], open_orders=[], limit_prices={}, position_mode=PositionMode.ONE_WAY,
    )  # fmt: skip
    for first in (tight, loose):
        other = loose if first is tight else tight
        plan = build_plan(intents, snap, policies={"s1": first, "s2": other})
        refused = {r.cl_ord_id for r in plan.refused}
        assert refused == {"s1-0" if first is tight else "s2-0"}
        assert {o.cl_ord_id for o in plan.accepted} == {"s1-0", "s2-0", "s3-0"} - refused


class _Bands:
    """Answers each symbol's band of :data:`_MARKETS` (AAA has none: its mark is read)."""

    def limit_price(self, symbol: str) -> LimitPrice:
        band = _MARKETS[symbol][2]
        if band is None:
            raise ExchangeError("no band")
        return band

    def tickers(self, symbol: str | None = None) -> list[Ticker]:
        return [Ticker(s=s, mPx=m[1]) for s, m in _MARKETS.items() if s == symbol]


@settings(max_examples=60, deadline=None)
@given(
    intents=st.integers(min_value=1, max_value=10).flatmap(
        lambda k: st.tuples(*[_intent(n) for n in range(k)])
    ),
    margin=st.sampled_from([D(0), D("0.001"), D("0.01")]),
)
def test_the_recheck_refuses_each_order_as_its_own_band_reason_does(
    intents: tuple[OrderIntent, ...], margin: Decimal
) -> None:
    """Fails if the bounds the re-check computes once per symbol are another symbol's or lack
    the margin."""
    requests = [i.to_request(px=i.px, sz=i.sz) for i in intents]
    check = BandCheck(_Bands(), {s: m[0] for s, m in _MARKETS.items()}, margin=margin)
    keep, refused = check(requests)
    expected: dict[str, str] = {}
    for r in requests:
        inst, mark, band = _MARKETS[r.symbol]
        assert r.px is not None
        reason = (
            band_reason(r.px, inst, mark=mark, limit_price=None, margin=margin)
            if band is None
            else band_reason(r.px, inst, mark=None, limit_price=band, margin=margin)
        )
        if reason is not None:
            expected[r.clOrdId or ""] = (
                f"{reason} [re-checked against the band read just before sending]"
            )
    assert {o.cl_ord_id: o.reasons[0] for o in refused} == expected
    assert [r.clOrdId for r in keep] == [r.clOrdId for r in requests if r.clOrdId not in expected]


@settings(max_examples=60, deadline=None)
@given(
    intents=st.integers(min_value=1, max_value=12).flatmap(
        lambda k: st.tuples(*[_intent(n) for n in range(k)])
    ),
    cap=st.sampled_from([None, D("150"), D("2500"), D("4000")]),
)
def test_each_planned_order_s_value_is_its_valuation_s_and_the_guards_trip_as_alone(
    intents: tuple[OrderIntent, ...], cap: Decimal | None
) -> None:
    """The plan keeps the value the risk book judged each order at: it is the order's own
    ``Valuation.notional``, and the book trips as one fed with ``admit`` alone does. Fails if
    the kept value is another order's, or the size or price before validation."""
    limits = RiskLimits(max_notional_per_order=cap, max_notional_per_cycle=cap and cap * 3)
    snap = _snapshot()
    plan = build_plan(list(intents), snap, limits=limits)
    book = RiskBook(global_limits=limits, policies={})
    alone: dict[str, tuple[tuple[GuardTrip, ...], Decimal | None]] = {}
    for i in sorted(intents, key=order_key):
        inst, mark, band = _MARKETS[i.symbol]
        checked = validate_intent(i, inst, mark=mark, limit_price=band)
        if not checked.ok:
            continue
        candidate = Candidate.of(i, sz=checked.sz, px=checked.px)
        valuation = Valuation(mark, inst.ctVal)
        alone[i.cl_ord_id] = (book.admit(candidate, valuation), valuation.notional(candidate))
    for order in plan.accepted:
        trips, value = alone[order.cl_ord_id]
        assert trips == ()
        assert order.notional == value
        assert str(order.notional) == str(value)
    tripped = [t for trips, _ in alone.values() for t in trips]
    assert list(plan.trips) == tripped


# a few amounts, each written several ways (equal values, different digits): a plan's check of
# an order must come out as that order's own, whichever of them came first
_PRICES = {
    "AAA": [D("100"), D("100.0"), D("1.00E+2"), D("99.95"), D("99.950"), D("100.04")],
    "BBB": [D("2000"), D("2000.00"), D("2001.3"), D("2001.30"), D("1996.7"), D("5000")],
    "CCC": [D("100"), D("100.0"), D("99.95")],
}
# a third market that takes reduce-only orders only
_CLOSE_ONLY = {
    **_MARKETS,
    "CCC": (
        instrument(symbol="CCC", status=InstrumentStatus.CANCEL_CLOSE_ONLY),
        D("100"),
        None,
    ),
}
_SIZES = [D("1"), D("1.0"), D("1E+0"), D("2.5"), D("2.50"), D("2.5E+0")]


@st.composite
def _repeated(draw: st.DrawFn, n: int) -> OrderIntent:
    symbol = draw(st.sampled_from(sorted(_CLOSE_ONLY)))
    order_type = draw(st.sampled_from([OrderType.LIMIT, OrderType.LIMIT, OrderType.MARKET]))
    rare = st.sampled_from([False, False, False, True])
    px = draw(st.sampled_from([*_PRICES[symbol], None]))
    return OrderIntent(
        strategy=draw(st.sampled_from(["s1", "s2"])),
        rule="r",
        slot=1,
        leg=n,
        cl_ord_id="bad id!" if draw(rare) else f"id{n}",
        symbol=symbol,
        side=draw(st.sampled_from([OrderSide.BUY, OrderSide.BUY, OrderSide.SELL])),
        type=order_type,
        sz=draw(st.sampled_from(_SIZES)),
        px=None if order_type is OrderType.MARKET else px,  # a LIMIT without one: refused
        pos_side=PosSide.LONG if draw(rare) else PosSide.BOTH,
        reduce_only=draw(rare),
        time_in_force=draw(st.sampled_from(list(TimeInForce))),
    )


@settings(max_examples=200, deadline=None)
@given(
    intents=st.integers(min_value=1, max_value=40).flatmap(
        lambda k: st.tuples(*[_repeated(n) for n in range(k)])
    ),
    margin=st.sampled_from([D(0), D("0.001")]),
    refuse=st.sampled_from([(), ("s1",), ("s2",), ("s1", "s2")]),
    mode=st.sampled_from([PositionMode.ONE_WAY, PositionMode.ONE_WAY, PositionMode.HEDGE]),
)
def test_an_order_checked_once_per_plan_for_its_values_comes_out_as_its_own_check(
    intents: tuple[OrderIntent, ...],
    margin: Decimal,
    refuse: tuple[str, ...],
    mode: PositionMode,
) -> None:
    """A plan checks each distinct order once (``CheckMemo``); every other order of the same
    values takes that result with its own amounts in the notes, its own id and its own request.
    Compared as printed (a ``Decimal`` printed keeps its digits: ``100.0`` is not ``100``) with
    every order validated alone. Fails if the memo's key leaves out the side, the type, the
    position side, reduce-only or the off-tick handling, or if a note names the first order's
    amounts instead of this one's. (Leaving out the id's own check is not caught: the
    request's model refuses the same ids, and the order is then checked in full.)"""
    snap = Snapshot(
        now_ms=1_700_000_000_000, balance=Balance(eq=D("10000")),
        instruments={s: m[0] for s, m in _CLOSE_ONLY.items()},
        tickers={s: Ticker(s=s, mPx=m[1]) for s, m in _CLOSE_ONLY.items()},
        positions=[], open_orders=[],
        limit_prices={s: m[2] for s, m in _CLOSE_ONLY.items() if m[2] is not None},
        position_mode=mode,
    )  # fmt: skip
    policies = {s: StrategyPolicy(off_tick=OffTick.REFUSE) for s in refuse}
    plan = build_plan(list(intents), snap, policies=policies, band_margin=margin)
    alone = {}
    for i in intents:
        inst, mark, band = _CLOSE_ONLY[i.symbol]
        alone[i.cl_ord_id, i.leg] = validate_intent(
            i, inst, mark=mark, limit_price=band, band_margin=margin, position_mode=mode,
            off_tick=OffTick.REFUSE if i.strategy in refuse else OffTick.ROUND,
        )  # fmt: skip
    assert len(plan.accepted) + len(plan.refused) == len(intents)
    for order in plan.accepted:
        checked = alone[order.cl_ord_id, order.intent.leg]
        assert checked.ok
        assert checked.request is not None
        assert repr(checked.request) == repr(order.request)
        assert checked.request.to_wire() == order.request.to_wire()
        assert repr(checked.notes) == repr(order.notes)
    for refusal in plan.refused:
        if refusal.reasons[0].code == "duplicate_cl_ord_id":
            continue
        checked = alone[refusal.cl_ord_id, refusal.intent.leg]
        if refusal.reasons[0].code == "no_position_to_close":  # passed; nothing to close
            assert checked.ok
            assert repr(checked.notes) == repr(refusal.notes)
            continue
        assert not checked.ok
        assert repr((checked.reasons, checked.notes, checked.px, checked.sz)) == repr(
            (refusal.reasons, refusal.notes, refusal.px, refusal.sz)
        )


def test_an_order_of_plain_values_is_not_taken_for_one_of_members_and_decimals() -> None:
    """A side written as a plain string equals its member (``StrEnum``) and an ``int`` price
    equals its ``Decimal``, but they are checked otherwise (a string ``BUY`` is not rounded
    down; an ``int`` price has no ``is_finite``): each is checked in full. Fails if the memo
    keys the side by value or takes an amount of another type."""
    first = _intent_at("AAA", D("99.95"))
    as_text = replace(first, cl_ord_id="s1-1", leg=1, side="BUY")  # type: ignore[arg-type]
    as_int = replace(first, cl_ord_id="s2-0", strategy="s2", px=100)  # type: ignore[arg-type]
    on_tick = replace(first, px=D("100"))
    inst, mark, band = _MARKETS["AAA"]
    text_alone = validate_intent(as_text, inst, mark=mark, limit_price=band)
    plan = build_plan([first, as_text], _snapshot())
    assert [repr(o.request) for o in plan.accepted] == [
        repr(validate_intent(first, inst, mark=mark, limit_price=band).request),
        repr(text_alone.request),
    ]
    assert text_alone.request is not None
    assert text_alone.request.px == D("100")  # rounded up
    plan = build_plan([on_tick, as_int], _snapshot())
    assert [o.cl_ord_id for o in plan.accepted] == ["s1-0"]
    assert [r.reasons[0].code for r in plan.refused] == ["planning_failed"]


def test_an_off_tick_price_is_refused_for_a_strategy_that_refuses_it_after_another_rounded_it() -> (
    None
):
    """Fails if the memo's key leaves out the off-tick handling: the second strategy's price,
    the same as the first's, would be taken as rounded."""
    rounded, refused = (_intent_at("AAA", D("99.95"), strategy=s) for s in ("s1", "s2"))
    plan = build_plan(
        [rounded, refused], _snapshot(), policies={"s2": StrategyPolicy(off_tick=OffTick.REFUSE)}
    )
    assert [o.cl_ord_id for o in plan.accepted] == ["s1-0"]
    assert [r.reasons[0].code for r in plan.refused] == ["px_off_tick"]


class _AlwaysJudged(RiskBook):
    """The book judging every order through every guard (its order counts asked even when no
    count limit applies: none trips then), never taking the way round for an order no guard
    applies to."""

    def _limits_of(self, strategy: str) -> tuple[RiskLimits, RiskLimits, bool, bool]:
        own, per_order, wants_notional, _counts = super()._limits_of(strategy)
        return own, per_order, wants_notional, True


@st.composite
def _candidate(draw: st.DrawFn, n: int) -> Candidate:
    order_type = draw(st.sampled_from([OrderType.LIMIT, OrderType.MARKET]))
    return Candidate(
        strategy=draw(st.sampled_from(["s1", "s2", "s3"])),
        cl_ord_id=f"id{n}",
        symbol=draw(st.sampled_from(["AAA", "BBB"])),
        side=draw(st.sampled_from(list(OrderSide))),
        pos_side=draw(st.sampled_from([PosSide.BOTH, PosSide.LONG, PosSide.SHORT])),
        order_type=order_type,
        reduce_only=draw(st.booleans()),
        sz=draw(st.sampled_from([D("1"), D("2.5"), D("4")])),
        px=None if order_type is OrderType.MARKET else draw(st.sampled_from([D("90"), D("110")])),
    )


@settings(max_examples=150, deadline=None)
@given(
    orders=st.integers(min_value=1, max_value=25).flatmap(
        lambda k: st.tuples(*[_candidate(n) for n in range(k)])
    ),
    own=st.tuples(*[st.sampled_from(LIMIT_SETS) for _ in range(3)]),
    global_limits=st.sampled_from([RiskLimits(), RiskLimits(), *LIMIT_SETS[2:]]),
    mark=st.sampled_from([D("100"), None]),
)
def test_an_order_no_guard_applies_to_is_admitted_and_counted_as_the_guards_would(
    orders: tuple[Candidate, ...],
    own: tuple[RiskLimits, ...],
    global_limits: RiskLimits,
    mark: Decimal | None,
) -> None:
    """The book admits an order no guard applies to (no count or notional limit, no position
    limit for an order that is not reduce-only) without asking the guards, and records what it
    consumes all the same: another strategy's position limit sees its resting size. Fails if
    the way round skips a guard that applies, or leaves out what it records."""
    policies = {f"s{k + 1}": StrategyPolicy(limits=limits) for k, limits in enumerate(own)}
    positions = [
        Position(symbol="AAA", qty=D("2"), posSide=PosSide.BOTH, side=OrderSide.BUY),
    ]
    book = RiskBook(global_limits=global_limits, policies=policies, positions=positions)
    judged = _AlwaysJudged(global_limits=global_limits, policies=policies, positions=positions)
    valuation = Valuation(mark, D("1"))
    for order in orders:
        assert repr(book.admit_valued(order, valuation)) == repr(
            judged.admit_valued(order, valuation)
        )


def test_an_order_no_guard_applies_to_still_rests_for_another_strategy_s_position_limit() -> None:
    """s1 has no limit: its order is admitted without the guards, and what it adds to the
    symbol's resting BUYs still counts against s2's position limit (2 held + 2 resting + 2 >
    5). Fails if the way round does not record the resting size."""
    book = RiskBook(
        global_limits=RiskLimits(),
        policies={"s2": StrategyPolicy(limits=RiskLimits(max_position=D("5")))},
        positions=[Position(symbol="AAA", qty=D("2"), posSide=PosSide.BOTH, side=OrderSide.BUY)],
    )
    valuation = Valuation(D("100"), D("1"))

    def buy(strategy: str) -> Candidate:
        return Candidate(
            strategy, f"{strategy}-0", "AAA", OrderSide.BUY, PosSide.BOTH, OrderType.LIMIT,
            False, D("2"), D("100"),
        )  # fmt: skip

    assert book.admit(buy("s1"), valuation) == ()
    (trip,) = book.admit(buy("s2"), valuation)
    assert (trip.guard, trip.value) == ("max_position", D("6"))


@pytest.mark.parametrize("bad", ["", "x" * 33, "bad id!", "ü-1", None])
def test_an_order_of_known_values_with_a_bad_id_is_refused_as_alone(bad: str | None) -> None:
    """The second order of the same values takes the memo's path, which leaves the id's
    check to the request's build: a bad id (none at all included) is still refused with the
    reason validating it alone gives (fails if the memo's path skips the check of an id that
    is not a text: a request without an id would go out)."""
    symbol = sorted(_MARKETS)[0]
    inst, mark, band = _MARKETS[symbol]
    first = OrderIntent(
        strategy="s1", rule="r", slot=1, leg=0, cl_ord_id="s1-0", symbol=symbol,
        side=OrderSide.BUY, type=OrderType.LIMIT, sz=D("1"), px=mark.quantize(D("0.01")),
    )  # fmt: skip
    second = replace(first, leg=1, cl_ord_id=bad)  # type: ignore[arg-type]
    plan = build_plan([first, second], _snapshot())
    assert [o.cl_ord_id for o in plan.accepted] == ["s1-0"]
    (refusal,) = plan.refused
    alone = validate_intent(second, inst, mark=mark, limit_price=band)
    assert refusal.reasons == alone.reasons
    assert alone.reasons[0].code == "cl_ord_id_invalid"
