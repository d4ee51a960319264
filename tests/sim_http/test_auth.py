"""Signed requests: both schemes accepted, wrong ones refused with 401, the clock rule at 5 s."""

from __future__ import annotations

import pytest

from botkit.clock import ManualClock
from botkit.sim.config import AuthConfig
from botkit.sim.http import SimHttp
from tests.sim_http.support import T0, EchoApi, envelope, sign_request

SCHEMES = ["v3", "pf"]


def send(http: SimHttp, method: str, path: str, **kwargs: object) -> tuple[int, dict[str, object]]:
    req = sign_request(method, path, **kwargs)  # type: ignore[arg-type]
    answer = http.handle(method, path, req.raw_query, req.headers, req.body)
    return answer.status, envelope(answer.body)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_signed_get_with_query_is_accepted(http: SimHttp, api: EchoApi, scheme: str) -> None:
    params = {"symbol": "BTC_USDT_PERP", "note": "a b&c/d é", "limit": "10"}
    status, env = send(http, "GET", "/v3/trade/order/opens", params=params, scheme=scheme)
    assert (status, env["code"], env["msg"]) == (200, 200, "Success")
    assert api.calls[-1][2] == params


@pytest.mark.parametrize("scheme", SCHEMES)
def test_signed_post_with_body_is_accepted(http: SimHttp, api: EchoApi, scheme: str) -> None:
    body = [{"symbol": "BTC_USDT_PERP", "px": "100.5", "sz": "1"}]
    status, env = send(http, "POST", "/v3/trade/orders", body=body, scheme=scheme)
    assert status == 200, env
    assert api.calls[-1][3] == body


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"key": "other-key"}, "unknown API key"),
        ({"secret": "wrong-secret"}, "signature does not match"),
    ],
)
def test_unknown_key_or_bad_signature_is_refused_with_401(
    http: SimHttp, api: EchoApi, scheme: str, change: dict[str, str], reason: str
) -> None:
    status, env = send(http, "GET", "/v3/account/balance", scheme=scheme, **change)
    assert (status, env["code"]) == (401, 401)
    assert reason in str(env["msg"])
    assert env["data"] is None
    assert api.calls == []


def test_wrong_passphrase_is_refused_with_401_in_pf(http: SimHttp, api: EchoApi) -> None:
    status, env = send(http, "GET", "/v3/account/balance", scheme="pf", passphrase="nope")
    assert (status, env["code"], env["msg"]) == (401, 401, "Unauthorized: wrong passphrase")
    assert api.calls == []


def test_query_changed_after_signing_is_refused(http: SimHttp) -> None:
    req = sign_request("GET", "/v3/trade/order/opens", params={"symbol": "A"})
    answer = http.handle("GET", "/v3/trade/order/opens", "symbol=B", req.headers, req.body)
    assert answer.status == 401


def test_body_changed_after_signing_is_refused(http: SimHttp) -> None:
    req = sign_request("POST", "/v3/trade/orders", body=[{"sz": "1"}], scheme="pf")
    answer = http.handle("POST", "/v3/trade/orders", "", req.headers, b'[{"sz":"2"}]')
    assert answer.status == 401


def test_missing_signature_headers_are_refused(http: SimHttp) -> None:
    answer = http.handle("GET", "/v3/account/balance", "", {}, b"")
    assert answer.status == 401
    assert "signature headers missing" in envelope(answer.body)["msg"]


def test_header_names_are_matched_in_any_letter_case(http: SimHttp) -> None:
    req = sign_request("GET", "/v3/account/balance", scheme="pf")
    upper = {k.upper(): v for k, v in req.headers.items()}
    assert http.handle("GET", "/v3/account/balance", "", upper, b"").status == 200


def test_timestamp_that_is_not_a_number_is_a_400(http: SimHttp) -> None:
    req = sign_request("GET", "/v3/account/balance")
    headers = {**req.headers, "signTimestamp": "soon"}
    answer = http.handle("GET", "/v3/account/balance", "", headers, b"")
    assert answer.status == 400
    assert envelope(answer.body)["msg"] == "Param error: signTimestamp must be integer milliseconds"


@pytest.mark.parametrize(("only", "refused"), [("v3", "pf"), ("pf", "v3")])
def test_a_server_accepting_one_scheme_refuses_the_other(
    api: EchoApi, clock: ManualClock, only: str, refused: str
) -> None:
    http = SimHttp(api, clock=clock, auth=AuthConfig(schemes=[only]))
    assert send(http, "GET", "/v3/account/balance", scheme=only)[0] == 200
    status, env = send(http, "GET", "/v3/account/balance", scheme=refused)
    assert status == 401
    assert f"signing scheme {refused} is not accepted" in str(env["msg"])


def test_public_paths_need_no_signature(http: SimHttp, api: EchoApi) -> None:
    answer = http.handle("GET", "/public/markets", "", {}, b"")
    assert answer.status == 200
    assert len(api.calls) == 1


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    ("skew_ms", "accepted"),
    [(0, True), (4_999, True), (-4_999, True), (5_000, False), (-5_000, False), (7_000, False)],
)
def test_clock_rule_refuses_timestamps_5_s_or_more_away(
    http: SimHttp, api: EchoApi, clock: ManualClock, scheme: str, skew_ms: int, accepted: bool
) -> None:
    clock.offset_ms = skew_ms
    status, env = send(http, "GET", "/v3/account/balance", scheme=scheme, ts=T0)
    if accepted:
        assert status == 200
    else:
        assert (status, env["code"], env["data"]) == (400, 400, None)
        assert env["msg"] == (
            "Request expired: signTimestamp is more than 5000 ms from system time"
        )
        assert api.calls == []


def test_clock_rule_uses_the_configured_tolerance(api: EchoApi, clock: ManualClock) -> None:
    http = SimHttp(api, clock=clock, auth=AuthConfig(tolerance_ms=1000))
    status, env = send(http, "GET", "/v3/account/balance", ts=T0 - 1000)
    assert status == 400
    assert env["msg"] == "Request expired: signTimestamp is more than 1000 ms from system time"
    assert send(http, "GET", "/v3/account/balance", ts=T0 - 999)[0] == 200


def test_bad_signature_is_reported_before_an_expired_timestamp(
    http: SimHttp, clock: ManualClock
) -> None:
    clock.offset_ms = 60_000
    assert send(http, "GET", "/v3/account/balance", secret="wrong")[0] == 401


def test_authenticator_repr_shows_no_secret(http: SimHttp) -> None:
    assert "sim-secret" not in repr(http.authenticator)
    assert "sim-passphrase" not in repr(http.authenticator)
