"""Orders of a strategy whose file was deleted while botkit was stopped: at the next start they
get that strategy's ``on_delete`` (cancel, or keep), through the normal pipeline and journaled;
open orders no known strategy owns are left alone and listed by ``botkit status`` and
``botkit plan``. Real ``botkit`` processes against the simulator served on loopback."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.clock import WallClock
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.live.client import ExchangeClient
from botkit.rules.ids import client_order_id
from botkit.sim.config import ApiKeyConfig
from botkit.sim.inprocess import make_sim
from botkit.sim.server import SimServer
from tests.pipeline.simharness import client_for, static_config

ROOT = Path(__file__).resolve().parents[2]
KEY, SECRET, PASSPHRASE = "orphan-key-01", "orphan-secret-Q/+=", "orphan-pass"

pytestmark = pytest.mark.slow


def strategy(name: str, on_delete: str, fraction: str) -> str:
    """One resting BUY well under the mark, placed once an hour (so a second run in the same
    hour places nothing new)."""
    return textwrap.dedent(
        f"""\
        strategy: {name}
        symbol: BTC_USDT_PERP
        every: 1h
        on_delete: {on_delete}
        rules:
          - name: rest
            when: price.mark > 0
            place:
              order: {{side: BUY, type: LIMIT, px: price.mark * {fraction}, sz: 1}}
        """
    )


@dataclass
class Setup:
    env: dict[str, str]
    strategies: Path
    journal: Path
    client: ExchangeClient

    def botkit(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "botkit", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def resting(self) -> dict[str, str]:
        """clOrdId → price of every open order at the exchange."""
        return {o.clOrdId: f"{o.px}" for o in self.client.open_orders()}

    def events(self, kind: str) -> list[tuple[str, str]]:
        with sqlite3.connect(self.journal) as conn:
            rows = conn.execute(
                "SELECT strategy, text FROM events WHERE kind = ? ORDER BY id", (kind,)
            ).fetchall()
        return [(str(a), str(b)) for a, b in rows]


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    config = static_config()
    key = ApiKeyConfig(key=KEY, secret=SECRET, passphrase=PASSPHRASE)
    config = config.model_copy(update={"auth": config.auth.model_copy(update={"keys": [key]})})
    sim = make_sim(config, WallClock(), auto_step=False)
    strategies = tmp_path / "strategies"
    strategies.mkdir()
    (tmp_path / "botkit.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("BOTKIT_")}
    with SimServer(sim.http) as server, client_for(server.url, config) as client:
        env.update(
            BOTKIT_CONFIG=str(tmp_path / "botkit.toml"),
            BOTKIT_EXCHANGE="live",
            BOTKIT_BASE_URL=server.url,
            BOTKIT_API_KEY=KEY,
            BOTKIT_API_SECRET=SECRET,
            BOTKIT_API_PASSPHRASE=PASSPHRASE,
            BOTKIT_STRATEGIES_DIR=str(strategies),
            BOTKIT_JOURNAL=str(tmp_path / "journal.sqlite"),
            BOTKIT_REQUEST_TIMEOUT="1",  # start-up waits 1.5 s for a crashed run's requests
        )
        yield Setup(env, strategies, tmp_path / "journal.sqlite", client)


def _foreign(client: ExchangeClient) -> tuple[str, str]:
    """Two orders botkit did not place: a hand-made id, and a botkit-shaped id of a strategy
    this journal never ran."""
    ghost = client_order_id("ghost-strategy", "rule", 7, 0)
    orders = [
        OrderRequest(
            symbol="BTC_USDT_PERP",
            side=OrderSide.BUY,
            type=OrderType.LIMIT,
            sz=Decimal(1),
            px=Decimal(px),
            clOrdId=cl,
        )
        for cl, px in (("manual-1", "58000"), (ghost, "58100"))
    ]
    results = client.place_orders(orders)
    assert all(r.accepted for r in results), results
    return "manual-1", ghost


def test_orders_of_strategies_deleted_while_stopped_get_their_on_delete(setup: Setup) -> None:
    files = {
        "gone-cancel": strategy("gone-cancel", "cancel", "0.97"),
        "gone-keep": strategy("gone-keep", "keep", "0.975"),
        "stays": strategy("stays", "cancel", "0.98"),
    }
    for name, text in files.items():
        (setup.strategies / f"{name}.yaml").write_text(text)
    first = setup.botkit("run", "--once")
    assert first.returncode == 0, first.stderr[-2000:]
    placed = setup.resting()
    assert len(placed) == 3, first.stderr[-3000:]
    manual, ghost = _foreign(setup.client)

    # stopped: two files deleted; then started again
    (setup.strategies / "gone-cancel.yaml").unlink()
    (setup.strategies / "gone-keep.yaml").unlink()
    second = setup.botkit("run", "--once")
    assert second.returncode == 0, second.stderr[-2000:]

    resting = setup.resting()
    gone_cancel = client_order_id("gone-cancel", "rest", 0, 0)[:8]  # the strategy's tag
    gone_keep = client_order_id("gone-keep", "rest", 0, 0)[:8]
    stays = client_order_id("stays", "rest", 0, 0)[:8]
    assert not [c for c in resting if c.startswith(gone_cancel)]  # cancelled per on_delete
    assert len([c for c in resting if c.startswith(gone_keep)]) == 1  # kept per on_delete
    assert len([c for c in resting if c.startswith(stays)]) == 1  # still loaded: untouched
    assert {manual, ghost} <= set(resting)  # not ours to touch
    cancels = setup.events("cancel")
    assert [s for s, _ in cancels] == ["gone-cancel"]
    assert "cancel 1 open order(s)" in cancels[0][1]
    assert "failed" not in cancels[0][1]

    status = setup.botkit("status")
    assert status.returncode == 0, status.stdout + status.stderr
    section = status.stdout[status.stdout.index("open orders no loaded strategy owns") :]
    lines = section.splitlines()
    assert lines[0].endswith(": 3")
    assert any(manual in line and line.endswith(": not placed by botkit") for line in lines)
    assert any(
        ghost in line and line.endswith(": a botkit id of no strategy this journal knows")
        for line in lines
    )
    assert any(
        gone_keep in line and line.endswith(": of removed strategy gone-keep (on_delete: keep)")
        for line in lines
    )

    plan = setup.botkit("plan")
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert "open orders no loaded strategy owns: 3" in plan.stdout
    assert f"clOrdId {manual}): not placed by botkit" in plan.stdout
    assert setup.resting() == resting  # plan sends nothing


def test_a_missing_strategies_folder_cancels_nothing(setup: Setup) -> None:
    (setup.strategies / "only.yaml").write_text(strategy("only", "cancel", "0.97"))
    assert setup.botkit("run", "--once").returncode == 0
    before = setup.resting()
    assert len(before) == 1
    setup.env["BOTKIT_STRATEGIES_DIR"] = str(setup.strategies.parent / "misspelt")
    again = setup.botkit("run", "--cycles", "1")  # no strategy loads: exits 1, cancels nothing
    assert again.returncode == 1
    assert setup.resting() == before
    assert "must not cancel every strategy's orders" in again.stderr


def test_plan_says_a_removed_strategys_cancel_was_not_sent_not_that_it_failed(
    setup: Setup,
) -> None:
    """``botkit plan`` is a dry run: the on_delete cancel it shows is not sent, so the orders are
    still open when its cycle reads them. They are not 'the cancel failed' — neither in its
    output nor in the event ``botkit status`` reads."""
    (setup.strategies / "gone.yaml").write_text(strategy("gone", "cancel", "0.97"))
    assert setup.botkit("run", "--once").returncode == 0
    before = setup.resting()
    assert len(before) == 1
    (setup.strategies / "gone.yaml").unlink()
    (setup.strategies / "other.yaml").write_text(strategy("other", "keep", "0.5"))

    plan = setup.botkit("plan")
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert setup.resting() == before  # nothing sent
    assert "failed" not in plan.stdout + plan.stderr
    assert "of removed strategy gone (on_delete: cancel; not sent: dry run)" in plan.stderr
    status = setup.botkit("status")
    assert "failed" not in status.stdout
    assert "(on_delete: cancel; not sent: dry run)" in status.stdout
