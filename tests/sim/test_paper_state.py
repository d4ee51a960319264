"""The paper account's state file (``botkit.sim.state``), in process: a simulator reopened from
its file answers every read as the simulator that wrote it; the file holds an accepted order
once its answer is made; one holder at a time; a copy never writes; a failed save stops the
account; an account the config cannot continue is refused in one line."""

from __future__ import annotations

import json
import random
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from botkit.clock import ManualClock
from botkit.errors import PaperStateError, PaperStateLocked
from botkit.exchange import signing
from botkit.live.http import dumps
from botkit.sim import SimApi, SimEngine
from botkit.sim.config import SimConfig, load_sim_config
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.state import PaperFile, read_copy
from tests.sim.conftest import BTC, T0, sim_config

ETH = "ETH_USDT_PERP"
HOUR = 3_600_000
READS: list[tuple[str, dict[str, str]]] = [
    ("/v3/account/balance", {}),
    ("/v3/trade/position/opens", {}),
    ("/v3/trade/order/opens", {"limit": "100"}),
    ("/v3/trade/order/history", {"limit": "100", "sTime": str(T0 - HOUR)}),
    ("/v3/trade/order/trades", {"limit": "100", "sTime": str(T0 - HOUR)}),
    ("/v3/trade/position/history", {"limit": "100", "sTime": str(T0 - HOUR)}),
    ("/v3/market/tickers", {}),
    ("/v3/market/candles", {"symbol": BTC, "interval": "MINUTE_1", "limit": "500"}),
    ("/v3/market/candles", {"symbol": ETH, "interval": "HOUR_1", "limit": "500"}),
    ("/v3/market/limitPrice", {"symbol": BTC}),
    ("/v3/position/mode", {}),
    ("/v3/position/leverages", {"symbol": BTC}),
    ("/v3/position/leverages", {"symbol": ETH}),
]


def _reads(api: Any) -> list[Any]:
    return [api.call("GET", path, query, None) for path, query in READS]


def _open(path: Path, now: int, config: SimConfig | None = None, **kw: Any) -> SimHandle:
    return make_sim(
        config or sim_config(), ManualClock(now), auto_step=False, paper=PaperFile(path, **kw)
    )


class _Twins:
    """The same requests to a simulator kept in its state file and to one kept in memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = ManualClock(T0)
        self.memory = SimApi(SimEngine(sim_config(), self.clock))
        self.kept = _open(path, T0)

    def call(self, method: str, path: str, body: Any = None) -> tuple[Any, Any]:
        answers = []
        for api in (self.memory, self.kept.http.api):
            try:
                answers.append(api.call(method, path, {}, body))
            except Exception as exc:  # the same refusal from both
                answers.append(repr(exc))
        return answers[0], answers[1]

    def mark(self, symbol: str, px: Decimal) -> None:
        self.memory.engine.set_mark(symbol, px)
        self.kept.set_mark(symbol, px)

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)
        self.kept.clock.advance(ms)  # type: ignore[attr-defined]

    def restart(self) -> None:
        """Drop the kept simulator as a killed process would (nothing flushed on the way out)
        and build a new one from its file."""
        self.kept.close()
        self.kept = _open(self.path, self.clock.now_ms())


def _order(rng: random.Random, mark: Decimal, symbol: str) -> dict[str, Any]:
    side = rng.choice(["buy", "sell"])
    kind = rng.choice(["limit", "limit", "limit", "market"])
    order: dict[str, Any] = {
        "symbol": symbol,
        "side": side,
        "type": kind,
        "sz": str(rng.randint(1, 4)),
        "mgnMode": "CROSS",
        "posSide": "BOTH",
        "clOrdId": f"c{rng.randrange(10**9)}",
    }
    if kind == "limit":
        offset = Decimal(rng.randint(-30, 30)) / 1000
        order["px"] = str((mark * (1 + offset)).quantize(Decimal(1)))
    if rng.random() < 0.2:
        order["reduceOnly"] = True
    return order


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_reopened_paper_account_answers_every_read_as_the_one_that_wrote_it(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    twins = _Twins(tmp_path / "paper.sqlite")
    marks = {BTC: Decimal(60000), ETH: Decimal(3000)}
    for step in range(160):
        roll = rng.random()
        symbol = rng.choice([BTC, ETH])
        if roll < 0.45:
            batch = [_order(rng, marks[symbol], symbol) for _ in range(rng.randint(1, 4))]
            a, b = twins.call("POST", "/v3/trade/orders", batch)
            assert a == b
        elif roll < 0.6:
            opens = twins.memory.call("GET", "/v3/trade/order/opens", {"limit": "100"}, None)
            if opens:
                victim = rng.choice(opens)
                body = {"symbol": victim["symbol"], "ordId": victim["ordId"]}
                assert len(set(map(repr, twins.call("DELETE", "/v3/trade/order", body)))) == 1
        elif roll < 0.85:
            move = 1 + Decimal(rng.randint(-200, 200)) / 10_000  # within ±2 %
            marks[symbol] = (marks[symbol] * move).quantize(Decimal(1))
            twins.mark(symbol, marks[symbol])
        elif roll < 0.9:
            body = {"symbol": symbol, "lever": str(rng.randint(1, 20)), "mgnMode": "CROSS"}
            assert len(set(map(repr, twins.call("POST", "/v3/position/leverage", body)))) == 1
        elif roll < 0.93:
            mode = rng.choice(["ONE_WAY", "HEDGE"])
            twins.call("POST", "/v3/position/mode", {"posMode": mode})
            twins.call("POST", "/v3/position/mode", {"posMode": "ONE_WAY"})
        else:
            twins.advance(rng.choice([1_000, 61_000, 6 * HOUR]))
        if step % 16 == 15:
            twins.restart()
            assert _reads(twins.kept.http.api) == _reads(twins.memory), f"step {step}"
    twins.restart()
    assert _reads(twins.kept.http.api) == _reads(twins.memory)
    assert twins.kept.engine.equity() == twins.memory.engine.equity()
    twins.kept.close()


def test_an_accepted_order_is_in_the_file_when_its_answer_is_made(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _open(path, T0)
    body = dumps([{"symbol": BTC, "side": "BUY", "type": "LIMIT", "px": "59000", "sz": "1"}])
    key = sim.credential
    headers = signing.v3_headers(
        key=key.key,
        secret=key.secret.get_secret_value(),
        timestamp=T0,
        method="POST",
        path="/v3/trade/orders",
        params={},
        body=body,
    )
    answer = sim.http.handle("POST", "/v3/trade/orders", "", headers, body.encode())
    assert answer.status == 200
    (placed,) = json.loads(answer.body)["data"]
    with sqlite3.connect(path) as other:  # another connection: what a restart would read
        rows = other.execute("SELECT ord_id, state FROM open_orders").fetchall()
    assert rows == [(int(placed["ordId"]), "NEW")]
    sim.close()


def test_a_held_paper_account_refuses_a_second_holder_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _open(path, T0, command="botkit run")
    with pytest.raises(PaperStateLocked) as refused:
        _open(path, T0)
    text = str(refused.value)
    assert "\n" not in text
    assert f"paper account {path} is in use by pid" in text
    assert "(botkit run)" in text
    sim.close()
    _open(path, T0).close()  # released: the next one holds it


def test_a_read_copy_sees_the_holders_account_and_never_writes(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    engine = SimEngine(sim_config(), ManualClock(T0))
    assert read_copy(missing, engine).fresh
    assert not missing.exists()  # looking creates no account
    path = tmp_path / "paper.sqlite"
    held = _open(path, T0)
    held.http.api.call(
        "POST",
        "/v3/trade/orders",
        {},
        [{"symbol": BTC, "side": "BUY", "type": "LIMIT", "px": "59000", "sz": "1"}],
    )
    copy = SimEngine(sim_config(), ManualClock(T0))
    restored = read_copy(path, copy)  # while the holder holds it
    assert restored.open_orders == 1
    copy.cancel_all()
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT state FROM open_orders").fetchall() == [("NEW",)]
    held.close()


def test_a_failed_save_answers_500_and_then_refuses_every_request(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _open(path, T0)
    with sqlite3.connect(path) as other:
        other.execute("DROP TABLE history")
    api = sim.http.api
    market = [{"symbol": BTC, "side": "BUY", "type": "MARKET", "sz": "1"}]
    with pytest.raises(PaperStateError, match="cannot be written"):
        api.call("POST", "/v3/trade/orders", {}, market)
    with pytest.raises(Exception, match="refuses every request until it is restarted") as later:
        api.call("GET", "/v3/account/balance", {}, None)
    assert getattr(later.value, "http_status", None) == 503
    sim.close()


def test_a_manual_clock_continues_from_the_saved_time(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _open(path, T0)
    sim.clock.advance(90_000)  # type: ignore[attr-defined]
    sim.set_mark(BTC, Decimal(61000))
    sim.close()
    again = _open(path, T0)
    assert again.clock.now_ms() == T0 + 90_000
    assert again.engine.mark(BTC) == Decimal(61000)
    again.close()


def test_an_account_the_config_cannot_continue_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _open(path, T0)
    sim.http.api.call(
        "POST",
        "/v3/trade/orders",
        {},
        [{"symbol": ETH, "side": "BUY", "type": "LIMIT", "px": "2900", "sz": "1"}],
    )
    sim.close()
    base = sim_config()
    no_eth = base.model_copy(
        update={"instruments": [i for i in base.instruments if i.symbol != ETH]}
    )
    with pytest.raises(PaperStateError, match=f"holds orders or positions on {ETH}.*sim reset"):
        _open(path, T0, config=no_eth)
    other_ccy = base.model_copy(
        update={"balance": base.balance.model_copy(update={"currency": "USDC"})}
    )
    with pytest.raises(PaperStateError, match=r"settled in USDT.*says USDC"):
        _open(path, T0, config=other_ccy)


def test_fresh_starts_a_new_account_in_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _open(path, T0)
    market = [{"symbol": BTC, "side": "BUY", "type": "MARKET", "sz": "3"}]
    sim.http.api.call("POST", "/v3/trade/orders", {}, market)
    sim.close()
    base = sim_config()
    rich = base.model_copy(
        update={"balance": base.balance.model_copy(update={"amount": Decimal(123)})}
    )
    _open(path, T0, config=rich, fresh=True).close()
    again = _open(path, T0)  # the default config's balance is not used: the file has one
    assert again.engine.balance().eq == Decimal(123)
    assert again.engine.positions() == []
    assert again.http.api.call("GET", "/v3/trade/order/trades", {}, None) == []
    again.close()


def test_the_random_walk_continues_from_the_saved_mark_and_step(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    walking = load_sim_config(None)  # random_walk: the mark moves with the clock
    sim = _open(path, T0, config=walking)
    sim.clock.advance(600_000)  # type: ignore[attr-defined]
    sim.engine.step()
    sim.http.api.call("GET", "/v3/market/tickers", {}, None)  # a request saves the walk
    walked = {s: sim.engine.mark(s) for s in sim.engine.instruments}
    step = sim.engine.last_step
    sim.close()
    fresh = SimEngine(walking, ManualClock(T0 + 600_000))
    assert {s: fresh.mark(s) for s in fresh.instruments} != walked  # a restart from scratch
    again = _open(path, T0 + 600_000, config=walking)
    assert {s: again.engine.mark(s) for s in again.engine.instruments} == walked
    assert again.engine.last_step == step == T0 + 600_000
    again.clock.advance(1_000)  # type: ignore[attr-defined]
    again.engine.step()  # one step from where it was, not 601 from the start price
    assert again.engine.last_step == step + 1_000
    for symbol, mark in walked.items():
        assert abs(again.engine.mark(symbol) - mark) / mark < Decimal("0.01")
    again.close()
