"""The v3 envelope around what the wire API returns, and the answers for bad requests."""

from __future__ import annotations

from botkit.sim.http import SimHttp, envelope_bytes
from tests.sim_http.support import EchoApi, envelope, sign_request


def test_data_is_wrapped_in_the_success_envelope_with_decimals_as_strings(http: SimHttp) -> None:
    answer = http.handle("GET", "/public/x", "a=1&b=", {}, b"")
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    assert envelope(answer.body) == {
        "code": 200,
        "msg": "Success",
        "data": {"query": {"a": "1", "b": ""}, "body": None, "px": "1.50"},
    }


def test_json_body_numbers_reach_the_api_as_decimals(http: SimHttp, api: EchoApi) -> None:
    http.handle("POST", "/public/x", "", {}, b'{"px": 0.1, "n": 3}')
    body = api.calls[-1][3]
    assert repr(body["px"]) == "Decimal('0.1')"
    assert body["n"] == 3


def test_bad_json_body_is_a_400_envelope_and_never_reaches_the_api(
    http: SimHttp, api: EchoApi
) -> None:
    req = sign_request("POST", "/v3/trade/orders", raw_body="{not json")
    answer = http.handle("POST", "/v3/trade/orders", "", req.headers, req.body)
    assert answer.status == 400
    assert envelope(answer.body) == {
        "code": 400,
        "msg": "Param error: the request body is not valid JSON",
        "data": None,
    }
    assert api.calls == []


def test_sim_error_becomes_an_envelope_with_its_code_and_status(http: SimHttp) -> None:
    answer = http.handle("GET", "/public/missing", "", {}, b"")
    assert answer.status == 200
    assert envelope(answer.body) == {"code": 10001, "msg": "symbol does not exist", "data": None}
    answer = http.handle("GET", "/public/notfound", "", {}, b"")
    assert (answer.status, envelope(answer.body)["code"]) == (404, 404)


def test_an_engine_bug_is_a_500_envelope_not_a_crash(http: SimHttp) -> None:
    answer = http.handle("GET", "/public/boom", "", {}, b"")
    assert answer.status == 500
    assert envelope(answer.body)["code"] == 500


def test_envelope_bytes_are_compact_and_plain_decimal() -> None:
    from decimal import Decimal

    assert envelope_bytes(200, "Success", [Decimal("1E+2")]) == (
        b'{"code":200,"msg":"Success","data":["100"]}'
    )


def test_method_is_matched_in_any_letter_case(http: SimHttp, api: EchoApi) -> None:
    http.handle("get", "/public/x", "", {}, b"")
    assert api.calls[-1][0] == "GET"


def test_each_processed_request_steps_the_engine_when_asked(api: EchoApi) -> None:
    from botkit.clock import ManualClock
    from botkit.sim.config import AuthConfig

    steps: list[int] = []
    http = SimHttp(api, clock=ManualClock(0), auth=AuthConfig(), step=lambda: steps.append(1))
    http.handle("GET", "/public/x", "", {}, b"")
    http.handle("GET", "/public/x", "", {}, b"")
    assert len(steps) == 2
    assert http.requests == 2
