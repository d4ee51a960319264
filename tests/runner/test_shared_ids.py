"""Two bots, two journals, one account, the same strategies: they share client order ids. The
bot warns about open orders carrying its strategies' ids that its journal did not send, or sent
and settled under another ordId — a table over the pure check, and real processes."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from botkit.exchange.models import OpenOrder, OrderSide, OrderType
from botkit.rules.ids import client_order_id
from botkit.runner.shared import shared_ids
from tests.reliability.procs import ROOT, Service, make_service

OURS = client_order_id("dip", "buy", 7, 0)
OTHER_STRATEGY = client_order_id("not-loaded", "buy", 7, 0)


def _open(cl_ord_id: str, ord_id: str = "900") -> OpenOrder:
    return OpenOrder(
        symbol="BTC_USDT_PERP",
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        ordId=ord_id,
        clOrdId=cl_ord_id,
    )


@pytest.mark.parametrize(
    ("order", "journal", "expected"),
    [
        (_open(OURS), {}, (OURS, None)),  # never sent by this journal
        (_open(OURS, "900"), {OURS: "111"}, (OURS, "111")),  # placed twice
        (_open(OURS, "900"), {OURS: "900"}, None),  # ours
        (_open(OURS, "900"), {OURS: ""}, None),  # ours, not settled yet
        (_open(OTHER_STRATEGY), {}, None),  # a strategy this bot does not run
        (_open("manual-order-1"), {}, None),  # not a botkit id
        (_open(""), {}, None),
    ],
)
def test_open_orders_under_this_bots_ids_that_its_journal_did_not_send_are_suspects(
    order: OpenOrder, journal: dict[str, str], expected: tuple[str, str | None] | None
) -> None:
    found = shared_ids([order], ["dip"], journal)
    assert [(s.order.clOrdId, s.journal_ord_id) for s in found] == ([expected] if expected else [])
    for suspect in found:
        assert suspect.strategy == "dip"
        assert "another botkit with another journal" in suspect.text()


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = make_service(tmp_path)
    yield svc
    svc.server.stop()


@pytest.mark.slow
def test_a_second_bot_with_another_journal_on_the_account_is_warned_about(
    service: Service,
) -> None:
    first = service.start()
    try:
        # the first bot cancels and re-places its ladder every cycle: pause it (SIGSTOP) at a
        # moment its orders rest at the exchange, so the second bot's first read must see them
        deadline = time.monotonic() + 30
        while True:
            assert first.poll() is None, service.output()[-2000:]
            assert time.monotonic() < deadline, "the first bot placed no order that rests"
            if service.sim.engine.matcher.open:
                first.send_signal(signal.SIGSTOP)
                if service.sim.engine.matcher.open:
                    break
                first.send_signal(signal.SIGCONT)
            time.sleep(0.02)
        other = service.folder / "other.sqlite"
        second = subprocess.run(
            [sys.executable, "-m", "botkit", "run", "--once"],
            cwd=ROOT,
            env=dict(service.env, BOTKIT_JOURNAL=str(other)),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert first.poll() is None  # the first was left alone
    finally:
        first.send_signal(signal.SIGCONT)
        first.kill()
        first.wait(timeout=10)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "another botkit with another journal may be trading matrix" in second.stderr
    conn = sqlite3.connect(other)
    try:
        events = conn.execute(
            "SELECT COUNT(*) FROM events WHERE kind = 'shared_client_id' AND strategy = 'matrix'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert events >= 1
