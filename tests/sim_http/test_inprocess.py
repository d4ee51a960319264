"""The in-process transport: httpx requests answered by SimHttp, faults as a client sees them."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from botkit.app.clients import make_client
from botkit.clock import ManualClock
from botkit.errors import ConfigError
from botkit.settings import Settings, load_settings
from botkit.sim.config import AuthConfig, default_config_text
from botkit.sim.faults import FaultPlan
from botkit.sim.http import SimHttp
from botkit.sim.inprocess import SimTransport, make_transport, sim_config_for
from tests.sim_http.support import EchoApi, sign_request


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def client(http: SimHttp, sleeps: list[float]) -> httpx.Client:
    transport = SimTransport(http, sleep=sleeps.append)
    return httpx.Client(transport=transport, base_url="http://sim", timeout=2.0)


def test_signed_request_goes_through_with_its_query_and_body(
    client: httpx.Client, api: EchoApi
) -> None:
    req = sign_request("POST", "/v3/trade/orders", body=[{"sz": "1"}])
    response = client.post("/v3/trade/orders", headers=req.headers, content=req.body)
    assert response.status_code == 200
    assert response.json()["data"]["body"] == [{"sz": "1"}]
    req = sign_request("GET", "/v3/x", params={"a": "1 2", "b": "é"}, scheme="pf")
    response = client.get(f"/v3/x?{req.raw_query}", headers=req.headers)
    assert response.status_code == 200
    assert api.calls[-1][2] == {"a": "1 2", "b": "é"}


def test_latency_waits_with_the_injected_sleep(
    client: httpx.Client, http: SimHttp, sleeps: list[float]
) -> None:
    http.faults.add("latency", delay_ms=750)
    assert client.get("/public/x").status_code == 200
    assert sleeps == [0.75]


def test_latency_past_the_read_timeout_is_a_read_timeout_after_processing(
    client: httpx.Client, http: SimHttp, api: EchoApi, sleeps: list[float]
) -> None:
    http.faults.add("latency", delay_ms=5_000)
    with pytest.raises(httpx.ReadTimeout):
        client.post("/public/x", content=b"{}")
    assert sleeps == [2.0]
    assert len(api.calls) == 1


def test_drop_after_raises_a_protocol_error_after_the_engine_processed(
    client: httpx.Client, http: SimHttp, api: EchoApi
) -> None:
    http.faults.add("drop_after", method="POST")
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/public/orders", content=b"[]")
    assert len(api.calls) == 1


def test_drop_before_raises_without_processing(
    client: httpx.Client, http: SimHttp, api: EchoApi
) -> None:
    http.faults.add("drop_before")
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/public/orders", content=b"[]")
    assert api.calls == []


def test_rate_limit_reaches_the_client_with_retry_after(
    client: httpx.Client, http: SimHttp
) -> None:
    http.faults.add("rate_limit", retry_after=3)
    response = client.get("/public/x")
    assert (response.status_code, response.headers["Retry-After"]) == (429, "3")


def test_transport_works_with_the_default_fault_plan() -> None:
    http = SimHttp(EchoApi(), clock=ManualClock(0), auth=AuthConfig())
    assert isinstance(http.faults, FaultPlan)
    with httpx.Client(transport=SimTransport(http), base_url="http://sim") as client:
        assert client.get("/public/x").json()["code"] == 200


# --- the factory path: exchange = "sim" in the settings -------------------------------------


def _settings(tmp_path: Path, **overrides: Any) -> Settings:
    empty = tmp_path / "botkit.toml"
    empty.write_text("")
    return load_settings(config=empty, env_file=None, **overrides)


def test_make_client_for_sim_settings_talks_to_the_in_process_simulator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no configs/sim.toml here: the built-in defaults
    with make_client(_settings(tmp_path, exchange="sim")) as client:
        assert client.balance().eq == Decimal(10000)
        assert len(client.instruments()) == 3


@pytest.mark.parametrize("signing", ["v3", "pf"])
def test_sim_accepts_exactly_the_credentials_of_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signing: str
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = _settings(
        tmp_path,
        exchange="sim",
        signing=signing,
        api_key="op-key",
        api_secret="op-secret",
        api_passphrase="op-pass",
    )
    config = sim_config_for(settings)
    assert [k.key for k in config.auth.keys] == ["op-key"]
    with make_client(settings) as client:
        assert client.balance().eq == Decimal(10000)


def test_sim_config_setting_names_the_simulator_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = default_config_text().replace('amount = "10000"', 'amount = "2500"', 1)
    (tmp_path / "mysim.toml").write_text(text)
    settings = _settings(tmp_path, exchange="sim", sim_config=tmp_path / "mysim.toml")
    with make_client(settings) as client:
        assert client.balance().eq == Decimal(2500)


def test_missing_named_sim_config_is_a_config_error(tmp_path: Path) -> None:
    settings = _settings(tmp_path, exchange="sim", sim_config=tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="simulator config file not found"):
        make_transport(settings)
