"""Submission: what is retried, how long it waits, and how ambiguous sends are settled."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from decimal import Decimal

import pytest

from botkit.errors import (
    ConnectFailed,
    ExchangeRejected,
    OutcomeUnknown,
    RateLimited,
    ReadTimedOut,
    RequestValidationError,
    ServerUnavailable,
    TimestampExpired,
)
from botkit.exchange.models import OrderRequest, OrderSide, OrderType, PlaceResult
from botkit.journal import Outcome
from botkit.runner.orders import RateLimiter, RetryPolicy, Submitter
from tests.pipeline.fakes import FakeExchange
from tests.pipeline.helpers import SYMBOL, FakeSleep

D = Decimal
NO_JITTER = RetryPolicy(jitter=0.0)


def reqs(n: int = 3) -> list[OrderRequest]:
    return [
        OrderRequest(
            symbol=SYMBOL,
            side=OrderSide.BUY,
            type=OrderType.LIMIT,
            sz=D(1),
            px=D(100),
            clOrdId=f"c{i}",
        )
        for i in range(n)
    ]


def submitter(
    ex: FakeExchange,
    sleep: FakeSleep,
    *,
    policy: RetryPolicy = NO_JITTER,
    resync: Callable[[], object] | None = None,
    seed: int = 1,
    events: list[tuple[str, tuple[str, ...], str]] | None = None,
) -> Submitter:
    return Submitter(
        ex,
        resync=resync,
        sleep=sleep,
        policy=policy,
        rng=random.Random(seed),
        observer=(lambda k, i, t: events.append((k, i, t))) if events is not None else None,
    )


def outcomes(report: object) -> list[tuple[str, Outcome]]:
    return [(o.cl_ord_id, o.outcome) for o in report.outcomes]  # type: ignore[attr-defined]


def assert_no_duplicates(ex: FakeExchange) -> None:
    assert all(count == 1 for cid, count in ex.received.items() if cid in ex.orders)
    assert len(ex.orders) == len(set(ex.orders))


def test_expired_timestamp_resyncs_the_clock_then_resends_at_once() -> None:
    ex = FakeExchange([TimestampExpired("expired")])
    sleep = FakeSleep()
    resyncs: list[int] = []
    report = submitter(ex, sleep, resync=lambda: resyncs.append(1)).place(reqs())
    assert resyncs == [1]
    assert sleep.calls == [0.0]
    assert len(ex.calls) == 2
    assert outcomes(report) == [(f"c{i}", Outcome.ACCEPTED) for i in range(3)]


def test_expired_timestamp_is_retried_a_bounded_number_of_times() -> None:
    ex = FakeExchange([TimestampExpired("expired")] * 10)
    report = submitter(ex, FakeSleep(), policy=RetryPolicy(max_attempts=3)).place(reqs(1))
    assert len(ex.calls) == 3
    assert outcomes(report) == [("c0", Outcome.FAILED)]
    assert "expired" in report.outcomes[0].error


def test_rate_limited_waits_as_the_answer_says() -> None:
    ex = FakeExchange([RateLimited("429", retry_after=1.5), RateLimited("429", retry_after=0.5)])
    sleep = FakeSleep()
    report = submitter(ex, sleep).place(reqs())
    assert sleep.calls == [1.5, 0.5]
    assert report.requests == 1
    assert len(ex.calls) == 3
    assert_no_duplicates(ex)


def test_backoff_sequence_is_exponential_without_jitter() -> None:
    script = [ConnectFailed("refused"), ConnectFailed("refused"), RateLimited("429"), "ok"]
    sleep = FakeSleep()
    submitter(FakeExchange(script), sleep).place(reqs())
    assert sleep.calls == pytest.approx([0.2, 0.4, 0.8])


def test_backoff_jitter_is_seedable_and_exact() -> None:
    policy = RetryPolicy(base_delay=0.2, jitter=0.5, max_delay=0.5)
    sleep = FakeSleep()
    submitter(FakeExchange([RateLimited("429")] * 3), sleep, policy=policy, seed=42).place(reqs())
    rng = random.Random(42)
    expected = [d * (1 + 0.5 * rng.random()) for d in (0.2, 0.4, 0.5)]
    assert sleep.calls == expected


def test_exhausted_retries_settle_the_orders_failed_with_the_last_error() -> None:
    ex = FakeExchange([RateLimited("429 first")] * 4 + [RateLimited("429 last")])
    report = submitter(ex, FakeSleep()).place(reqs(2))
    assert outcomes(report) == [("c0", Outcome.FAILED), ("c1", Outcome.FAILED)]
    assert all("429 last" in o.error for o in report.outcomes)
    assert not ex.orders


def test_a_5xx_on_a_write_is_an_unknown_outcome_looked_up_never_failed() -> None:
    # the exchange placed the batch, then answered 503: looked up, settled accepted, no re-send
    ex = FakeExchange([("after", ServerUnavailable("503 after processing"))] * 5)
    report = submitter(ex, FakeSleep()).place(reqs(2))
    assert outcomes(report) == [("c0", Outcome.ACCEPTED), ("c1", Outcome.ACCEPTED)]
    assert all(o.resolved for o in report.outcomes)
    assert len(ex.calls) == 1
    assert_no_duplicates(ex)


def test_connection_dropped_after_accept_is_looked_up_not_resent() -> None:
    ex = FakeExchange([("after", OutcomeUnknown("connection lost after sending"))])
    events: list[tuple[str, tuple[str, ...], str]] = []
    report = submitter(ex, FakeSleep(), events=events).place(reqs())
    assert len(ex.calls) == 1, "never re-sent blindly"
    assert outcomes(report) == [(f"c{i}", Outcome.ACCEPTED) for i in range(3)]
    assert all(o.resolved and o.ord_id == ex.ord_ids[o.cl_ord_id] for o in report.outcomes)
    assert [k for k, _, _ in events].count("unknown") == 1
    assert_no_duplicates(ex)


def test_unknown_outcome_resends_only_the_orders_the_exchange_lacks() -> None:
    def half(orders: Sequence[OrderRequest], process: Callable[..., object]) -> object:
        process(orders[:2])
        raise OutcomeUnknown("read timeout")

    ex = FakeExchange([half])
    report = submitter(ex, FakeSleep()).place(reqs(4))
    assert ex.calls == [("c0", "c1", "c2", "c3"), ("c2", "c3")]
    assert outcomes(report) == [(f"c{i}", Outcome.ACCEPTED) for i in range(4)]
    assert [o.resolved for o in report.outcomes] == [True, True, False, False]
    assert_no_duplicates(ex)


def test_read_timeout_on_a_write_is_treated_as_unknown() -> None:
    ex = FakeExchange([("after", ReadTimedOut("read timed out"))])
    report = submitter(ex, FakeSleep()).place(reqs(2))
    assert len(ex.calls) == 1
    assert all(o.resolved for o in report.outcomes)


def test_mismatched_results_are_settled_by_lookup() -> None:
    def swapped(
        orders: Sequence[OrderRequest], process: Callable[..., list[PlaceResult]]
    ) -> object:
        return list(reversed(process(orders)))

    ex = FakeExchange([swapped])
    report = submitter(ex, FakeSleep()).place(reqs(2))
    assert len(ex.calls) == 1
    assert outcomes(report) == [("c0", Outcome.ACCEPTED), ("c1", Outcome.ACCEPTED)]
    assert [o.ord_id for o in report.outcomes] == [ex.ord_ids["c0"], ex.ord_ids["c1"]]


def test_per_order_rejections_are_final_and_do_not_abort_the_batch() -> None:
    ex = FakeExchange(reject=lambda o: (10014, "price limit") if o.clOrdId == "c1" else None)
    report = submitter(ex, FakeSleep()).place(reqs())
    assert outcomes(report) == [
        ("c0", Outcome.ACCEPTED), ("c1", Outcome.REJECTED), ("c2", Outcome.ACCEPTED),
    ]  # fmt: skip
    rejected = report.outcomes[1]
    assert (rejected.code, rejected.msg) == (10014, "price limit")


def test_a_duplicate_answer_is_resolved_by_lookup() -> None:
    ex = FakeExchange()
    ex.place_orders(reqs(1))  # the exchange already has c0
    report = submitter(ex, FakeSleep()).place(reqs(2))
    assert outcomes(report) == [("c0", Outcome.ACCEPTED), ("c1", Outcome.ACCEPTED)]
    assert report.outcomes[0].resolved
    assert report.outcomes[0].ord_id == ex.ord_ids["c0"]


def test_whole_request_rejected_settles_every_order_rejected() -> None:
    ex = FakeExchange([ExchangeRejected(10016, "batch too large")])
    report = submitter(ex, FakeSleep()).place(reqs(2))
    assert [(o.outcome, o.code) for o in report.outcomes] == [(Outcome.REJECTED, 10016)] * 2


def test_a_failed_lookup_leaves_the_order_unsettled_and_unsent() -> None:
    ex = FakeExchange(
        [OutcomeUnknown("timeout")], lookup_errors=[ReadTimedOut("lookup timed out")] * 10
    )
    report = submitter(ex, FakeSleep()).place(reqs(1))
    assert report.outcomes == ()
    assert report.unsettled == ("c0",)
    assert len(ex.calls) == 1


def test_orders_with_an_unknown_fate_are_never_settled_failed_by_exhaustion() -> None:
    # unknown (not processed) → lookup: missing → re-send hits 5xx until exhausted
    ex = FakeExchange([OutcomeUnknown("timeout")] + [ServerUnavailable("503")] * 10)
    report = submitter(ex, FakeSleep()).place(reqs(1))
    assert report.outcomes == ()
    assert report.unsettled == ("c0",), "reconcile decides after the grace period"


def test_resend_rounds_are_bounded() -> None:
    ex = FakeExchange([OutcomeUnknown("timeout")] * 10)
    report = submitter(ex, FakeSleep(), policy=RetryPolicy(max_resend_rounds=2)).place(reqs(1))
    assert len(ex.calls) == 3
    assert report.unsettled == ("c0",)


def test_rate_limiter_spaces_request_starts() -> None:
    now = [0.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    limiter = RateLimiter(5.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(4):
        limiter.acquire()
    assert sleeps == pytest.approx([0.2, 0.2, 0.2])


def test_a_request_refused_before_it_left_fails_its_orders_without_retry() -> None:
    ex = FakeExchange([RequestValidationError("limit must be 1..100")])
    report = submitter(ex, FakeSleep()).place(reqs(2))
    assert [o.outcome for o in report.outcomes] == [Outcome.FAILED, Outcome.FAILED]
    assert len(ex.calls) == 1
