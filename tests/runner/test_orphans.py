"""The runner's start-up pass over open orders no loaded strategy owns, on the simulator: a
fresh :class:`Runner` over the same journal and exchange is a restarted service."""

from __future__ import annotations

import sqlite3
import textwrap
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.rules.ids import belongs_to
from botkit.rules.store import StrategyStore
from botkit.runner.cycle import Runner
from botkit.runner.execution import DryRunExecution, Execution, LiveExecution
from botkit.runner.orders import Executor
from botkit.runner.orphans import NOT_OWNED_EVENT
from botkit.sources import FileSource
from tests.runner.conftest import ONE_ORDER, Rig, make_rig, open_orders

MINUTE = 60_000
KEEP = ONE_ORDER.replace("every: 1m", "every: 1m\n    on_delete: keep")


def restart(rig: Rig, *, dry: bool = False) -> Runner:
    """The service started again: a new runner (nothing in memory) over the same journal."""
    executor = Executor(rig.client, rig.journal, resync=rig.client.resync_clock, batch_rate=None)
    execution: Execution = (
        DryRunExecution(rig.journal) if dry else LiveExecution(executor, rig.client, rig.journal)
    )
    rig.runner = Runner(
        port=rig.client,
        store=StrategyStore(FileSource(rig.strategies)),
        journal=rig.journal,
        execution=execution,
        now_ms=rig.client.clock.now_ms,
        orphans=True,
    )
    return rig.runner


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path)
    restart(r)
    yield r
    r.client.close()
    r.journal.close()


def _place_foreign(rig: Rig, cl_ord_id: str) -> None:
    order = OrderRequest(
        symbol="BTC_USDT_PERP",
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(59000),
        clOrdId=cl_ord_id,
    )
    assert rig.client.place_orders([order])[0].accepted


def _mine(rig: Rig, strategy: str = "one-order") -> list[str]:
    return [o.clOrdId for o in open_orders(rig) if belongs_to(o.clOrdId, strategy)]


def _not_owned_events(rig: Rig) -> list[list[str]]:
    """The reasons listed by each ``orders_not_owned`` event, oldest first."""
    return [
        [o["why"] for o in e.detail["orders"]]
        for e in rig.journal.events_after(0)
        if e.kind == NOT_OWNED_EVENT
    ]


def test_a_file_that_exists_but_does_not_load_keeps_its_orders(rig: Rig) -> None:
    path = rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    assert len(_mine(rig)) == 1
    path.write_text("strategy: one-order\nsymbol: [broken\n")  # edited badly while stopped
    restart(rig)
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert len(_mine(rig)) == 1  # its strategy cannot be told: nothing is cancelled
    assert report.orphans is not None
    assert [i.why for i in report.orphans.left] == [
        f"of strategy one-order, whose file {path} does not load (left)"
    ]


def test_a_dry_run_start_says_what_it_would_cancel_and_cancels_nothing(rig: Rig) -> None:
    path = rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    path.unlink()
    restart(rig, dry=True)
    report = rig.runner.run_cycle()
    assert len(_mine(rig)) == 1
    assert report.orphans is not None
    assert [(e.strategy, e.action) for e in report.orphans.effects] == [("one-order", "cancel")]
    dry = [e for e in rig.journal.events_after(0) if e.kind == "dry_run"]
    assert len(dry) == 1
    assert dry[0].text.startswith("one-order/<file removed>: would cancel 1 open order(s)")


def test_the_last_loaded_version_s_on_delete_decides(rig: Rig) -> None:
    path = rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    path.write_text(textwrap.dedent(KEEP))  # edited: on_delete keep
    rig.advance(MINUTE)
    rig.runner.run_cycle()
    path.unlink()  # deleted while stopped
    restart(rig)
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert len(_mine(rig)) == 1
    assert report.orphans is not None
    assert [i.why for i in report.orphans.left] == [
        "of removed strategy one-order (on_delete: keep)"
    ]


def test_a_strategy_journaled_before_on_delete_was_recorded_is_left_alone(rig: Rig) -> None:
    path = rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    with sqlite3.connect(rig.journal.path) as conn:  # a journal of an older botkit
        conn.execute("DELETE FROM strategies")
    path.unlink()
    restart(rig)
    report = rig.runner.run_cycle()
    assert len(_mine(rig)) == 1
    assert report.orphans is not None
    assert [i.why for i in report.orphans.left] == [
        "of removed strategy one-order (on_delete unknown: journaled by an older botkit)"
    ]


def test_a_foreign_order_seen_while_running_is_journaled_once(rig: Rig) -> None:
    rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    assert _not_owned_events(rig) == [[]]  # start-up: nothing foreign
    _place_foreign(rig, "by-hand-1")
    rig.advance(MINUTE)
    rig.runner.run_cycle()  # keep_open reads the open orders
    assert _not_owned_events(rig) == [[], ["not placed by botkit"]]
    rig.advance(MINUTE)
    rig.runner.run_cycle()  # the same: not journaled again
    assert len(_not_owned_events(rig)) == 2


def test_a_file_deleted_while_running_is_remembered_as_removed(rig: Rig) -> None:
    path = rig.write("one.yaml", ONE_ORDER)
    rig.runner.run_cycle()
    path.unlink()
    rig.advance(MINUTE)
    rig.runner.run_cycle()
    assert _mine(rig) == []  # the running service's on_delete, as before
    (known,) = rig.journal.strategies(lambda n: n)
    removed = (known.name, known.on_delete, known.removed_ms)
    assert removed == ("one-order", "cancel", rig.clock.now_ms())
