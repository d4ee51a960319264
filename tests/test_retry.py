"""botkit.retry, the one retry vocabulary: exact wait sequences with a fake sleep and a seeded
jitter, the one Retry-After cap, the stops, the fast first try, and the injected sleep that a
stop request ends."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest
import tenacity
from tenacity import RetryCallState
from tenacity.wait import wait_base

import botkit.retry
from botkit.clock import Stop
from botkit.errors import (
    ConnectFailed,
    ExchangeRejected,
    RateLimited,
    ServerUnavailable,
    StopRequested,
    TimestampExpired,
)
from botkit.retry import MAX_RETRY_AFTER, Retry, backoff, tries, wait_answer


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def scripted(*answers: BaseException | str) -> tuple[Callable[[], str], list[int]]:
    """A call failing with each exception of ``answers`` in turn, then returning the string."""
    script = list(answers)
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        step = script.pop(0) if script else "ok"
        if isinstance(step, BaseException):
            raise step
        return step

    return call, calls


def waits(policy: Retry, *failures: BaseException) -> list[float]:
    """The waits ``policy`` sleeps through ``failures`` (each try fails with the next)."""
    sleeps = Sleeps()
    call, _ = scripted(*failures)
    Retry(policy.retry_on, tries(len(failures) + 1), policy.wait, sleeps).call(call)
    return sleeps.calls


def refused(n: int) -> list[BaseException]:
    return [ConnectFailed("refused") for _ in range(n)]


def exp_jitter(seed: int, base_delays: list[float], jitter: float) -> list[float]:
    rng = random.Random(seed)
    return [d * (1 + jitter * rng.random()) for d in base_delays]


BACKOFF = (ConnectFailed,)

WAIT_TABLE = [
    # (name, wait, failures, the exact waits)
    ("reads / lookups: 0.2 s doubling to 5 s", backoff(0.2, 5.0), refused(7),
     [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]),
    ("candle download: 1 s doubling to 30 s", backoff(1.0, 30.0), refused(6),
     [1.0, 2.0, 4.0, 8.0, 16.0, 30.0]),
    ("seeded jitter: each delay × (1 + 0.5 U)",
     backoff(0.2, 0.5, jitter=0.5, rng=random.Random(42)), refused(3),
     exp_jitter(42, [0.2, 0.4, 0.5], 0.5)),
    ("expired timestamp: again at once", wait_answer(backoff(0.2, 5.0)),
     [TimestampExpired("expired"), TimestampExpired("expired")], [0.0, 0.0]),
    ("429 with Retry-After: as asked", wait_answer(backoff(0.2, 5.0)),
     [RateLimited("429", retry_after=1.5), RateLimited("429", retry_after=45)], [1.5, 45.0]),
    ("429 with a Retry-After over the cap: the cap", wait_answer(backoff(0.2, 5.0)),
     [RateLimited("429", retry_after=3600), RateLimited("429", retry_after=60.5)],
     [MAX_RETRY_AFTER, MAX_RETRY_AFTER]),
    ("429 with a negative Retry-After: none", wait_answer(backoff(0.2, 5.0)),
     [RateLimited("429", retry_after=-3)], [0.0]),
    ("429 without Retry-After, 5xx: the fallback backoff", wait_answer(backoff(0.2, 5.0)),
     [RateLimited("429"), ServerUnavailable("503"), ConnectFailed("refused")],
     [0.2, 0.4, 0.8]),
    ("answers mixed: each wait from its own answer", wait_answer(backoff(0.2, 5.0)),
     [ConnectFailed("x"), RateLimited("429", retry_after=7), TimestampExpired("e"),
      ConnectFailed("x")],
     [0.2, 7.0, 0.0, 1.6]),
    ("the cap applies over jitter too",
     wait_answer(backoff(0.2, 5.0, jitter=0.5, rng=random.Random(1))),
     [RateLimited("429", retry_after=999)], [MAX_RETRY_AFTER]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("wait", "failures", "expected"),
    [row[1:] for row in WAIT_TABLE],
    ids=[row[0] for row in WAIT_TABLE],
)
def test_the_wait_sequences_are_exact(
    wait: wait_base, failures: list[BaseException], expected: list[float]
) -> None:
    policy = Retry(
        (ConnectFailed, RateLimited, ServerUnavailable, TimestampExpired), tries(1), wait
    )
    assert waits(policy, *failures) == pytest.approx(expected, rel=1e-12, abs=0)


def test_the_one_cap_is_a_minute() -> None:
    assert MAX_RETRY_AFTER == 60.0


@pytest.mark.parametrize(("n", "made"), [(1, 1), (3, 3), (0, 1), (-2, 1)])
def test_tries_counts_the_first_try_and_makes_at_least_one(n: int, made: int) -> None:
    call, calls = scripted(*refused(10))
    sleeps = Sleeps()
    with pytest.raises(ConnectFailed):
        Retry((ConnectFailed,), tries(n), backoff(0.2, 5.0), sleeps).call(call)
    assert len(calls) == made
    assert sleeps.calls == pytest.approx([0.2, 0.4, 0.8, 1.6][: made - 1])


def test_the_last_error_is_raised_as_is_when_the_tries_run_out() -> None:
    last = RateLimited("the last one")
    call, calls = scripted(RateLimited("first"), RateLimited("second"), last)
    with pytest.raises(RateLimited) as raised:
        Retry((RateLimited,), tries(3), backoff(0.2, 5.0), Sleeps()).call(call)
    assert raised.value is last
    assert len(calls) == 3


def test_an_error_not_retried_propagates_at_once() -> None:
    rejected = ExchangeRejected(400, "illegal parameter")
    call, calls = scripted(ConnectFailed("refused"), rejected)
    sleeps = Sleeps()
    with pytest.raises(ExchangeRejected) as raised:
        Retry((ConnectFailed,), tries(5), backoff(0.2, 5.0), sleeps).call(call)
    assert raised.value is rejected
    assert (len(calls), sleeps.calls) == (2, [0.2])
    first, first_calls = scripted(rejected)
    with pytest.raises(ExchangeRejected):
        Retry((ConnectFailed,), tries(5), backoff(0.2, 5.0), sleeps).call(first)
    assert len(first_calls) == 1


def test_the_first_try_is_bare_and_a_failed_one_is_tenacitys_attempt_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[int] = []
    real = tenacity.Retrying

    def counting(*args: object, **kwargs: object) -> object:
        built.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(botkit.retry, "Retrying", counting)
    seen: list[tuple[int, str]] = []

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        seen.append((state.attempt_number, str(exc)))

    policy = Retry((ConnectFailed,), tries(4), backoff(0.2, 5.0), Sleeps(), before_sleep)
    ok, ok_calls = scripted()
    assert policy.call(ok) == "ok"
    assert (len(ok_calls), built) == (1, []), "a call that succeeds at once builds no tenacity"
    failing, calls = scripted(ConnectFailed("one"), ConnectFailed("two"))
    assert policy.call(failing) == "ok"
    assert len(calls) == 3
    assert built == [1]
    assert seen == [(1, "one"), (2, "two")]


def test_the_arguments_reach_every_try() -> None:
    got: list[tuple[int, str]] = []

    def call(a: int, b: str) -> int:
        got.append((a, b))
        if len(got) < 3:
            raise ConnectFailed("refused")
        return a

    assert Retry((ConnectFailed,), tries(3), backoff(0.2, 5.0), Sleeps()).call(call, 7, "x") == 7
    assert got == [(7, "x")] * 3


def test_the_service_stop_ends_a_wait_and_the_retries() -> None:
    stop = Stop()
    stop.set()  # SIGTERM arrived while the first try was on the wire
    call, calls = scripted(RateLimited("429", retry_after=60), RateLimited("429"))
    policy = Retry((RateLimited,), tries(5), wait_answer(backoff(0.2, 5.0)), stop.sleep)
    with pytest.raises(StopRequested):
        policy.call(call)
    assert len(calls) == 1, "no try after the stop request"


def test_threads_sharing_a_jittered_wait_draw_the_seeded_sequence_once() -> None:
    """Concurrent batches share one policy: the draws are taken under a lock, so the sequence
    of waits handed out is the seeded one whatever the interleaving."""
    wait = backoff(1.0, 1.0, jitter=1.0, rng=random.Random(7))
    handed: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        sleeps = Sleeps()
        call, _ = scripted(*refused(25))
        Retry((ConnectFailed,), tries(26), wait, sleeps).call(call)
        with lock:
            handed.extend(sleeps.calls)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rng = random.Random(7)
    assert sorted(handed) == sorted(1.0 + rng.random() for _ in range(100))
