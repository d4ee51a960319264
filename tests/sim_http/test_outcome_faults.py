"""The simulator's switches for the unknown-outcome matrix: the duplicate clOrdId check can be
turned off (config key and ``botkit sim serve`` option), a ``late`` request reaches the engine
after a delay (judged by the clock rule then), a ``drip`` answer comes one byte at a time."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from botkit.cli import main
from botkit.clock import ManualClock, WallClock
from botkit.errors import OutcomeUnknown
from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.live.client import ExchangeClient
from botkit.sim.config import SimConfig, default_config_text, parse_sim_config
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimServer
from tests.pipeline.simharness import client_for, static_config

PLACE = "/v3/trade/orders"
SYMBOL = "BTC_USDT_PERP"


def _order(cl_ord_id: str) -> OrderRequest:
    return OrderRequest(
        symbol=SYMBOL,
        side=OrderSide.BUY,
        type=OrderType.LIMIT,
        sz=Decimal(1),
        px=Decimal(58000),
        clOrdId=cl_ord_id,
    )


def _client(
    config: SimConfig, clock: ManualClock, *, timeout: float = 2.0
) -> tuple[ExchangeClient, SimHandle]:
    def sleep(seconds: float) -> None:
        clock.advance(max(0, round(seconds * 1000)))

    sim = make_sim(config, clock, sleep=sleep, auto_step=False)
    client = client_for(
        "http://sim", config, local=clock.now_ms, transport=sim.transport, timeout=timeout
    )
    client.resync_clock()
    return client, sim


@pytest.mark.parametrize(("check", "codes"), [(True, [200, 250]), (False, [200, 200])])
def test_the_duplicate_check_refuses_or_places_a_repeated_cl_ord_id(
    check: bool, codes: list[int]
) -> None:
    config = static_config().model_copy(update={"duplicate_check": check})
    client, _sim = _client(config, ManualClock(1_763_000_000_000))
    answers = [client.place_orders([_order("bk-same-id")])[0].code for _ in range(2)]
    assert answers == codes
    held = [o for o in client.open_orders(SYMBOL) if o.clOrdId == "bk-same-id"]
    assert len(held) == codes.count(200)


def test_the_duplicate_check_is_a_sim_toml_key_and_a_serve_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = default_config_text().replace("duplicate_check = true", "duplicate_check = false")
    assert parse_sim_config(text).duplicate_check is False
    assert parse_sim_config(default_config_text()).duplicate_check is True
    monkeypatch.setenv("BOTKIT_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    assert main(["sim", "config", "--no-duplicate-check"]) == 0
    assert json.loads(capsys.readouterr().out)["duplicate_check"] is False


def test_a_late_request_is_processed_when_it_arrives_and_judged_then() -> None:
    clock = ManualClock(1_763_000_000_000)
    client, sim = _client(static_config(), clock, timeout=2.0)
    sim.faults.add("late", method="POST", path=PLACE, delay_ms=4_000, times=1)
    with pytest.raises(OutcomeUnknown):  # the client gives up after its 2 s timeout
        client.place_orders([_order("bk-late-in-window")])
    assert client.open_orders(SYMBOL) == []  # 2 s later: not there yet
    clock.advance(2_500)
    assert [o.clOrdId for o in client.open_orders(SYMBOL)] == ["bk-late-in-window"]
    # one arriving after the 5 s clock rule is refused when it arrives: never placed
    sim.faults.add("late", method="POST", path=PLACE, delay_ms=6_000, times=1)
    with pytest.raises(OutcomeUnknown):
        client.place_orders([_order("bk-late-past-window")])
    clock.advance(10_000)
    assert sim.http.deliver_held() == 0
    assert [o.clOrdId for o in client.open_orders(SYMBOL)] == ["bk-late-in-window"]


@pytest.mark.slow
def test_a_dripping_answer_comes_one_byte_at_a_time_over_loopback() -> None:
    config = static_config()
    sim = make_sim(config, WallClock(), auto_step=False)
    sim.faults.add("drip", path="/timestamp", delay_ms=20, times=1)
    server = SimServer(sim.http).start()
    try:
        sizes: list[int] = []
        started = time.monotonic()
        with httpx.stream("GET", f"{server.url}/timestamp", timeout=5) as answer:
            sizes = [len(chunk) for chunk in answer.iter_raw()]
        took = time.monotonic() - started
        body_length = sum(sizes)
    finally:
        server.stop()
    assert body_length > 20
    assert max(sizes) <= 2  # bytes trickle (two may meet in one read)
    assert took >= 0.02 * (body_length - 1) * 0.9
