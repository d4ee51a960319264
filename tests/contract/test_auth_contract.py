"""Signing and the clock rule, client against simulator: both schemes, refusals, 5 s either side."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.clock import ManualClock
from botkit.errors import AuthFailed, TimestampExpired
from botkit.sim.inprocess import SimHandle
from tests.contract.conftest import Connect

SCHEMES = ["v3", "pf"]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_both_schemes_are_accepted(connect: Connect, scheme: str) -> None:
    client = connect(scheme)
    assert client.balance().eq == Decimal(10000)


@pytest.mark.parametrize(("only", "refused"), [("v3", "pf"), ("pf", "v3")])
def test_a_simulator_accepting_one_scheme_refuses_the_other(
    connect: Connect, sim: SimHandle, only: str, refused: str
) -> None:
    sim.http.set_auth(sim.config.auth.model_copy(update={"schemes": [only]}))
    assert connect(only).balance().eq == Decimal(10000)
    with pytest.raises(AuthFailed) as info:
        connect(refused).balance()
    assert info.value.code == 401
    assert f"signing scheme {refused} is not accepted" in info.value.msg


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"key": "nobody"}, "unknown API key"),
        ({"secret": "not-the-secret"}, "signature does not match"),
    ],
)
def test_bad_key_or_signature_is_auth_failed(
    connect: Connect, scheme: str, change: dict[str, str], reason: str
) -> None:
    with pytest.raises(AuthFailed) as info:
        connect(scheme, **change).balance()
    assert reason in info.value.msg
    assert "not-the-secret" not in str(info.value)


def test_wrong_passphrase_is_auth_failed(connect: Connect) -> None:
    with pytest.raises(AuthFailed, match="wrong passphrase"):
        connect("pf", passphrase="wrong").balance()


def test_public_paths_need_no_credentials(connect: Connect) -> None:
    client = connect(key="", secret="", passphrase="")
    assert client.server_time() > 0
    assert client.instruments()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("offset_ms", [4_900, -4_900])
def test_server_clock_4_9_s_away_is_accepted(
    connect: Connect, clock: ManualClock, scheme: str, offset_ms: int
) -> None:
    client = connect(scheme)
    client.balance()  # synced at offset 0
    clock.offset_ms = offset_ms
    assert client.balance().eq == Decimal(10000)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("offset_ms", [5_000, 7_000, -5_000, -7_000])
def test_server_clock_5_s_or_more_away_is_expired_until_the_client_resyncs(
    connect: Connect, clock: ManualClock, scheme: str, offset_ms: int
) -> None:
    client = connect(scheme)
    client.balance()  # the client syncs its clock on first use; then the server clock jumps
    clock.offset_ms = offset_ms
    with pytest.raises(TimestampExpired, match="signTimestamp is more than 5000 ms"):
        client.balance()
    sample = client.resync_clock()
    assert sample.offset_ms == offset_ms
    assert client.balance().eq == Decimal(10000)


def test_clock_skew_fault_expires_requests_until_resync(connect: Connect, sim: SimHandle) -> None:
    client = connect()
    client.balance()
    sim.faults.set_skew(7_000)
    with pytest.raises(TimestampExpired):
        client.balance()
    client.resync_clock()
    assert client.balance().eq == Decimal(10000)
