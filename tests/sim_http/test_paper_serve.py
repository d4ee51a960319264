"""``botkit sim serve --state FILE`` and ``botkit sim reset`` as real processes: orders placed over
HTTP survive ``kill -9`` and a restart with ``--state``; without it the start-up lines say the
account is in memory; ``reset`` refuses while a server holds the file and otherwise starts a
fresh account at the ``paper_balance`` setting."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.errors import BotkitError
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.exchange.queries import FillQuery
from botkit.live.client import ExchangeClient
from botkit.sim.config import load_sim_config
from tests.pipeline.simharness import client_for
from tests.simserve import clean_env

pytestmark = pytest.mark.slow
BTC = "BTC_USDT_PERP"


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    lines: list[str]

    def client(self) -> ExchangeClient:
        return client_for(self.url, load_sim_config(None))


def _env(folder: Path, **extra: str) -> dict[str, str]:
    (folder / "botkit.toml").write_text("")
    return {**clean_env(), "BOTKIT_CONFIG": str(folder / "botkit.toml"), **extra}


@contextmanager
def serve(folder: Path, *args: str, **env: str) -> Iterator[Served]:
    """``botkit sim serve --port 0 ARGS`` in ``folder``; its start-up lines read (up to the
    ``stop with`` line). Stopped with SIGTERM on the way out unless already gone."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "botkit", "sim", "serve", "--port", "0", *args],
        cwd=folder,
        env=_env(folder, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline()]
        assert "listening on http://127.0.0.1:" in lines[0], lines
        while "stop with" not in lines[-1]:
            lines.append(proc.stdout.readline())
            assert lines[-1], lines
        yield Served(proc, lines[0].split("listening on ", 1)[1].split()[0], lines)
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.communicate(timeout=30)


def _paper_line(served: Served) -> str:
    (line,) = [ln.strip() for ln in served.lines if "paper account:" in ln]
    return line


def _resting(n: int) -> OrderRequest:
    return OrderRequest(
        symbol=BTC,
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(58000 + n % 500),
        clOrdId=f"keep-{n}",
    )


def _all_open(client: ExchangeClient) -> set[str]:
    return {o.clOrdId or "" for o in client.open_orders(BTC)}  # every page


def test_orders_placed_over_http_survive_kill_9_and_a_restart_with_state(tmp_path: Path) -> None:
    state = tmp_path / "paper.sqlite"
    acked: list[str] = []
    with serve(tmp_path, "--state", str(state)) as served:
        assert _paper_line(served) == (
            f"paper account: {state} (a fresh paper account (10000 USDT); kept across restarts)"
        )
        with served.client() as client:
            (taken,) = client.place_orders(
                [OrderRequest(symbol=BTC, side=OrderSide.BUY, type=OrderType.MARKET, sz=Decimal(2))]
            )
            assert taken.accepted
            fills = client.fills(FillQuery(symbol=BTC, limit=100))
            before = (client.balance(), client.open_positions(), fills)
        enough = threading.Event()

        def place_until_killed() -> None:
            with served.client() as client:
                n = 0
                try:
                    while True:
                        batch = [_resting(n + i) for i in range(5)]
                        n += 5
                        results = client.place_orders(batch)
                        acked.extend(r.clOrdId or "" for r in results if r.accepted)
                        if len(acked) >= 40:
                            enough.set()
                except BotkitError:  # the server is gone: this batch's fate is unknown
                    enough.set()

        placer = threading.Thread(target=place_until_killed)
        placer.start()
        assert enough.wait(60)
        served.proc.send_signal(signal.SIGKILL)  # while batches are still being sent
        placer.join(60)
        assert served.proc.wait(30) == -signal.SIGKILL
    assert len(acked) >= 40
    with serve(tmp_path, "--state", str(state)) as again:
        assert "continued: " in _paper_line(again)
        with again.client() as client:
            resting = _all_open(client)
            assert set(acked) <= resting  # every answered order is there (one more batch may be)
            assert resting <= {_resting(n).clOrdId for n in range(len(acked) + 10)}
            fills = client.fills(FillQuery(symbol=BTC, limit=100))
            after = (client.balance(), client.open_positions(), fills)
    wallet = [(b.eq or 0) - (b.upl or 0) for b in (before[0], after[0])]  # upl moves with marks
    assert wallet[0] == wallet[1]  # nothing filled since: the wallet is as it was
    assert [(p.qty, p.openAvgPx) for p in after[1]] == [(p.qty, p.openAvgPx) for p in before[1]]
    assert after[2] == before[2]
    with serve(tmp_path) as memory:
        assert _paper_line(memory) == (
            "paper account: in memory: everything is lost when it stops (--state FILE keeps it)"
        )
        with memory.client() as client:
            assert client.open_orders(BTC) == []


def _botkit(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=folder,
        env=_env(folder, **env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_sim_reset_refuses_a_held_account_and_starts_a_fresh_one(tmp_path: Path) -> None:
    state = tmp_path / "paper.sqlite"
    with serve(tmp_path, "--state", str(state)) as served:
        with served.client() as client:
            assert client.place_orders([_resting(1)])[0].accepted
        refused = _botkit(tmp_path, "sim", "reset", "--state", str(state))
        assert refused.returncode == 1
        (line,) = refused.stderr.splitlines()
        assert line.startswith(f"error: paper account {state} is in use by pid {served.proc.pid}")
        assert "(botkit sim serve)" in line
    done = _botkit(tmp_path, "sim", "reset", "--state", str(state), BOTKIT_PAPER_BALANCE="2500")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"botkit sim: fresh paper account in {state}: 2500 USDT\n"
    with serve(tmp_path, "--state", str(state)) as fresh, fresh.client() as client:
        assert "wallet 2500 USDT" in _paper_line(fresh)
        assert client.open_orders(BTC) == []
        assert client.balance().eq == Decimal(2500)


def test_sim_reset_without_state_resets_the_account_botkit_run_uses(tmp_path: Path) -> None:
    journal = tmp_path / "var" / "journal.sqlite"
    done = _botkit(tmp_path, "sim", "reset", "--balance", "750", BOTKIT_JOURNAL=str(journal))
    assert done.returncode == 0, done.stderr
    paper = tmp_path / "var" / "paper.sqlite"
    assert done.stdout == f"botkit sim: fresh paper account in {paper}: 750 USDT\n"
    for made in tmp_path.glob("var/paper.sqlite*"):  # private like the journal, whatever the umask
        assert made.stat().st_mode & 0o077 == 0, made
    seen = _botkit(tmp_path, "exchange", "balance", "--json", BOTKIT_JOURNAL=str(journal))
    assert seen.returncode == 0, seen.stderr
    assert '"eq": "750"' in seen.stdout
    bad = _botkit(tmp_path, "sim", "reset", "--balance", "-5")
    assert bad.returncode == 2
    assert "must be a positive amount" in bad.stderr
