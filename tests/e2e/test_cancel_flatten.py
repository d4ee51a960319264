"""``botkit cancel`` and ``botkit flatten`` as an operator runs them: real processes against the
paper exchange served by ``botkit sim serve`` (another real process). The test places orders and
opens positions with its own client first, then asserts what the exchange holds afterwards and
what the journal recorded."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.journal import Journal, OrderFilter, Outcome
from botkit.journal.records import EventRecord, OrderRecord
from botkit.live.client import ExchangeClient
from botkit.rules.ids import client_order_id
from botkit.sim.config import default_config_text, load_sim_config
from tests.pipeline.simharness import client_for
from tests.simserve import clean_env, sim_serve

ROOT = Path(__file__).resolve().parents[2]
BTC, ETH = "BTC_USDT_PERP", "ETH_USDT_PERP"
KEYS = {
    "BOTKIT_API_KEY": "sim-key",
    "BOTKIT_API_SECRET": "sim-secret",
    "BOTKIT_API_PASSPHRASE": "sim-passphrase",
}


@dataclass
class Account:
    """A served simulator, a client on it, and the environment ``botkit`` runs with."""

    client: ExchangeClient
    env: dict[str, str]
    folder: Path

    @property
    def journal_path(self) -> Path:
        return self.folder / "journal.sqlite"

    def botkit(
        self, *args: str, stdin: int | None = subprocess.DEVNULL, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "botkit", *args],
            cwd=self.folder,
            env={**self.env, **env},
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def rest(self, strategy: str, symbol: str, px: str, leg: int) -> str:
        cid = client_order_id(strategy, "entry", 1, leg)
        (result,) = self.client.place_orders(
            [
                OrderRequest(
                    symbol=symbol,
                    side=OrderSide.BUY,
                    type=OrderType.LIMIT,
                    sz=Decimal(1),
                    px=Decimal(px),
                    clOrdId=cid,
                )
            ]
        )
        assert result.accepted, result
        return cid

    def take(self, symbol: str, side: OrderSide, sz: str) -> None:
        (result,) = self.client.place_orders(
            [OrderRequest(symbol=symbol, side=side, type=OrderType.MARKET, sz=Decimal(sz))]
        )
        assert result.accepted, result

    def open_ids(self) -> set[str]:
        return {o.clOrdId for o in self.client.open_orders()}

    def positions(self) -> dict[str, Decimal]:
        out: dict[str, Decimal] = {}
        for p in self.client.open_positions():
            qty = p.qty or Decimal(0)
            out[p.symbol] = -abs(qty) if p.side is OrderSide.SELL else qty
        return {k: v for k, v in out.items() if v != 0}

    def journal(self) -> tuple[list[OrderRecord], list[EventRecord]]:
        with Journal(self.journal_path, clock=lambda: 0) as journal:
            return journal.orders(OrderFilter()), journal.events_after(0)


@pytest.fixture
def account(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Account]:
    sim_toml = tmp_path / "sim.toml"
    faults: str = getattr(request, "param", "")
    sim_toml.write_text(default_config_text().replace('"random_walk"', '"static"', 1) + faults)
    (tmp_path / "botkit.toml").write_text("")
    (tmp_path / "strategies").mkdir()
    base = clean_env()
    base["BOTKIT_CONFIG"] = str(tmp_path / "botkit.toml")
    with sim_serve(base, "--config", str(sim_toml), cwd=tmp_path) as url:
        client = client_for(url, load_sim_config(sim_toml))
        env = {
            **base,
            **KEYS,
            "BOTKIT_EXCHANGE": "live",
            "BOTKIT_BASE_URL": url,
            "BOTKIT_JOURNAL": str(tmp_path / "journal.sqlite"),
            "BOTKIT_STRATEGIES_DIR": str(tmp_path / "strategies"),
            "BOTKIT_JOURNAL_SYNCHRONOUS": "NORMAL",
        }
        yield Account(client, env, tmp_path)
        client.close()


@pytest.fixture
def busy(account: Account) -> dict[str, str]:
    """Two strategies' resting orders on two symbols, a long BTC and a short ETH position."""
    ids = {
        "alpha-btc": account.rest("alpha", BTC, "58000", 0),
        "alpha-eth": account.rest("alpha", ETH, "2900", 1),
        "beta-btc": account.rest("beta", BTC, "57000", 0),
    }
    account.take(BTC, OrderSide.BUY, "5")
    account.take(ETH, OrderSide.SELL, "3")
    assert account.positions() == {BTC: Decimal(5), ETH: Decimal(-3)}
    return ids


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.slow
def test_cancel_a_strategys_orders_leaves_the_others_and_is_journaled(
    account: Account, busy: dict[str, str]
) -> None:
    result = account.botkit("cancel", "--strategy", "alpha", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "botkit cancel (strategy alpha) will:" in result.stdout
    assert f"cancel {busy['alpha-btc']} {BTC} BUY 1 @ 58000" in result.stdout
    assert account.open_ids() == {busy["beta-btc"]}
    assert account.positions() == {BTC: Decimal(5), ETH: Decimal(-3)}  # cancel closes nothing
    _, events = account.journal()
    kinds = [(e.kind, e.strategy, e.rule) for e in events]
    assert ("operator", "@operator", "cancel") in kinds  # what it set out to do, before
    (done,) = [e for e in events if e.kind == "cancel"]
    assert done.text.startswith("@operator/cancel: cancel 2 open order(s):")
    assert busy["alpha-btc"] in done.text
    assert busy["alpha-eth"] in done.text
    assert "failed" not in done.text
    (after,) = [e for e in events if e.kind == "operator" and "read back" in e.text]
    assert after.text == "cancel: read back — nothing of the selection left"


@pytest.mark.slow
def test_flatten_all_cancels_then_closes_every_position_reduce_only_journaled(
    account: Account, busy: dict[str, str]
) -> None:
    result = account.botkit("flatten", "--all", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"close {BTC} position 5: SELL 5 MARKET reduce-only" in result.stdout
    assert f"close {ETH} position -3: BUY 3 MARKET reduce-only" in result.stdout
    assert "botkit flatten: done" in result.stdout
    assert account.open_ids() == set()
    assert account.positions() == {}
    orders, _ = account.journal()
    closes = {(r.symbol, r.side, r.sz, r.reduce_only, r.strategy, r.rule) for r in orders}
    assert closes == {
        (BTC, "SELL", "5", True, "@operator", "flatten"),
        (ETH, "BUY", "3", True, "@operator", "flatten"),
    }
    for row in orders:
        assert row.outcome is Outcome.ACCEPTED
        assert row.ord_id
        assert row.request is not None
        assert row.request["reduceOnly"] is True
        assert row.request["type"] == "MARKET"


@pytest.mark.slow
def test_flatten_one_symbol_under_the_kill_switch_leaves_the_rest(
    account: Account, busy: dict[str, str]
) -> None:
    result = account.botkit("flatten", "--symbol", BTC, "--yes", BOTKIT_KILL_SWITCH="true")
    assert result.returncode == 0, result.stdout + result.stderr
    assert account.positions() == {ETH: Decimal(-3)}
    assert account.open_ids() == {busy["alpha-eth"]}


@pytest.mark.slow
def test_without_a_terminal_and_without_yes_nothing_happens(
    account: Account, busy: dict[str, str]
) -> None:
    for command in ("cancel", "flatten"):
        result = account.botkit(command, "--all")
        assert result.returncode == 2
        line = _one_error_line(result)
        assert line == (
            f"error: botkit {command}: not confirmed — stdin is not a terminal; add --yes to"
            f" {command} without asking"
        )
    assert account.open_ids() == set(busy.values())
    assert account.positions() == {BTC: Decimal(5), ETH: Decimal(-3)}


@pytest.mark.slow
def test_the_halt_refuses_cancel_and_flatten_in_one_line(
    account: Account, busy: dict[str, str]
) -> None:
    (account.folder / "HALT").touch()
    for command in ("cancel", "flatten"):
        result = account.botkit(command, "--all", "--yes", BOTKIT_HALT_FILE="HALT")
        assert result.returncode == 2
        line = _one_error_line(result)
        assert line.startswith(f"error: botkit {command}: nothing sent — halt file HALT exists")
    assert account.open_ids() == set(busy.values())
    assert account.positions() == {BTC: Decimal(5), ETH: Decimal(-3)}
    assert not account.journal_path.exists()


def _on_a_terminal(account: Account, answer: str, *args: str) -> subprocess.CompletedProcess[str]:
    parent, child = pty.openpty()
    try:
        os.write(parent, answer.encode())
        return account.botkit(*args, stdin=child)
    finally:
        os.close(child)
        os.close(parent)


@pytest.mark.slow
def test_on_a_terminal_it_asks_and_no_means_nothing_is_sent(
    account: Account, busy: dict[str, str]
) -> None:
    result = _on_a_terminal(account, "n\n", "flatten", "--all")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "proceed? [y/N]" in result.stdout
    assert "botkit flatten: not confirmed — nothing sent" in result.stdout
    assert account.open_ids() == set(busy.values())
    assert account.positions() == {BTC: Decimal(5), ETH: Decimal(-3)}
    result = _on_a_terminal(account, "y\n", "cancel", "--symbol", ETH)
    assert result.returncode == 0, result.stdout + result.stderr
    assert account.open_ids() == {busy["alpha-btc"], busy["beta-btc"]}


LOST_ANSWER = """
[[faults]]
kind = "drop_after"
method = "POST"
path = "/v3/trade/orders"
nth = 2
"""
"""The second order request (flatten's close, after the test's own) is processed by the
exchange but its answer never arrives."""


@pytest.mark.slow
@pytest.mark.parametrize("account", [LOST_ANSWER], indirect=True, ids=["lost-answer"])
def test_a_close_whose_answer_is_lost_is_looked_up_not_sent_twice(account: Account) -> None:
    account.take(BTC, OrderSide.BUY, "4")
    result = account.botkit("flatten", "--symbol", BTC, "--yes", BOTKIT_REQUEST_TIMEOUT="1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert account.positions() == {}
    orders, _ = account.journal()
    (row,) = orders
    assert row.outcome is Outcome.ACCEPTED  # learnt by looking the client order id up
    assert row.ord_id
    assert len(account.client.fills()) == 2  # the test's buy and one close: nothing sent twice


@pytest.mark.slow
def test_an_unknown_symbol_or_strategy_is_one_line_and_nothing_is_sent(
    account: Account, busy: dict[str, str]
) -> None:
    result = account.botkit("cancel", "--symbol", "NOPE_USDT_PERP", "--yes")
    assert result.returncode == 2
    assert "no instrument 'NOPE_USDT_PERP' at the exchange" in _one_error_line(result)
    result = account.botkit("flatten", "--symbol", "btc_usdt_perp", "--yes")
    assert result.returncode == 2
    assert _one_error_line(result).endswith(
        "no instrument 'btc_usdt_perp' at the exchange — did you mean 'BTC_USDT_PERP'?"
        " ('botkit exchange instruments' lists them)"
    )
    result = account.botkit("flatten", "--strategy", "nosuch", "--yes")
    assert result.returncode == 2
    assert "no strategy 'nosuch' is loaded" in _one_error_line(result)
    # a misspelt name is not "nothing to do": no strategy of that name is loaded or journaled
    result = account.botkit("cancel", "--strategy", "nosuch", "--yes")
    assert result.returncode == 2
    assert "no strategy 'nosuch' is loaded or known to the journal" in _one_error_line(result)
    assert account.open_ids() == set(busy.values())
    assert account.positions() == {BTC: Decimal(5), ETH: Decimal(-3)}


@pytest.mark.slow
def test_flatten_a_strategy_closes_the_positions_of_the_symbol_it_trades(
    account: Account, busy: dict[str, str]
) -> None:
    (account.folder / "strategies" / "alpha.yaml").write_text(
        "strategy: alpha\nsymbol: ETH_USDT_PERP\nevery: 1m\nrules:\n"
        "  - name: entry\n    when: price.mark > 0\n"
        "    place: {order: {side: BUY, px: price.mark * 0.97, sz: 1}}\n"
    )
    result = account.botkit("flatten", "--strategy", "alpha", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert account.open_ids() == {busy["beta-btc"]}  # both of alpha's orders, not beta's
    assert account.positions() == {BTC: Decimal(5)}  # ETH (alpha's symbol) closed
