"""An instrument whose ``status`` is a number or an unknown word (the spec types it Integer and
lists words; the payload carries a string) never stops the others being read: it is kept, not
tradable for new orders, and named once in the log and by ``botkit check``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from loguru import logger

from botkit.cli import main
from botkit.exchange.models import InstrumentStatus
from botkit.live.client import ExchangeClient
from botkit.pipeline import build_plan
from botkit.runner.reader import SnapshotReader
from tests.pipeline.helpers import intent, snapshot

from . import payloads as wire
from .conftest import FakeExchange

ODD = [
    {**wire.INSTRUMENT, "symbol": "ETH_USDT_PERP", "status": 3},
    {**wire.INSTRUMENT, "symbol": "SOL_USDT_PERP", "status": "2"},
    {**wire.INSTRUMENT, "symbol": "XRP_USDT_PERP", "status": "HALTED"},
    {**wire.INSTRUMENT, "status": "open"},
]


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    seen: list[str] = []
    sink = logger.add(lambda m: seen.append(str(m)), level="WARNING", format="{message}")
    yield seen
    logger.remove(sink)


def test_a_numeric_or_unknown_status_is_kept_and_the_others_are_read(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/market/allInstruments", ODD)
    by_symbol = {i.symbol: i for i in client.instruments()}
    assert {s: str(i.status) for s, i in by_symbol.items()} == {
        "ETH_USDT_PERP": "3",
        "SOL_USDT_PERP": "2",
        "XRP_USDT_PERP": "HALTED",
        "BTC_USDT_PERP": "OPEN",
    }
    assert by_symbol["BTC_USDT_PERP"].status is InstrumentStatus.OPEN
    assert by_symbol["BTC_USDT_PERP"].odd_status is None
    assert by_symbol["ETH_USDT_PERP"].odd_status == "3"


def test_no_new_order_on_an_instrument_of_unknown_status_and_the_others_go(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    fake.on("GET", "/v3/market/allInstruments", ODD)
    instruments = {i.symbol: i for i in client.instruments()}
    plan = build_plan(
        [
            intent(0, symbol="ETH_USDT_PERP", reduce_only=True),
            intent(1, symbol="BTC_USDT_PERP"),
        ],
        snapshot(instruments=instruments, mark=None),
    )
    assert [o.intent.symbol for o in plan.accepted] == ["BTC_USDT_PERP"]
    (refusal,) = plan.refused
    assert [r.code for r in refusal.reasons] == ["instrument_status_unknown"]
    assert "status '3'" in refusal.reasons[0].message


def test_an_unknown_status_is_logged_once(
    fake: FakeExchange, client: ExchangeClient, warnings: list[str]
) -> None:
    fake.on("GET", "/v3/market/allInstruments", ODD)
    reader = SnapshotReader(client)
    for _ in range(3):
        reader.invalidate_instruments()
        assert len(reader.instruments(0)) == 4
    named = [w for w in warnings if "botkit does not know" in w]
    assert len(named) == 3  # ETH, SOL, XRP: once each, not once per read
    assert any("ETH_USDT_PERP has status '3'" in w for w in named)


def test_botkit_check_names_an_unknown_status_once_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path / "none.sqlite"))  # not the checkout's
    listing = tmp_path / "instruments.json"
    listing.write_text(json.dumps({"code": 200, "data": ODD}))
    strategy = tmp_path / "eth.yaml"
    strategy.write_text(
        "strategy: eth\nsymbol: ETH_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n    cancel: {}\n"
    )
    assert main(["check", str(strategy), "--instruments", str(listing)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "note: instrument ETH_USDT_PERP has status '3', which botkit does not know: no new"
        " orders are placed on it until the exchange reports it OPEN",
        "ok: 1 strategy (symbols and limits checked; id tags not checked against a journal:"
        f" none at {tmp_path / 'none.sqlite'} — pass --journal FILE)",
    ]
