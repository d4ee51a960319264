"""The backtest reads candles from the replay with no look-ahead: a strategy due every minute
reading 15-minute candles sees, at each cycle, the last 15-minute candle that has closed —
never the one the replay is in the middle of, though the simulator already holds its first
minutes."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from botkit.app.backtest import make_runner
from botkit.backtest.bars import Bar
from botkit.backtest.path import candle_path
from botkit.backtest.setup import backtest_sim_config
from botkit.cli import main
from botkit.clock import ManualClock
from botkit.journal import Journal
from botkit.rules.loader import loads
from botkit.sim.config import load_sim_config
from botkit.sim.inprocess import make_sim
from botkit.sim.port import SimPort

T0 = 1_704_067_200_000
M = 60_000
SYMBOL = "BTC_USDT_PERP"
PEEK = """\
strategy: peek
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: read
    when: close('15m') > 0 and high('15m') > 0
    cancel: {}
"""


def close_of(minute: int) -> Decimal:
    return Decimal(60000 + 10 * minute)  # every minute closes higher: a peek would show


def test_a_cycle_sees_only_closed_15_minute_candles() -> None:
    config = backtest_sim_config(load_sim_config(None), symbol=SYMBOL, first_price=close_of(0))
    clock = ManualClock(T0)
    sim = make_sim(config, clock, auto_step=False)
    journal = Journal(":memory:", clock=clock.now_ms, synchronous="OFF")
    runner = make_runner(SimPort(sim.engine), journal, [loads(PEEK, "peek.yaml")])
    seen: list[tuple[int, str, str, str]] = []
    for minute in range(50):
        close = close_of(minute)
        bar = Bar(T0 + minute * M, close - 5, close + 3, close - 7, close, Decimal(1))
        for at, px in candle_path(bar, M):  # as the driver replays a candle
            clock.set(at)
            sim.engine.set_mark(SYMBOL, px)
        clock.set(T0 + (minute + 1) * M)  # the candle's close: the cycle
        (evaluation,) = runner.run_cycle().evaluations
        (result,) = evaluation.results
        values = dict(result.values)
        seen.append(
            (
                minute,
                result.status.value,
                str(values.get("close('15m')", "")),
                str(values.get("high('15m')", "")),
            )
        )
    for minute, status, close_read, high_read in seen:
        done = (minute + 1) // 15  # 15-minute candles closed by the cycle after this minute
        if done == 0:
            assert status == "warming_up", minute
            continue
        last = done * 15 - 1  # the last minute of the last closed 15-minute candle
        assert Decimal(close_read) == close_of(last), minute
        assert Decimal(high_read) == close_of(last) + 3, minute


def test_a_strategy_reading_another_symbol_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strategy = tmp_path / "eth-peek.yaml"
    strategy.write_text(PEEK.replace("close('15m') > 0", "close('1h', 'ETH_USDT_PERP') > 0"))
    data = Path(__file__).resolve().parents[2] / "data" / "btc-synth-7d.csv"
    assert main(["backtest", "--data", str(data), "--strategies", str(strategy)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "error: peek reads ETH_USDT_PERP as well as BTC_USDT_PERP: give each symbol its"
        " candles, --data BTC_USDT_PERP=FILE --data ETH_USDT_PERP=FILE (docs/backtest.md,"
        " Portfolio backtests)"
    )
    assert captured.out == ""
