"""The "never placed" re-checker reads the journal only while there is a verdict to watch: once
a read finds none it rests (a backtest's quiet cycles no longer query the journal) until an
order is settled ``failed`` again."""

from __future__ import annotations

from typing import Any

from botkit.ports.journal import OrderFilter
from botkit.runner.orders.reconcile import Rechecker


class _Journal:
    def __init__(self) -> None:
        self.reads = 0

    def orders(self, _filter: OrderFilter) -> list[Any]:
        self.reads += 1
        return []


def test_the_rechecker_rests_after_a_read_with_nothing_to_watch_until_woken() -> None:
    journal = _Journal()
    checker = Rechecker(grace_ms=1)
    for now in range(0, 100, 10):
        if checker.due(now):
            checker.run(journal, port=None, now_ms=now)  # type: ignore[arg-type]
    assert journal.reads == 1
    checker.wake()
    assert checker.due(100)
    checker.run(journal, port=None, now_ms=100)  # type: ignore[arg-type]
    assert journal.reads == 2
    assert not checker.due(200)
