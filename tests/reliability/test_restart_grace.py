"""Defect: every restart after a crash waited 15 s before its start-up reconcile, whatever the
request timeout. The grace is how long a request of the killed process may still be in flight
at the exchange, which the request timeout bounds; it is now 1.5 × ``request_timeout`` (15 s
with the default 10 s timeout, as before).
"""

from __future__ import annotations

import time
from pathlib import Path

from botkit.app.service import assemble
from botkit.journal import Journal, NewOrder, Outcome
from botkit.settings import load_settings
from tests.pipeline.helpers import intent


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _journal_with_an_order_sent(path: Path, ago_ms: int) -> None:
    with Journal(path, clock=lambda: _wall_ms() - ago_ms) as journal:
        order = intent(0, cl_ord_id="bk-sent-before-the-crash", px="50000")
        journal.add_orders(None, [NewOrder(order, order.px, order.sz)], dry=False)
        journal.mark_sent([order.cl_ord_id])


def test_start_up_reconcile_waits_only_as_long_as_a_request_can_be_in_flight(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    _journal_with_an_order_sent(journal, ago_ms=7_000)  # past 5 s window + 1 s timeout
    (tmp_path / "botkit.toml").write_text("")
    settings = load_settings(
        config=tmp_path / "botkit.toml",
        env_file=None,
        exchange="sim",
        request_timeout=1.0,
        journal=journal,
        strategies_dir=tmp_path,
    )
    started = time.monotonic()
    with assemble(settings) as parts:
        parts.runner.execution.reconcile()
        waited = time.monotonic() - started
        events = [e.text for e in parts.journal.events_after(0)]
        order = parts.journal.order("bk-sent-before-the-crash")
    assert not [e for e in events if e.startswith("waiting")], events
    assert waited < 5
    assert order is not None
    assert order.outcome is Outcome.FAILED
