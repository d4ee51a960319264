"""The activity cache gives what a full journal read would, at the cost of the increment."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from botkit.exchange.models import OrderSide, OrderType
from botkit.intents import OrderIntent
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
