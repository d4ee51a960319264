"""Paper trading that remembers: ``botkit run`` with ``exchange = "sim"`` keeps its paper account
in ``paper.sqlite`` beside the journal. Real ``botkit`` processes, stopped cleanly or SIGKILLed
mid-cycle, then restarted: the paper account, the journal and the orders agree afterwards.

Mid-cycle is made deterministic with the simulator's own fault hook: a latency fault holds the
answer of the batch *after* the exchange accepted it (the in-process transport waits before it
answers); the test waits until the paper file holds the order and the journal shows it sent —
the process is then inside that wait — and kills it there."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from botkit.journal import Journal, OrderState, Outcome
from botkit.runner.orphans import NOT_OWNED_EVENT
from botkit.sim.config import default_config_text
from tests.simserve import ROOT, clean_env

pytestmark = pytest.mark.slow

STRATEGY = """\
    strategy: paper
    symbol: BTC_USDT_PERP
    every: 1h
    rules:
      - name: rest
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.97, sz: 1}
"""
HELD_ANSWER = """
[[faults]]
kind = "latency"
method = "POST"
path = "/v3/trade/orders"
delay_ms = 600000
"""


@dataclass
class Paper:
    folder: Path
    env: dict[str, str]

    @property
    def journal(self) -> Path:
        return self.folder / "journal.sqlite"

    @property
    def state(self) -> Path:
        return self.folder / "paper.sqlite"

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

    def exchange(self, what: str) -> list[dict[str, str]]:
        """``botkit exchange WHAT --json``: what the paper account holds, read as an operator
        reads it (a copy of the state file)."""
        done = self.botkit("exchange", what, "--json")
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout)
        return found if isinstance(found, list) else [found]

    def paper_orders(self) -> list[tuple[str, str]]:
        """(clOrdId, state) of every open order in the state file."""
        if not self.state.exists():
            return []
        with sqlite3.connect(self.state) as conn:
            try:
                rows = conn.execute("SELECT cl_ord_id, state FROM open_orders ORDER BY ord_id")
                return [(str(a), str(b)) for a, b in rows.fetchall()]
            except sqlite3.OperationalError:  # the file is being created
                return []

    def unsettled(self) -> list[tuple[str, OrderState]]:
        if not self.journal.exists():
            return []
        with Journal(self.journal, clock=lambda: 0) as journal:
            return [(r.cl_ord_id, r.state) for r in journal.unsettled()]


@pytest.fixture
def paper(tmp_path: Path) -> Paper:
    strategies = tmp_path / "strategies"
    strategies.mkdir()
    (strategies / "paper.yaml").write_text(textwrap.dedent(STRATEGY))
    (tmp_path / "botkit.toml").write_text("")
    (tmp_path / "sim.toml").write_text(default_config_text())
    env = clean_env()
    env.update(
        BOTKIT_CONFIG=str(tmp_path / "botkit.toml"),
        BOTKIT_EXCHANGE="sim",
        BOTKIT_SIM_CONFIG=str(tmp_path / "sim.toml"),
        BOTKIT_STRATEGIES_DIR=str(strategies),
        BOTKIT_JOURNAL=str(tmp_path / "journal.sqlite"),
        BOTKIT_LOG_FORMAT="json",
    )
    return Paper(tmp_path, env)


def _agree(paper: Paper) -> list[str]:
    """Assert the journal and the paper account agree; the accepted client order ids."""
    with Journal(paper.journal, clock=lambda: 0) as journal:
        rows = journal.orders()
        assert journal.unsettled() == []
        event = journal.last_event(NOT_OWNED_EVENT)
        not_owned = event.detail.get("orders") if event is not None else None
    accepted = sorted(r.cl_ord_id for r in rows if r.outcome is Outcome.ACCEPTED)
    assert [r.outcome for r in rows] == [Outcome.ACCEPTED] * len(rows)
    resting = sorted(o["clOrdId"] for o in paper.exchange("orders"))
    assert resting == accepted  # every accepted order rests, once; nothing else does
    assert not not_owned  # no open order the journal does not know
    return accepted


def test_a_restart_continues_the_paper_account_where_it_stopped(paper: Paper) -> None:
    first = paper.botkit("run", "--once")
    assert first.returncode == 0, first.stderr
    (placed,) = _agree(paper)
    balance = paper.exchange("balance")[0]
    again = paper.botkit("run", "--once")  # the same hour: the rule's order is the same one
    assert again.returncode == 0, again.stderr
    assert _agree(paper) == [placed]  # it still rests, and was not placed again
    with Journal(paper.journal, clock=lambda: 0) as journal:
        assert [r.resolved for r in journal.orders()] == [False]  # reconcile repaired nothing
    assert paper.exchange("balance")[0]["eq"] == balance["eq"]
    assert paper.paper_orders() == [(placed, "NEW")]


def test_sigkill_mid_cycle_then_restart_the_account_journal_and_orders_agree(
    paper: Paper,
) -> None:
    (paper.folder / "sim.toml").write_text(default_config_text() + HELD_ANSWER)
    held = dict(paper.env, BOTKIT_REQUEST_TIMEOUT="120")  # the answer waits up to 120 s
    with (paper.folder / "run.err").open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "botkit", "run"],
            cwd=ROOT,
            env=held,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 60
        while not (paper.paper_orders() and paper.unsettled()):
            assert proc.poll() is None, (paper.folder / "run.err").read_text()
            assert time.monotonic() < deadline, "the cycle never reached its batch"
            time.sleep(0.02)
        seen = [o["clOrdId"] for o in paper.exchange("orders")]  # a copy, while it is held
        assert seen == [cl for cl, _ in paper.paper_orders()]
        proc.send_signal(signal.SIGKILL)  # the cycle is inside its batch's held answer
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    ((cl_ord_id, state),) = paper.unsettled()
    assert state is OrderState.SENT  # the journal does not know it was accepted...
    assert paper.paper_orders() == [(cl_ord_id, "NEW")]  # ...the paper account has it

    (paper.folder / "sim.toml").write_text(default_config_text())  # no more held answers
    restart = paper.botkit("run", "--once")
    assert restart.returncode == 0, restart.stderr
    assert _agree(paper) == [cl_ord_id]  # settled by looking it up, never placed twice
    assert paper.paper_orders() == [(cl_ord_id, "NEW")]
