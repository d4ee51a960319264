"""A new strategy with the client order id tag of one that ran before (the journal knows it, its
file is gone) is refused: it would take the old one's orders for its own — count them in
``strategy.open_orders``, cancel them as its own — and start-up would not see them as the
removed strategy's. Real ``botkit`` processes against the simulator served on loopback.

Without the refusal, ``grid-x-55329`` (tag ``7ljhhs``, like ``grid-x-8918``) saw
``strategy.open_orders=1`` and cancelled ``grid-x-8918``'s resting order (``on_delete: keep``)
as its own; the journal listed 0 open orders no loaded strategy owns."""

from __future__ import annotations

import sqlite3
import textwrap
from decimal import Decimal

import pytest

from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.journal import Journal
from botkit.ports.journal import StrategyRecord
from botkit.rules.ids import client_order_id, strategy_tag
from tests.e2e.test_removed_while_stopped import Setup, setup, strategy

__all__ = ["setup"]  # the fixture, shared with the orders-of-removed-strategies tests

OLD, NEW, RENAMED = "grid-x-8918", "grid-x-55329", "grid-x-8919"

pytestmark = pytest.mark.slow


def tidy(name: str) -> str:
    """Cancels every order of its own it sees resting."""
    return textwrap.dedent(
        f"""\
        strategy: {name}
        symbol: BTC_USDT_PERP
        every: 1h
        rules:
          - name: tidy
            when: strategy.open_orders > 0
            cancel: {{}}
        """
    )


def strategy_errors(setup: Setup) -> list[str]:
    with sqlite3.connect(setup.journal) as conn:
        rows = conn.execute(
            "SELECT text FROM events WHERE kind = 'strategy_error' ORDER BY id"
        ).fetchall()
    return [str(text) for (text,) in rows]


def test_a_new_strategy_with_the_tag_of_a_removed_one_is_refused_and_leaves_its_orders(
    setup: Setup,
) -> None:
    assert strategy_tag(OLD) == strategy_tag(NEW)
    (setup.strategies / "old.yaml").write_text(strategy(OLD, "keep", "0.97"))
    (setup.strategies / "stays.yaml").write_text(strategy("stays", "keep", "0.98"))
    first = setup.botkit("run", "--once")
    assert first.returncode == 0, first.stderr[-2000:]
    placed = setup.resting()
    old_order = client_order_id(OLD, "rest", 0, 0)[:12]  # the strategy's and the rule's tags
    assert len([c for c in placed if c.startswith(old_order)]) == 1, placed

    # stopped: the old file removed, a new strategy of the same tag added
    (setup.strategies / "old.yaml").unlink()
    new_file = setup.strategies / "new.yaml"
    new_file.write_text(tidy(NEW))
    line = (
        f"strategy name '{NEW}' has the same client order id tag (7ljhhs) as '{OLD}' in the"
        f" journal {setup.journal}: their orders could not be told apart — rename '{NEW}':"
        f" '{OLD}' ran before and its orders (open ones, fills to come) carry that tag"
    )

    check = setup.botkit("check", "--offline")
    assert check.returncode == 1
    assert check.stdout.splitlines() == [f"{new_file}:1:1: {line}", "1 problem"]

    second = setup.botkit("run", "--once")  # a one-shot says a file did not load: exit 1
    assert second.returncode == 1, second.stderr[-2000:]
    assert f"1 strategy file(s) did not load ({new_file})" in second.stderr
    assert "cycle 2: 1 strategies" in second.stderr  # the rest ran
    assert setup.resting() == placed  # the old order is not the new strategy's to cancel
    assert strategy_errors(setup) == [f"{new_file}:1:1: {line}"]
    assert setup.events("cancel") == []
    status = setup.botkit("status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert f": of removed strategy {OLD} (on_delete: keep)" in status.stdout  # still its orphan

    # the operator cleans up what the refused one would have placed: not the old one's orders
    cancel = setup.botkit("cancel", "--strategy", NEW, "--yes")
    assert cancel.returncode == 2, cancel.stdout + cancel.stderr
    assert cancel.stderr.strip().splitlines()[-1] == (
        f"error: botkit cancel: no strategy '{NEW}' is loaded, and its client order id tag"
        f" (7ljhhs) is that of '{OLD}': the orders it would select are {OLD}'s — use"
        f" --strategy {OLD} (or --symbol)"
    )
    assert setup.resting() == placed
    assert setup.events("cancel") == []

    # renamed: its own tag, loads; the old order is still not its own
    new_file.write_text(tidy(RENAMED))
    assert setup.botkit("check", "--offline").returncode == 0
    third = setup.botkit("run", "--once")
    assert third.returncode == 0, third.stderr[-2000:]
    assert f"loaded {RENAMED}" in third.stderr
    assert setup.resting() == placed
    assert setup.events("cancel") == []


def test_the_strategy_that_ran_comes_back_under_its_own_name(setup: Setup) -> None:
    """The journal knowing a name is no clash for that name: it is the same strategy (its
    orders are its own again)."""
    (setup.strategies / "old.yaml").write_text(strategy(OLD, "keep", "0.97"))
    assert setup.botkit("run", "--once").returncode == 0
    (setup.strategies / "old.yaml").unlink()
    (setup.strategies / "back.yaml").write_text(tidy(OLD))

    assert setup.botkit("check", "--offline").returncode == 0
    again = setup.botkit("run", "--once")
    assert again.returncode == 0, again.stderr[-2000:]
    assert strategy_errors(setup) == []
    assert setup.resting() == {}  # its own order, cancelled by its own rule
    assert [s for s, _ in setup.events("cancel")] == [OLD]


def test_orders_of_a_tag_two_removed_strategies_share_are_left(setup: Setup) -> None:
    """A journal from before such names were refused may know two strategies of one tag. When
    neither is loaded, whose an order of that tag is cannot be told: neither's ``on_delete``
    applies (it was the last name's, which cancelled the other's kept order), it is listed."""
    (setup.strategies / "old.yaml").write_text(strategy(OLD, "cancel", "0.97"))
    (setup.strategies / "stays.yaml").write_text(strategy("stays", "keep", "0.98"))
    assert setup.botkit("run", "--once").returncode == 0
    twin = client_order_id(NEW, "other", 7, 0)  # NEW ran too (an older botkit): its order
    accepted = setup.client.place_orders(
        [
            OrderRequest(
                symbol="BTC_USDT_PERP",
                side=OrderSide.BUY,
                type=OrderType.LIMIT,
                sz=Decimal(1),
                px=Decimal(58100),
                clOrdId=twin,
            )
        ]
    )
    assert all(r.accepted for r in accepted), accepted
    with Journal(setup.journal, clock=lambda: 1_000) as journal:
        journal.record_strategies(
            [StrategyRecord(NEW, strategy_tag(NEW), "v1", "new.yaml", "keep", 0)]
        )
    before = setup.resting()
    assert len(before) == 3

    (setup.strategies / "old.yaml").unlink()  # stopped: OLD removed too
    again = setup.botkit("run", "--once")
    assert again.returncode == 0, again.stderr[-2000:]
    assert setup.resting() == before  # OLD's on_delete: cancel did not take NEW's order
    assert setup.events("cancel") == []
    status = setup.botkit("status")
    why = (
        f"of removed strategy {NEW} or {OLD}, of one client order id tag (7ljhhs): whose it is"
        " cannot be told (left)"
    )
    assert len([line for line in status.stdout.splitlines() if line.endswith(why)]) == 2
