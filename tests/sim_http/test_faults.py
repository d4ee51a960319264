"""Fault injection: which requests a rule hits, what the answer becomes, and the counts."""

from __future__ import annotations

from typing import Any

import pytest

from botkit.clock import ManualClock
from botkit.errors import ConfigError
from botkit.sim.faults import FaultKind, FaultPlan
from botkit.sim.http import SimHttp
from tests.sim_http.support import EchoApi, envelope


def fired_on(plan: FaultPlan, n: int, path: str = "/v3/trade/orders") -> list[int]:
    """Numbers (1-based) of the requests among ``n`` that a fault answered."""
    return [i for i in range(1, n + 1) if plan.decide("POST", path, 0).fault is not None]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, [1, 2, 3, 4, 5, 6]),
        ({"nth": 3}, [3]),
        ({"every": 2}, [2, 4, 6]),
        ({"requests": [1, 5]}, [1, 5]),
        ({"times": 2}, [1, 2]),
        ({"every": 2, "times": 2}, [2, 4]),
    ],
)
def test_schedule_picks_the_matching_requests(options: dict[str, Any], expected: list[int]) -> None:
    plan = FaultPlan()
    plan.add("http_500", **options)
    assert fired_on(plan, 6) == expected


def test_rule_matches_method_and_path_glob_only() -> None:
    plan = FaultPlan()
    plan.add("http_503", method="post", path="/v3/trade/*")
    assert plan.decide("POST", "/v3/trade/orders", 0).fault is not None
    assert plan.decide("GET", "/v3/trade/orders", 0).fault is None
    assert plan.decide("POST", "/v3/account/balance", 0).fault is None


def test_nth_counts_only_matching_requests() -> None:
    plan = FaultPlan()
    plan.add("drop_after", path="/v3/trade/orders", nth=2)
    plan.decide("GET", "/timestamp", 0)
    assert plan.decide("POST", "/v3/trade/orders", 0).fault is None
    plan.decide("GET", "/timestamp", 0)
    assert plan.decide("POST", "/v3/trade/orders", 0).fault is not None


def test_probability_is_reproducible_for_a_seed_and_roughly_right() -> None:
    def run(seed: int) -> list[int]:
        plan = FaultPlan(seed=seed)
        plan.add("rate_limit", probability=0.3)
        return fired_on(plan, 1000)

    first = run(7)
    assert first == run(7)
    assert first != run(8)
    assert 250 <= len(first) <= 350


def test_time_window_counts_from_when_the_rule_was_added() -> None:
    clock = ManualClock(1_000_000)
    plan = FaultPlan(clock=clock)
    plan.add("http_500", after_ms=1_000, until_ms=3_000)
    hits = []
    for elapsed in (0, 999, 1_000, 2_999, 3_000):
        hits.append(plan.decide("GET", "/x", 1_000_000 + elapsed).fault is not None)
    assert hits == [False, False, True, True, False]


def test_latency_adds_up_and_leaves_the_answer_alone() -> None:
    plan = FaultPlan()
    plan.add("latency", delay_ms=200)
    plan.add("latency", delay_ms=50, path="/v3/*")
    decision = plan.decide("GET", "/v3/account/balance", 0)
    assert decision.delay_s == pytest.approx(0.25)
    assert decision.fault is None
    assert decision.processed


def test_first_answering_fault_wins_and_later_rules_still_count_the_request() -> None:
    plan = FaultPlan()
    plan.add("rate_limit", nth=1)
    second = plan.add("http_500", nth=2)
    assert plan.decide("GET", "/x", 0).fault.kind is FaultKind.RATE_LIMIT  # type: ignore[union-attr]
    assert second.seen == 1
    assert plan.decide("GET", "/x", 0).fault.kind is FaultKind.HTTP_500  # type: ignore[union-attr]


def test_counts_by_kind_and_clear_removes_every_fault() -> None:
    plan = FaultPlan()
    plan.add("http_500", times=2)
    plan.add("latency", delay_ms=1)
    plan.set_skew(7_000)
    for _ in range(3):
        plan.decide("GET", "/x", 0)
    assert plan.counts == {"http_500": 2, "latency": 3}
    assert plan.total == 5
    plan.clear()
    assert plan.decide("GET", "/x", 0).fault is None
    assert plan.skew_ms == 0
    assert plan.counts["http_500"] == 2
    plan.reset_counts()
    assert plan.total == 0


def test_remove_takes_out_one_rule() -> None:
    plan = FaultPlan()
    rule = plan.add("http_500")
    plan.remove(rule)
    assert plan.decide("GET", "/x", 0).fault is None


def test_from_config_builds_rules_and_skew() -> None:
    plan = FaultPlan.from_config(
        [
            {"kind": "rate_limit", "path": "/v3/trade/*", "every": 3, "retry_after": 2},
            {"kind": "skew", "ms": -3000},
        ]
    )
    assert plan.skew_ms == -3000
    assert [f.rule.kind for f in plan.faults] == [FaultKind.RATE_LIMIT]


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"kind": "explode"}, "faults[0].kind"),
        ({"kind": "http_500", "evry": 2}, "faults[0].evry"),
        ({"kind": "http_500", "nth": 0}, "faults[0].nth"),
        ({"kind": "latency"}, "delay_ms > 0"),
        ({"kind": "drop_after", "process": False}, "'process' cannot be set"),
        ({"kind": "http_500", "after_ms": 5, "until_ms": 5}, "until_ms must be greater"),
        ({"kind": "skew", "ms": "7s"}, "integer 'ms'"),
        ({"kind": "http_500", "probability": 1.5}, "faults[0].probability"),
    ],
)
def test_bad_fault_config_is_a_located_one_line_error(entry: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        FaultPlan.from_config([entry], source="configs/sim.toml")
    message = str(info.value)
    assert message.startswith("configs/sim.toml: ")
    assert fragment in message
    assert "\n" not in message


# --- what each kind does to the answer (through SimHttp) ------------------------------------


def answer(http: SimHttp, kind: str, **options: Any) -> tuple[Any, EchoApi]:
    http.faults.add(kind, **options)
    result = http.handle("GET", "/public/x", "", {}, b"")
    api = http.api
    assert isinstance(api, EchoApi)
    return result, api


@pytest.mark.parametrize(
    ("kind", "status", "code"),
    [("http_500", 500, 500), ("http_503", 503, 503), ("rate_limit", 429, 429)],
)
def test_error_answers_are_envelopes_and_the_request_is_not_processed(
    http: SimHttp, kind: str, status: int, code: int
) -> None:
    result, api = answer(http, kind)
    assert result.status == status
    assert envelope(result.body)["code"] == code
    assert api.calls == []


def test_rate_limit_answer_carries_retry_after(http: SimHttp) -> None:
    result, _ = answer(http, "rate_limit", retry_after=2.5)
    assert result.headers["retry-after"] == "2.5"


def test_a_500_after_processing_can_be_asked_for(http: SimHttp) -> None:
    result, api = answer(http, "http_500", process=True)
    assert result.status == 500
    assert len(api.calls) == 1


def test_drop_after_processes_then_drops(http: SimHttp) -> None:
    result, api = answer(http, "drop_after")
    assert result.drop
    assert len(api.calls) == 1


def test_drop_before_drops_without_processing(http: SimHttp) -> None:
    result, api = answer(http, "drop_before")
    assert result.drop
    assert api.calls == []


def test_expired_answer_is_the_clock_rule_answer(http: SimHttp) -> None:
    result, api = answer(http, "expired")
    assert result.status == 400
    assert envelope(result.body)["msg"] == (
        "Request expired: signTimestamp is more than 5000 ms from system time"
    )
    assert api.calls == []


def test_html_page_answer(http: SimHttp) -> None:
    result, api = answer(http, "html")
    assert (result.status, result.headers["content-type"]) == (200, "text/html")
    assert result.body.startswith(b"<!DOCTYPE html>")
    assert api.calls == []


def test_truncated_answer_is_processed_and_cut(http: SimHttp) -> None:
    result, api = answer(http, "truncated")
    assert result.status == 200
    assert result.body.startswith(b'{"code":200')
    assert not result.body.endswith(b"}")
    assert len(api.calls) == 1


def test_empty_answer_with_a_chosen_status(http: SimHttp) -> None:
    result, _ = answer(http, "empty", status=502)
    assert (result.status, result.body) == (502, b"")


def test_latency_is_returned_as_delay_of_a_normal_answer(http: SimHttp) -> None:
    result, api = answer(http, "latency", delay_ms=1500)
    assert (result.status, result.delay_s) == (200, 1.5)
    assert len(api.calls) == 1


def test_skew_moves_the_server_clock_and_composes_with_its_offset(
    http: SimHttp, clock: ManualClock
) -> None:
    clock.offset_ms = 100
    http.faults.set_skew(7_000)
    http.handle("GET", "/public/x", "", {}, b"")
    assert clock.offset_ms == 7_100
    http.faults.set_skew(-3_000)
    http.handle("GET", "/public/x", "", {}, b"")
    assert clock.offset_ms == -2_900
    http.faults.clear()
    http.handle("GET", "/public/x", "", {}, b"")
    assert clock.offset_ms == 100
