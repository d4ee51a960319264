"""The activity cache's append-only timelines (issue 20): the same answers as the plain journal
reading and the plain tuples, at the cost of a cycle's news rather than of the whole window."""

from __future__ import annotations

import pickle
import tracemalloc
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderSide, OrderType
from botkit.intents import Activity, OrderIntent, RuleActivity, Timeline
from botkit.journal import Evaluated, Journal, NewOrder, OrderOutcome, Outcome
from botkit.runner.activity import ActivityCache

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR

# --- the timeline against a plain tuple ---------------------------------------------------------

_op = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, 400)),
    st.tuples(st.just("extend"), st.lists(st.integers(0, 30), max_size=6)),
    st.tuples(st.just("branch"), st.integers(0, 50)),  # go on from an older view
)


@settings(max_examples=300, deadline=None)
@given(start=st.lists(st.integers(0, 100), max_size=8), ops=st.lists(_op, max_size=60))
def test_a_timeline_equals_its_tuple_through_any_cuts_extensions_and_branches(
    start: list[int], ops: list[tuple[str, object]]
) -> None:
    """Every view made stays equal to the tuple a plain model gives it, however later views
    grow or cut the list it shares (mutation: ``extended`` appending to a list another view
    already grew fails this), and the counts equal the counts over the tuple."""
    start.sort()
    made: list[tuple[Timeline[int], tuple[int, ...]]] = [(Timeline.of(start), tuple(start))]
    for kind, arg in ops:
        view, model = made[-1]
        if kind == "cut":
            assert isinstance(arg, int)
            view, model = view.cut(arg), tuple(t for t in model if t >= arg)
        elif kind == "extend":
            assert isinstance(arg, list)
            last = model[-1] if model else 0
            news = [last + 1 + sum(arg[: k + 1]) for k in range(len(arg))]  # newer, rising
            view, model = view.extended(news), model + tuple(news)
        else:
            assert isinstance(arg, int)
            view, model = made[arg % len(made)]
        made.append((view, model))
    for view, model in made:  # none changed since it was made
        assert view == model
        assert model == view
        assert hash(view) == hash(model)
        assert list(view) == list(model)
        assert list(reversed(view)) == list(reversed(model))
        assert len(view) == len(model)
        assert (view[-1] if model else None) == (model[-1] if model else None)
        assert pickle.loads(pickle.dumps(view)) == model  # noqa: S301 - our own bytes
        for since in (-1, 0, 5, 50, 200, 10**6):
            assert view.count_from(since) == sum(1 for t in model if t >= since)
            for until in (0, 7, 60, 300):
                inside = [t for t in model if since < t <= until]
                assert view.between(since, until) == inside
                assert view.count_between(since, until) == len(inside)


def test_a_timeline_cut_far_in_starts_a_list_of_its_own() -> None:
    """The storage stays within about twice the window: a cut past half of a long list copies
    what is left into a list of its own (the older views keep theirs)."""
    old = Timeline(list(range(1000)))
    cut = old.cut(700)
    assert cut == tuple(range(700, 1000))
    assert old == tuple(range(1000))
    assert cut._items is not old._items
    assert len(cut._items) == 300
    near = old.cut(100)  # not past half: shares the list
    assert near._items is old._items


@settings(max_examples=200, deadline=None)
@given(
    fires=st.lists(st.integers(0, 500), max_size=12),
    orders=st.lists(st.tuples(st.integers(0, 500), st.sampled_from("abc")), max_size=12),
    since=st.integers(-1, 510),
    now=st.integers(-1, 510),
)
def test_the_rule_counts_on_a_timeline_equal_the_counts_on_tuples(
    fires: list[int], orders: list[tuple[int, str]], since: int, now: int
) -> None:
    fires.sort()
    orders.sort()
    plain = RuleActivity(tuple(fires), tuple(orders))
    grown = RuleActivity(Timeline.of(fires), Timeline.of(orders))
    assert grown == plain
    assert grown.fires_since(since) == plain.fires_since(since)
    assert grown.orders_since(since) == plain.orders_since(since)
    assert grown.fires_within(since, now) == plain.fires_within(since, now)
    assert grown.count_fires_within(since, now) == plain.count_fires_within(since, now)
    assert grown.last_fire_ms == plain.last_fire_ms


# --- the cache over a long-running service -----------------------------------------------------


def _intent(rule: str, cid: str) -> OrderIntent:
    return OrderIntent(
        strategy="s",
        rule=rule,
        slot=0,
        leg=0,
        cl_ord_id=cid,
        symbol="BTC_USDT_PERP",
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(100),
    )


def _cycle(journal: Journal, n: int, rules: dict[str, int]) -> None:
    """One cycle: each rule fires (or not) and places its orders; a few are rejected."""
    cycle = journal.begin_cycle()
    journal.record_evaluations(
        cycle, strategy="s", version="v", rules=[Evaluated(r, k > 0) for r, k in rules.items()]
    )
    rows = [
        NewOrder(intent=_intent(rule, f"{rule}-{n}-{k}"), px=None, sz=None)
        for rule, count in rules.items()
        for k in range(count)
    ]
    if rows:
        journal.add_orders(cycle, rows, dry=False)
        journal.settle(
            [
                OrderOutcome(r.intent.cl_ord_id, Outcome.REJECTED if i % 7 == 3 else _ACCEPTED)
                for i, r in enumerate(rows)
            ]
        )
    journal.end_cycle(cycle)


_ACCEPTED = Outcome.ACCEPTED


def _unique(activity: Activity) -> Activity:
    """Two fires of a rule in one millisecond count once (as ``test_activity``)."""
    return {
        rule: RuleActivity(tuple(dict.fromkeys(a.fire_times_ms)), tuple(sorted(a.orders)))
        for rule, a in activity.items()
    }


@settings(max_examples=8, deadline=None)
@given(
    pattern=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(1, 3)), min_size=1, max_size=9
    ),
    window_min=st.sampled_from([20, 45, 300]),
)
def test_the_cache_equals_the_journal_over_hundreds_of_cycles(
    pattern: list[tuple[int, int, int]], window_min: int
) -> None:
    """Hundreds of one-minute cycles (the windows fill, their lists are cut and start anew):
    at each, the cache's activity and every count the rules ask equal the journal's read."""
    now = [10 * DAY]
    journal = Journal(":memory:", clock=lambda: now[0], synchronous="OFF")
    cache = ActivityCache(journal)
    window = window_min * MINUTE
    for n in range(420):
        a, b, pause = pattern[n % len(pattern)]
        _cycle(journal, n, {"r": a, "q": b})
        got = cache.get("s", window)
        full = journal.activity("s", now[0] - window)
        assert _unique(got) == _unique(full), n
        for rule, plain in _unique(full).items():
            mine = got[rule]
            for back in (MINUTE, 7 * MINUTE, window):
                since = now[0] - back
                assert mine.fires_since(since) == plain.fires_since(since)
                assert mine.orders_since(since) == plain.orders_since(since)
                assert mine.fires_within(since, now[0]) == plain.fires_within(since, now[0])
        now[0] += pause * MINUTE
    journal.close()


def _bytes_per_get(cycles: int) -> int:
    """What the cache's ``get`` allocates in all over 50 cycles (each firing a rule and placing
    5 orders) after ``cycles`` such cycles filled a day's window."""
    now = [10 * DAY]
    journal = Journal(":memory:", clock=lambda: now[0], synchronous="OFF")
    cache = ActivityCache(journal)
    total = 0
    tracemalloc.start()
    try:
        for n in range(cycles + 50):
            _cycle(journal, n, {"r": 5})
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            cache.get("s", DAY)
            if n >= cycles:
                total += tracemalloc.get_traced_memory()[1] - before
            now[0] += MINUTE
    finally:
        tracemalloc.stop()
        journal.close()
    return total


def test_a_cycles_get_costs_its_news_not_the_window() -> None:
    """After 1,200 cycles (a window of 1,200 fires and ~5,000 orders) a cycle's ``get``
    allocates about what it does after 60: the news are appended, the window is not copied.
    (Tuples copied both lists every cycle: ~60 kB a get after 1,200 cycles, ~3 kB after 60.)"""
    early = _bytes_per_get(60)
    late = _bytes_per_get(1_200)
    assert late < 2 * early + 50 * 1_024, (early, late)
