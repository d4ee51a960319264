"""The four callers that retry exchange calls wait the same for the same answer (issue 16: "four
retry policies that disagree"): the snapshot reads, a batch's submission, reconcile's lookups and
the candle download. Before botkit.retry, a 429 asking for 45 s was waited 30 s by the reads,
45 s by submission, 0.2 s by reconcile and 45 s by the download; one asking for an hour was
waited 30 s, 60 s, 0.2 s and an hour; an expired timestamp was retried at once by two and after
a backoff by the other two. Each caller keeps its own first backoff (the last rows)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.backtest.fetch import fetch_candles
from botkit.errors import ConnectFailed, RateLimited, TimestampExpired
from botkit.exchange.models import Candle, Instrument, OrderRequest, OrderSide, OrderType
from botkit.journal import Journal, NewOrder
from botkit.pipeline import build_plan
from botkit.retry import MAX_RETRY_AFTER
from botkit.runner.orders import RetryPolicy, Submitter, reconcile
from botkit.runner.reader import SnapshotReader
from tests.pipeline.fakes import FakeExchange
from tests.pipeline.helpers import SYMBOL, FakeSleep, ManualClock, intent, snapshot
from tests.runner.conftest import ONE_ORDER, Rig, make_rig

M = 60_000
T0 = 1_704_067_200_000


class FailingReads:
    """An exchange whose instrument read fails with each scripted error, then answers."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures

    def instruments(self, symbol: str | None = None) -> list[Instrument]:
        if self.failures:
            raise self.failures.pop(0)
        return []


class FailingCandles:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures

    def candles(
        self,
        symbol: str,
        interval: str,
        *,
        start: int | None = None,
        end: int | None = None,
        limit: int | None = None,
    ) -> list[Candle]:
        if self.failures:
            raise self.failures.pop(0)
        return []


def reads(failure: Exception, tmp_path: Path) -> list[float]:
    sleep = FakeSleep()
    SnapshotReader(FailingReads([failure]), sleep=sleep).instruments(0)  # type: ignore[arg-type]
    return sleep.calls


def submission(failure: Exception, tmp_path: Path) -> list[float]:
    sleep = FakeSleep()
    order = OrderRequest(symbol=SYMBOL, side=OrderSide.BUY, type=OrderType.LIMIT, sz=Decimal(1),
                         px=Decimal(100), clOrdId="c0")  # fmt: skip
    submitter = Submitter(FakeExchange([failure]), sleep=sleep, policy=RetryPolicy(jitter=0.0))
    report = submitter.place([order])
    assert report.outcomes[0].ord_id
    return sleep.calls


def reconciling(failure: Exception, tmp_path: Path) -> list[float]:
    sleep = FakeSleep()
    with Journal(tmp_path / "journal.sqlite", clock=ManualClock()) as journal:
        plan = build_plan([intent(0)], snapshot())
        journal.add_orders(None, [NewOrder(o.intent, o.request.px, o.request.sz, wire=o.wire())
                                  for o in plan.accepted], dry=False)  # fmt: skip
        journal.mark_sent(["s1-r1-0"])
        report = reconcile(journal, FakeExchange(lookup_errors=[failure]), sleep=sleep)
    assert len(report.settled) == 1
    return sleep.calls


def download(failure: Exception, tmp_path: Path) -> list[float]:
    sleep = FakeSleep()
    fetch_candles(FailingCandles([failure]), "S", M, T0, T0 + M, max_rate=0, sleep=sleep)
    return sleep.calls


CALLERS: dict[str, Callable[[Exception, Path], list[float]]] = {
    "reads": reads,
    "submission": submission,
    "reconcile": reconciling,
    "candle download": download,
}

ANSWERS: list[tuple[str, Callable[[], Exception], dict[str, float]]] = [
    ("429 asking 45 s", lambda: RateLimited("429", retry_after=45),
     dict.fromkeys(CALLERS, 45.0)),
    ("429 asking an hour", lambda: RateLimited("429", retry_after=3600),
     dict.fromkeys(CALLERS, MAX_RETRY_AFTER)),
    ("expired timestamp", lambda: TimestampExpired("expired"), dict.fromkeys(CALLERS, 0.0)),
    # each caller's own first backoff (deliberate: a download can wait longer)
    ("429 without Retry-After", lambda: RateLimited("429"),
     {"reads": 0.2, "submission": 0.2, "reconcile": 0.2, "candle download": 1.0}),
    ("connection refused", lambda: ConnectFailed("refused"),
     {"reads": 0.2, "submission": 0.2, "reconcile": 0.2, "candle download": 1.0}),
]  # fmt: skip


@pytest.mark.parametrize("caller", list(CALLERS))
@pytest.mark.parametrize(
    ("answer", "expected"), [(a[1], a[2]) for a in ANSWERS], ids=[a[0] for a in ANSWERS]
)
def test_every_caller_waits_what_the_answer_asks_up_to_the_one_cap(
    caller: str, answer: Callable[[], Exception], expected: dict[str, float], tmp_path: Path
) -> None:
    assert CALLERS[caller](answer(), tmp_path) == [expected[caller]]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path)
    r.write("one.yaml", ONE_ORDER)
    yield r
    r.client.close()
    r.journal.close()


def test_a_cycle_on_the_simulator_waits_out_a_45_s_retry_after_and_goes_on(rig: Rig) -> None:
    sleeps: list[float] = []
    rig.runner.reader = SnapshotReader(rig.client, sleep=sleeps.append)
    rig.client.resync_clock()
    rig.sim.faults.add(
        "rate_limit", method="GET", path="/v3/market/tickers", times=1, retry_after=45
    )
    report = rig.runner.run_cycle()
    assert report.ok, report.error
    assert sleeps == [45.0]  # was 30: the reads capped Retry-After lower than submission
