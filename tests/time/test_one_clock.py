"""Issue 14 item 4: cooldowns and ``max_fires`` compared fire times journaled on the local clock
with the runner's "now" on the exchange clock: with the exchange an hour ahead, a ``cooldown: 1m``
rule fired every cycle. The journal now runs on the exchange clock, the one the runner decides
with, so a skew between the two clocks changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.time.support import service

STRATEGY = """\
    strategy: clocked
    symbol: BTC_USDT_PERP
    every: 10s
    rules:
      - name: cooled
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}
        cooldown: 1m
      - name: capped
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}
        max_fires: {count: 2, per: 5m}
"""

HOUR = 3_600_000


def _fires_over(tmp_path: Path, skew_ms: int, cycles: int) -> dict[str, list[int]]:
    """Run ``cycles`` cycles 10 s apart; the seconds (from the first) each rule fired at."""
    fired: dict[str, list[int]] = {"cooled": [], "capped": []}
    with service(tmp_path, STRATEGY, skew_ms=skew_ms) as svc:
        svc.client.resync_clock()
        runner = svc.parts.runner
        start = runner.now_ms()
        for _ in range(cycles):
            report = runner.run_cycle()
            assert report.cycle_id is not None, report
            for evaluation in report.evaluations:
                for result in evaluation.results:
                    if result.fired:
                        fired[result.rule].append((report.now_ms - start) // 1000)
            svc.clock.advance(10_000)
    return fired


@pytest.mark.parametrize("skew_ms", [0, 60_000, -60_000, HOUR, -HOUR])
def test_cooldown_and_max_fires_hold_whatever_the_exchange_clock_skew(
    tmp_path: Path, skew_ms: int
) -> None:
    fired = _fires_over(tmp_path, skew_ms, cycles=16)  # 150 s
    assert fired["cooled"] == [0, 60, 120]
    assert fired["capped"] == [0, 10]
