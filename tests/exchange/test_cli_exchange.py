"""``botkit exchange ...`` end to end: the real CLI, settings and client over a fake exchange."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from botkit.app import clients
from botkit.cli import main
from botkit.live.client import ExchangeClient
from botkit.settings import Settings

from . import payloads as wire
from .conftest import T0, ClientFactory, FakeExchange

DAY = 86_400_000


@pytest.fixture(autouse=True)
def wired(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, make_client: ClientFactory
) -> list[Settings]:
    """Every command gets a client on the fake exchange; the settings it was given are kept."""
    for name in list(os.environ):
        if name.upper().startswith("BOTKIT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    given: list[Settings] = []

    def fake_factory(settings: Settings, **_kw: Any) -> ExchangeClient:
        given.append(settings)
        return make_client(settings.signing)

    monkeypatch.setattr(clients, "make_client", fake_factory)
    return given


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["exchange", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_instruments_table(fake: FakeExchange, capsys: pytest.CaptureFixture[str]) -> None:
    fake.on("GET", "/v3/market/allInstruments", [wire.INSTRUMENT])
    code, out, _ = _run(capsys, "instruments", "--symbol", "BTC_USDT_PERP")
    assert code == 0
    header, row = out.splitlines()
    assert header.split()[:4] == ["symbol", "status", "tSz", "lotSz"]
    assert row.split()[:4] == ["BTC_USDT_PERP", "OPEN", "0.01", "1"]
    assert fake.requests("/v3/market/allInstruments")[0].query == {"symbol": "BTC_USDT_PERP"}


def test_balance_as_json_keeps_decimal_strings(
    fake: FakeExchange, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.on("GET", "/v3/account/balance", wire.BALANCE)
    code, out, _ = _run(capsys, "balance", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["eq"] == "10003.25"
    assert data["details"][0]["ccy"] == "USDT"


def test_time_prints_server_time_and_offset(
    fake: FakeExchange, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.skew_ms = 1_234
    code, out, _ = _run(capsys, "time")
    assert code == 0
    assert f"serverTime: {T0 + 1_234}" in out
    assert "offsetMs: 1234" in out


@pytest.mark.parametrize(
    ("argv", "path", "route"),
    [
        (["markets"], "/markets", [wire.MARKET]),
        (["currencies", "--multi-chain"], "/currencies", [wire.CURRENCY_V1]),
        (["tickers"], "/v3/market/tickers", [wire.TICKER]),
        (["positions"], "/v3/trade/position/opens", [wire.POSITION]),
        (["orders", "--symbol", "BTC_USDT_PERP"], "/v3/trade/order/opens", [wire.OPEN_ORDER]),
        (["history"], "/v3/trade/order/history", [wire.ORDER]),
        (["fills"], "/v3/trade/order/trades", [wire.FILL]),
        (["position-history"], "/v3/trade/position/history", [wire.POSITION_HISTORY]),
        (["risk-limit", "--symbol", "BTC_USDT_PERP"], "/v3/market/riskLimit", [wire.RISK_TIER]),
        (
            ["limit-price", "--symbol", "BTC_USDT_PERP"],
            "/v3/market/limitPrice",
            [{"symbol": "BTC_USDT_PERP", "buyLmt": "1", "sellLmt": "2"}],
        ),
        (
            ["candles", "--symbol", "BTC_USDT_PERP", "--interval", "minute_1", "--limit", "1"],
            "/v3/market/candles",
            [["1", "2", "1.5", "1.7", "10", "5", 3, T0, T0 + 59_999]],
        ),
    ],
)
def test_every_read_command_prints_a_table_and_json(
    fake: FakeExchange,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    path: str,
    route: list[Any],
) -> None:
    fake.on("GET", path, route)
    code, out, err = _run(capsys, *argv)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 2
    assert "(none)" not in out
    code, out, _ = _run(capsys, *argv, "--json")
    assert code == 0
    assert len(json.loads(out)) == 1


def test_empty_answer_prints_none(fake: FakeExchange, capsys: pytest.CaptureFixture[str]) -> None:
    fake.on("GET", "/v3/trade/position/opens", [])
    assert _run(capsys, "positions")[1].splitlines()[1] == "(none)"


def test_history_with_start_walks_every_page(
    fake: FakeExchange, capsys: pytest.CaptureFixture[str]
) -> None:
    def page(seen: Any) -> list[dict[str, Any]]:
        top = int(seen.query.get("from", "151"))
        return [{**wire.ORDER, "ordId": str(i)} for i in range(top - 1, max(top - 101, 0), -1)]

    fake.on("GET", "/v3/trade/order/history", page)
    code, out, _ = _run(
        capsys, "history", "--start", "2023-11-14T00:00:00Z", "--end", str(T0), "--json"
    )
    assert code == 0
    assert len(json.loads(out)) == 150
    first = fake.requests("/v3/trade/order/history")[0].query
    assert (first["sTime"], first["eTime"]) == ("1699920000000", str(T0))


def test_age_is_measured_back_from_server_time(
    fake: FakeExchange, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.on("GET", "/v3/trade/order/trades", [])
    assert _run(capsys, "fills", "--start", "7d", "--end", "1d")[0] == 0
    query = fake.requests("/v3/trade/order/trades")[0].query
    assert (query["sTime"], query["eTime"]) == (str(T0 - 7 * DAY), str(T0 - DAY))


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["history", "--start", "2024-01-01T00:00:00"], 2, "has no zone: add Z"),
        (["history", "--start", "yesterday"], 2, "--start: cannot read 'yesterday'"),
        (["risk-limit"], 2, "the following arguments are required: --symbol"),
        (["fills", "--limit", "0"], 2, "'0' must be a whole number of at least 1"),
        (["candles", "--symbol", "X", "--interval", "MINUTE_2"], 2, "has no 2m candles"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    got, _out, err = _run(capsys, *argv)
    assert got == code
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_exchange_failure_is_one_line_not_a_traceback(
    fake: FakeExchange, capsys: pytest.CaptureFixture[str]
) -> None:
    html = b"<html><body>Bad Gateway</body></html>"
    fake.on("GET", "/v3/account/balance", lambda _s: httpx.Response(200, content=html))
    code, _, err = _run(capsys, "balance")
    assert code == 1
    assert err.startswith("error: malformed answer: not JSON")
    assert err.count("\n") == 1


def test_config_option_and_settings_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wired: list[Settings]
) -> None:
    config = tmp_path / "mine.toml"
    config.write_text('signing = "pf"\napi_secret = "do-not-print"\n', encoding="utf-8")
    config.chmod(0o600)  # a settings file holding a secret must be private (botkit.credentials)
    fake_code, _, _ = _run(capsys, "markets", "--config", str(config), "--json")
    assert wired[-1].signing == "pf"
    code, out, _ = _run(capsys, "settings", "--config", str(config), "--json")
    assert code == 0
    shown = json.loads(out)
    assert (shown["signing"], shown["api_secret"]) == ("pf", "********")
    assert "do-not-print" not in out
    assert fake_code == 1  # no /markets route on the fake: a NotFoundError, one line


def test_exchange_without_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys)
    assert code == 2
    assert "instruments" in out
