"""``make_client(settings)``: live over a transport, sim in process, and a clear error."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from botkit.app.clients import make_client
from botkit.errors import SettingsError
from botkit.settings import Settings

from . import payloads as wire
from .conftest import BASE, KEY, PASSPHRASE, SECRET, FakeExchange, ManualMs


def _live(**extra: object) -> Settings:
    fields: dict[str, object] = {
        "exchange": "live",
        "base_url": BASE,
        "api_key": KEY,
        "api_secret": SECRET,
        "api_passphrase": PASSPHRASE,
    }
    fields.update(extra)
    return Settings.model_validate(fields)


@pytest.mark.parametrize("signing", ["v3", "pf"])
def test_live_client_signs_with_the_settings(
    fake: FakeExchange, clock: ManualMs, signing: str
) -> None:
    fake.on("GET", "/v3/account/balance", wire.BALANCE)
    settings = _live(signing=signing, recv_window=2500, clock_resync_interval=0)
    with make_client(settings, transport=httpx.MockTransport(fake.handler), local_clock=clock) as c:
        assert c.balance().availMgn == Decimal(wire.BALANCE["availMgn"])
        assert (c.base_url, c.signing, c.clock.interval_ms) == (BASE, signing, 0)
    assert fake.seen[-1].scheme == signing


def test_live_without_credentials_is_refused_before_any_request() -> None:
    with pytest.raises(SettingsError, match="BOTKIT_API_KEY"):
        make_client(_live(api_key=None))


def test_client_repr_shows_no_secret() -> None:
    with make_client(_live(), transport=httpx.MockTransport(lambda r: httpx.Response(200))) as c:
        assert repr(c) == f"ExchangeClient(base_url='{BASE}', signing='v3')"
        assert SECRET not in str(vars(c))


def test_sim_mode_talks_to_the_embedded_simulator_without_network(tmp_path: Path) -> None:
    with make_client(Settings(exchange="sim", journal=tmp_path / "journal.sqlite")) as client:
        assert client.server_time() > 0
        assert client.balance().eq is not None
