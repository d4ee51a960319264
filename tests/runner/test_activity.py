"""The activity cache gives what a full journal read would, at the cost of the increment."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderSide, OrderType
from botkit.intents import Activity, OrderIntent, RuleActivity
from botkit.journal import Evaluated, Journal, NewOrder, OrderOutcome, Outcome
from botkit.runner.activity import ActivityCache

HOUR = 3_600_000


def _fire(journal: Journal, n: int) -> None:
    cycle = journal.begin_cycle()
    journal.record_evaluations(cycle, strategy="s", version="v", rules=[Evaluated("r", True)])
    intent = OrderIntent(
        strategy="s",
        rule="r",
        slot=n,
        leg=0,
        cl_ord_id=f"id-{n}",
        symbol="BTC_USDT_PERP",
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(100),
    )
    journal.add_orders(cycle, [NewOrder(intent=intent, px=None, sz=None)], dry=False)
    journal.settle([OrderOutcome(f"id-{n}", Outcome.ACCEPTED, ord_id=str(n))])
    journal.end_cycle(cycle)


def test_incremental_reads_equal_a_full_read_and_drop_what_left_the_window(
    tmp_path: Path,
) -> None:
    now = [10 * HOUR]
    journal = Journal(tmp_path / "j.sqlite", clock=lambda: now[0], synchronous="NORMAL")
    cache = ActivityCache(journal)
    for n in range(6):
        _fire(journal, n)
        got = cache.get("s", 3 * HOUR)
        assert got == journal.activity("s", now[0] - 3 * HOUR)
        now[0] += HOUR
    assert len(cache.get("s", 3 * HOUR)["r"].fire_times_ms) == 3
    journal.close()


def _quiet(journal: Journal) -> None:
    cycle = journal.begin_cycle()
    journal.record_evaluations(cycle, strategy="s", version="v", rules=[Evaluated("r", False)])
    journal.end_cycle(cycle)


def test_quiet_cycles_between_fires_give_what_a_full_read_would(tmp_path: Path) -> None:
    minute = 60_000
    now = [10 * HOUR]
    journal = Journal(tmp_path / "j.sqlite", clock=lambda: now[0], synchronous="OFF")
    cache = ActivityCache(journal)
    for step in range(200):
        if step % 37 == 0:
            _fire(journal, step)
        else:
            _quiet(journal)
        got = cache.get("s", HOUR)
        assert got == journal.activity("s", now[0] - HOUR), step
        now[0] += 7 * minute  # fires leave the hour-long window between writes
    journal.close()


def test_a_fire_written_after_a_cached_read_is_seen(tmp_path: Path) -> None:
    now = [10 * HOUR]
    journal = Journal(tmp_path / "j.sqlite", clock=lambda: now[0], synchronous="OFF")
    cache = ActivityCache(journal)
    assert cache.get("s", HOUR) == {}
    assert cache.get("s", HOUR) == {}  # nothing written: the cached answer
    cycle = journal.begin_cycle()  # a fire without an order, the same millisecond
    journal.record_evaluations(cycle, strategy="s", version="v", rules=[Evaluated("r", True)])
    assert cache.get("s", HOUR)["r"].fire_times_ms == (now[0],)
    journal.close()


class CountingJournal(Journal):
    """Counts the activity reads (the query the cache is meant to run once per strategy)."""

    reads = 0

    def activity(self, strategy: str, since_ms: int, *, include_dry: bool = False) -> Activity:
        self.reads += 1
        return super().activity(strategy, since_ms, include_dry=include_dry)


def _order(
    journal: Journal, cycle: int, strategy: str, cid: str, *, dry: bool = False, rule: str = "r"
) -> None:
    intent = OrderIntent(
        strategy=strategy,
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
    journal.add_orders(cycle, [NewOrder(intent=intent, px=None, sz=None)], dry=dry)


def test_the_cache_follows_the_journals_writes_without_reading_it_again(tmp_path: Path) -> None:
    minute = 60_000
    now = [10 * HOUR]
    journal = CountingJournal(tmp_path / "j.sqlite", clock=lambda: now[0], synchronous="OFF")
    cache = ActivityCache(journal)
    for step in range(120):
        cycle = journal.begin_cycle()
        for strategy in ("s", "t"):
            fired = step % 3 == 0
            journal.record_evaluations(
                cycle, strategy=strategy, version="v", rules=[Evaluated("r", fired)]
            )
            if fired:
                cid = f"{strategy}-{step}"
                _order(journal, cycle, strategy, cid)
                outcome = (Outcome.ACCEPTED, Outcome.REJECTED, Outcome.FAILED)[step % 9 // 3]
                journal.settle([OrderOutcome(cid, outcome)])
        journal.end_cycle(cycle)
        for strategy in ("s", "t"):
            got = cache.get(strategy, HOUR)
            assert got == journal.activity(strategy, now[0] - HOUR), (step, strategy)
        now[0] += 7 * minute
    # the comparisons above read 240 times; the cache itself once per strategy
    assert journal.reads == 240 + 2
    journal.close()


def test_an_order_counts_as_its_fate_stood_when_the_cache_took_it_in(tmp_path: Path) -> None:
    now = [10 * HOUR]
    journal = Journal(tmp_path / "j.sqlite", clock=lambda: now[0], synchronous="OFF")
    cache = ActivityCache(journal)
    assert cache.get("s", HOUR) == {}
    cycle = journal.begin_cycle()
    _order(journal, cycle, "s", "rejected-at-once")
    journal.settle([OrderOutcome("rejected-at-once", Outcome.REJECTED, code=51000)])
    _order(journal, cycle, "s", "unknown-then-failed")
    _order(journal, cycle, "s", "dry-run", dry=True)
    assert cache.get("s", HOUR)["r"].orders == ((now[0], "unknown-then-failed"),)
    journal.settle([OrderOutcome("unknown-then-failed", Outcome.FAILED, error="not found")])
    now[0] += 1000
    # still counted (the conservative direction); a repaired order counts again
    assert cache.get("s", HOUR)["r"].orders == ((now[0] - 1000, "unknown-then-failed"),)
    assert journal.repair("rejected-at-once", "42", "seen at the exchange")
    assert [cid for _, cid in cache.get("s", HOUR)["r"].orders] == [
        "rejected-at-once",
        "unknown-then-failed",
    ]
    journal.close()


def test_a_dry_run_cache_counts_dry_orders(tmp_path: Path) -> None:
    now = [10 * HOUR]
    journal = Journal(tmp_path / "j.sqlite", clock=lambda: now[0], synchronous="OFF")
    cache = ActivityCache(journal, include_dry=True)
    assert cache.get("s", HOUR) == {}
    cycle = journal.begin_cycle()
    journal.record_evaluations(
        cycle, strategy="s", version="v", rules=[Evaluated("r", True)], dry=True
    )
    _order(journal, cycle, "s", "dry-run", dry=True)
    got = cache.get("s", HOUR)
    assert got == journal.activity("s", now[0] - HOUR, include_dry=True)
    assert got["r"] == RuleActivity((now[0],), ((now[0], "dry-run"),))
    journal.close()


def _unique(activity: Activity) -> Activity:
    """Two fires of a rule in one millisecond count once (the cache's merge; its first read,
    the journal's rows as they are, may hold both)."""
    return {
        rule: RuleActivity(tuple(dict.fromkeys(a.fire_times_ms)), tuple(sorted(a.orders)))
        for rule, a in activity.items()
    }


_step = st.tuples(
    st.integers(min_value=1, max_value=40 * 60_000),  # time to the next cycle
    st.lists(st.tuples(st.sampled_from("st"), st.sampled_from("rq"), st.booleans()), max_size=4),
    st.sampled_from([Outcome.ACCEPTED, Outcome.REJECTED, None]),  # the orders' fate this cycle
)


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(_step, max_size=40),
    window_h=st.sampled_from([1, 3]),
    group_rows=st.sampled_from([0, 7]),
)
def test_the_cache_equals_a_full_read_after_any_sequence_of_writes(
    steps: list[tuple[int, list[tuple[str, str, bool]], Outcome | None]],
    window_h: int,
    group_rows: int,
) -> None:
    now = [10 * HOUR]
    journal = Journal(":memory:", clock=lambda: now[0], synchronous="OFF", group_rows=group_rows)
    cache = ActivityCache(journal)
    serial = 0
    for pause, fires, fate in steps:
        cycle = journal.begin_cycle()
        for strategy, rule, with_order in fires:
            journal.record_evaluations(
                cycle, strategy=strategy, version="v", rules=[Evaluated(rule, True)]
            )
            if with_order:
                serial += 1
                cid = f"{strategy}{rule}-{serial}"
                _order(journal, cycle, strategy, cid, rule=rule)
                if fate is not None:
                    journal.settle([OrderOutcome(cid, fate)])
        journal.end_cycle(cycle)
        for strategy in "st":
            full = journal.activity(strategy, now[0] - window_h * HOUR)
            assert _unique(cache.get(strategy, window_h * HOUR)) == _unique(full)
        now[0] += pause
    journal.close()
