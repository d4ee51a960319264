"""The price band is re-read before every send of a batch, re-sends after a 429 included: an
order the band has moved away from is refused locally with the reason, the others go, and a
10014 the exchange still answers is journaled with its bounds."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.errors import RateLimited
from botkit.exchange.models import LimitPrice
from botkit.journal import Journal, Outcome
from botkit.pipeline import Plan, build_plan
from tests.pipeline.fakes import FakeExchange
from tests.pipeline.helpers import SYMBOL, D, ManualClock, intent, snapshot
from tests.pipeline.test_execute import executor


class MovingBand(FakeExchange):
    """Each ``limitPrice`` read answers the next band of ``highs`` (the last one repeats)."""

    def __init__(self, highs: list[str], *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.highs = [D(h) for h in highs]
        self.band_reads = 0

    def limit_price(self, symbol: str) -> LimitPrice:
        high = self.highs[min(self.band_reads, len(self.highs) - 1)]
        self.band_reads += 1
        return LimitPrice(symbol=symbol, buyLmt=high, sellLmt=D(90))


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.sqlite", clock=ManualClock()) as j:
        yield j


def plan_near_the_top(margin: str = "0.001") -> Plan:
    return build_plan(
        [intent(0, px="104.8"), intent(1, px="100")],
        snapshot(mark=None, limit_prices={SYMBOL: LimitPrice(symbol=SYMBOL, buyLmt=D(105))}),
        band_margin=Decimal(margin),
    )


def test_a_batch_re_sent_after_a_429_is_re_checked_against_the_band_read_then(
    journal: Journal,
) -> None:
    plan = plan_near_the_top()
    assert len(plan.accepted) == 2  # 104.8 is inside 105 × (1 − 10 bps) = 104.895
    ex = MovingBand(["105", "104.5"], [RateLimited("429", retry_after=0)])
    report = executor(ex, journal).run(plan, cycle_id=journal.begin_cycle())
    assert ex.band_reads == 2  # before the first send and before the re-send
    first, second = (journal.order(f"s1-r1-{n}") for n in range(2))
    assert first is not None
    assert second is not None
    assert first.outcome is Outcome.REJECTED_LOCAL
    assert first.reasons[0].startswith("px_above_band: price 104.8 is above")
    assert "re-checked against the band read just before sending" in first.reasons[0]
    assert second.outcome is Outcome.ACCEPTED
    assert ex.received == {"s1-r1-1": 1}  # the moved-away order never left
    assert report.count(Outcome.ACCEPTED) == 1
    kinds = [e.kind for e in journal.events_after(0)]
    assert "band_recheck" in kinds


def test_the_recheck_can_be_turned_off(journal: Journal) -> None:
    ex = MovingBand(["105", "104.5"], [RateLimited("429", retry_after=0)])
    executor(ex, journal, band_recheck=False).run(plan_near_the_top(), cycle_id=1)
    assert ex.band_reads == 0
    assert sum(ex.received.values()) == 2


def test_a_10014_answer_is_journaled_with_the_exchanges_bounds(journal: Journal) -> None:
    msg = "Order price 104.8 is out of the price limit: the highest price is 104.7"
    ex = MovingBand(["105"], reject=lambda o: (10014, msg) if o.px == D("104.8") else None)
    executor(ex, journal).run(plan_near_the_top(), cycle_id=journal.begin_cycle())
    refused = journal.order("s1-r1-0")
    assert refused is not None
    assert (refused.outcome, refused.code, refused.msg) == (Outcome.REJECTED, 10014, msg)
    (event,) = [e for e in journal.events_after(0) if e.kind == "price_band"]
    assert msg in event.text
    assert "read again before the next batch" in event.text
