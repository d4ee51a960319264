"""Found by the soak: an order whose lookup keeps failing (the exchange cannot answer about it)
got a "lookup failed" event at every cycle's reconcile — an event a minute, forever, which
pruning must keep (it never drops an unsettled order's events): the journal grew without bound.
Now a repeated failure is noted once (again when its text changes, and after a restart)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from botkit.errors import RequestContext, ServerUnavailable
from botkit.journal import Journal, NewOrder
from botkit.runner.orders import Executor
from tests.pipeline.helpers import intent


class _Unanswerable:
    """An exchange that fails every lookup."""

    def __init__(self) -> None:
        self.lookups = 0

    def open_orders(self, *_args: Any, **_kwargs: Any) -> list[Any]:
        self.lookups += 1
        raise ServerUnavailable(
            "exchange unavailable (HTTP 503)",
            context=RequestContext("GET", "/v3/trade/order/opens"),
        )


def test_a_lookup_that_keeps_failing_is_journaled_once_not_every_cycle(tmp_path: Path) -> None:
    now = [1_700_000_000_000]
    journal = Journal(tmp_path / "j.sqlite", clock=lambda: now[0])
    order = intent(0, cl_ord_id="bk-stuck-0")
    journal.add_orders(None, [NewOrder(order, order.px, order.sz)], dry=False)
    journal.mark_sent([order.cl_ord_id])
    port = _Unanswerable()
    executor = Executor(port, journal, sleep=lambda _s: None, reconcile_grace_ms=0)  # type: ignore[arg-type]
    before = len(journal.events_for(order.cl_ord_id))
    for _ in range(50):  # fifty cycles
        now[0] += 60_000
        report = executor.reconcile(wait=False)
        assert report.pending == (order.cl_ord_id,)
    assert port.lookups >= 50  # still looked up every cycle ...
    assert len(journal.events_for(order.cl_ord_id)) == before + 1  # ... but noted once
    restarted = Executor(port, journal, sleep=lambda _s: None, reconcile_grace_ms=0)  # type: ignore[arg-type]
    restarted.reconcile(wait=True)
    assert len(journal.events_for(order.cl_ord_id)) == before + 2  # once more after a restart
    journal.close()
