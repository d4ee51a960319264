"""The collector after a replay: the result, the figures and the report run with the heap
frozen (the run's objects out of the full collections' scans) and leave the collector as they
found it."""

from __future__ import annotations

import gc
from pathlib import Path

from botkit.backtest.driver import frozen_heap
from botkit.cli import main

_CSV = "time,open,high,low,close,volume\n" + "".join(
    f"{1_704_067_200_000 + i * 60_000},60000,60050,59950,60000,1\n" for i in range(30)
)
_LADDER = """\
strategy: buyer
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: buy
    when: position.qty == 0 and strategy.open_orders == 0
    place: {order: {side: BUY, type: LIMIT, px: 59960, sz: 1}}
"""


def _state() -> tuple[tuple[int, int, int], int, bool]:
    return gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()


def test_the_heap_is_frozen_inside_and_as_found_after() -> None:
    before = _state()
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == before[0]  # young objects collected as usual
    assert _state() == before


def test_a_heap_frozen_by_the_caller_stays_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with frozen_heap():
            pass
        assert gc.get_freeze_count() >= frozen > 0
    finally:
        gc.unfreeze()


def test_a_backtest_with_a_report_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    data = tmp_path / "candles.csv"
    data.write_text(_CSV, encoding="utf-8")
    strategy = tmp_path / "buyer.yaml"
    strategy.write_text(_LADDER, encoding="utf-8")
    before = _state()
    code = main(
        ["backtest", "--data", str(data), "--strategies", str(strategy),
         "--report", str(tmp_path / "report")]
    )  # fmt: skip
    assert code == 0
    assert (tmp_path / "report" / "report.html").exists()
    assert _state() == before
