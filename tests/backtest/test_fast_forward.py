"""Passing quiet stretches at once (the replay's fast-forward) changes nothing.

Three runs of the same strategies over the same candles are compared: without the skip of
quiet cycles, with the skip one candle at a time, and with the fast-forward (every stretch
inside the runner's quiet envelope passed at once; ``MIN_STRETCH`` lowered so that short
stretches are passed too): orders, fills, the equity curve, positions, money, counters and
every journal row are equal (cycle ids named by the cycle's time). The price series the
simulator keeps (minute candles, the 24-hour window) is exercised by strategies that place
orders at prices read from it after a stretch, with a short ``candle_history_minutes`` so
that long stretches drop the minutes nobody can read any more.
"""

from __future__ import annotations

from decimal import Decimal
from importlib.resources import files
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import event, given, settings
from hypothesis import strategies as st

from botkit.app.backtest import backtest_journal, execute
from botkit.backtest import driver
from botkit.backtest.setup import BacktestOptions, prepare
from botkit.clock import ManualClock
from tests.fuzz.profiles import FUZZ, examples
from tests.runner.test_quiet_property import _candles, _journal_rows, strategy_files

T0 = 1_704_067_200_000
MINUTE = 60_000

_DEFAULT_SIM = (files("botkit.sim") / "default_sim.toml").read_text(encoding="utf-8")
SHORT_HISTORY = _DEFAULT_SIM.replace(
    "candle_history_minutes = 10080", "candle_history_minutes = 60"
)
assert SHORT_HISTORY != _DEFAULT_SIM


STEPPED: list[int] = []
"""The candles each stretch stepped through passed (``_Forward._step``), of every run."""


def _run(
    tmp: Path, data: Path, files: list[Path], sim: Path | None, *, skip: bool, forward: bool
) -> tuple[Any, ...]:
    prepared = prepare(BacktestOptions(data=data, strategies=tuple(files), sim_config=sim))
    clock = ManualClock(prepared.series.start_ms)
    path = tmp / f"journal-{skip}-{forward}.sqlite"
    journal = backtest_journal(path, clock)
    passed: list[int] = []
    real, real_step = driver._Forward.run, driver._Forward._step

    def counted(self: Any, start: int) -> int:
        done = real(self, start)
        passed.append(done)
        return done

    def stepped(self: Any, start: int, limit: int | None = None) -> int:
        done = real_step(self, start, limit)
        STEPPED.append(done)
        return done

    try:
        with (
            mock.patch.object(driver, "MIN_STRETCH", 1),
            mock.patch.object(driver._Forward, "run", counted),
            mock.patch.object(driver._Forward, "_step", stepped),
        ):
            run = execute(
                prepared, journal=journal, clock=clock, skip_quiet=skip, fast_forward=forward
            )
    finally:
        journal.close()
    rows, cycles = _journal_rows(path)
    return run, rows, cycles, sum(passed)


def _same_three_ways(
    tmp: Path, texts: list[str], csv: str, *, short_history: bool = False
) -> tuple[Any, Any, int]:
    data = tmp / "candles.csv"
    data.write_text(csv)
    sim = None
    if short_history:
        sim = tmp / "sim.toml"
        sim.write_text(SHORT_HISTORY)
    files = []
    for i, text in enumerate(texts):
        path = tmp / f"s{i}.yaml"
        path.write_text(text)
        files.append(path)
    plain, plain_rows, plain_cycles, _ = _run(tmp, data, files, sim, skip=False, forward=False)
    step, step_rows, step_cycles, _ = _run(tmp, data, files, sim, skip=True, forward=False)
    fast, fast_rows, fast_cycles, passed = _run(tmp, data, files, sim, skip=True, forward=True)
    for other, rows, cycles in ((step, step_rows, step_cycles), (fast, fast_rows, fast_cycles)):
        assert_same_runs((plain, plain_rows, plain_cycles), (other, rows, cycles))
    assert fast_cycles == step_cycles  # the same cycles run, one at a time or passed at once
    return plain, fast, passed


def assert_same_runs(first: tuple[Any, Any, Any], other: tuple[Any, Any, Any]) -> None:
    """Two runs (each the run, its journal's rows and its cycle rows, as ``_run`` gives them)
    made the same orders, fills, equity, positions, money, counters and journal rows (the
    second's cycle rows among the first's)."""
    (plain, plain_rows, plain_cycles), (run, rows, cycles) = first, other
    a, b = plain.result, run.result
    assert b.orders == a.orders
    assert b.fills == a.fills
    assert list(b.equity) == list(a.equity)
    assert b.final_positions == a.final_positions
    assert (b.realized_pnl, b.unrealized_pnl, b.fees) == (a.realized_pnl, a.unrealized_pnl, a.fees)
    assert (run.cycles, run.cancelled, run.replaced) == (
        plain.cycles,
        plain.cancelled,
        plain.replaced,
    )
    assert run.problems == plain.problems
    for table, table_rows in plain_rows.items():
        assert rows[table] == table_rows, table
    for started, row in cycles.items():
        assert plain_cycles[started] == row


@given(
    texts=st.tuples(strategy_files("alpha"), st.none() | strategy_files("beta")),
    seed=st.integers(0, 10_000),
    count=st.integers(40, 240),
    swing=st.sampled_from([10, 30, 80]),
)
@settings(FUZZ, max_examples=examples(12))
def test_passing_quiet_stretches_at_once_changes_no_order_fill_equity_or_journal_row(
    texts: tuple[str, str | None], seed: int, count: int, swing: int, tmp_path_factory: Any
) -> None:
    tmp = tmp_path_factory.mktemp("forward")
    STEPPED.clear()
    _, _, passed = _same_three_ways(tmp, [t for t in texts if t], _candles(seed, count, swing))
    event(f"candles passed at once: {'some' if passed > sum(STEPPED) else 'none'}")
    event(f"candles stepped through: {'some' if sum(STEPPED) else 'none'}")


def _flat_then(count: int, price: str, special: dict[int, tuple[str, str, str, str]]) -> str:
    """Minute candles flat at ``price`` but at the indexes of ``special`` (open, high, low,
    close)."""
    rows = ["time,open,high,low,close,volume"]
    for i in range(count):
        o, h, lo, c = special.get(i, (price, price, price, price))
        rows.append(f"{T0 + i * MINUTE},{o},{h},{lo},{c},1")
    return "\n".join(rows) + "\n"


RESTING_BUY = (
    "strategy: dip\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: bid\n    when: position.qty == 0 and strategy.open_orders == 0\n"
    "    place: {order: {side: BUY, px: 59000, sz: 1}}\n"
)


def test_an_order_resting_under_the_price_fills_on_the_candle_that_reaches_it(
    tmp_path: Path,
) -> None:
    """The order rests from the first cycle; 300 quiet candles later one candle's low is the
    order's price exactly: the stretch ends before it and the order fills on it (a band one
    tick too wide would pass that candle, which the simulator refuses)."""
    touch = 300
    csv = _flat_then(400, "60000.0", {touch: ("60000.0", "60000.0", "59000.0", "59500.0")})
    _, fast, passed = _same_three_ways(tmp_path, [RESTING_BUY], csv)
    # the low is the candle's third point
    assert [f.time_ms for f in fast.result.fills] == [T0 + touch * MINUTE + MINUTE // 2]
    # every candle but the first, the one reaching the order and the next (its cycle runs)
    assert passed == 400 - 3


HIGH_AFTER_A_DAY = (
    "strategy: day\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: enter\n    when: position.qty == 0\n"
    "    place: {order: {side: BUY, type: MARKET, sz: 1}}\n"
    "  - name: offer\n    when: position.qty > 0\n"
    "    place: {order: {side: SELL, px: price.mark * 1.03 + (price.high_24h - price.low_24h)"
    " / 10, sz: 1}}\n"
    "    max_fires: {count: 1, per: 2000m}\n"
)


def test_the_24h_high_and_low_read_after_a_long_stretch_are_the_plain_replays(
    tmp_path: Path,
) -> None:
    """A position is held and the offer's gate opens 2,000 minutes after its first fire: the
    stretch in between is passed at once (with 60 minutes of history kept, its first minutes
    are dropped) and the second offer is priced from the 24-hour high and low, which the
    spikes older than a day must not reach and the younger ones must."""
    spikes = {
        0: ("60000.0", "64000.0", "60000.0", "60000.0"),  # older than a day at the read
        540: ("60000.0", "60000.0", "57000.0", "60000.0"),  # just older than a day
        1000: ("60000.0", "61000.0", "59000.0", "60000.0"),  # inside the day
        1950: ("60000.0", "60500.0", "60000.0", "60000.0"),  # inside the 60 minutes kept
    }
    csv = _flat_then(3000, "60000.0", spikes)
    _, fast, passed = _same_three_ways(tmp_path, [HIGH_AFTER_A_DAY], csv, short_history=True)
    offers = [o.px for o in fast.result.orders if o.rule == "offer"]
    # 61,800 + (64,000 - 60,000) / 10 at first; then 61,800 + (61,000 - 59,000) / 10
    assert offers[:2] == [Decimal("62200.0"), Decimal("62000.0")]
    assert passed > 2500


CANDLE_CLOSE = (
    "strategy: bars\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: enter\n    when: position.qty == 0 and close('1h') >= open('1h')\n"
    "    place: {order: {side: BUY, type: MARKET, sz: 1}}\n"
    "    cooldown: 30m\n"
    "  - name: leave\n    when: position.qty > 0 and close('1h') < open('1h')\n"
    "    close: {}\n"
)


def test_an_interval_close_ends_a_stretch(tmp_path: Path) -> None:
    """Rules reading hourly candles are quiet until the next hour closes: each stretch ends
    there, and the exit decided on the falling hour is the plain replay's."""
    special = {i: ("60000.0", "60000.0", "59800.0", "59900.0") for i in range(130, 190)}
    csv = _flat_then(400, "60000.0", special)
    plain, fast, passed = _same_three_ways(tmp_path, [CANDLE_CLOSE], csv, short_history=True)
    assert [o.rule for o in fast.result.orders] == [o.rule for o in plain.result.orders]
    assert {o.rule for o in fast.result.orders} == {"enter", "leave"}
    assert passed > 300


TAKE_PROFIT = (
    "strategy: hold\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
    "rules:\n"
    "  - name: enter\n    when: position.qty == 0\n"
    "    place: {order: {side: BUY, type: MARKET, sz: 1}}\n"
    "    max_fires: {count: 2, per: 100000m}\n"
    "  - name: take\n    when: position.qty != 0 and position.upl > position.im * 0.05\n"
    "    close: {}\n"
)


def test_a_take_profit_rechecked_in_a_stepped_stretch_fires_on_the_plain_replays_candle(
    tmp_path: Path,
) -> None:
    """A position is held while the price climbs a tick a minute: the take profit on the PnL
    against the margin (rechecked at each close, so no stretch is passed at once) is stepped
    through candle by candle and fires at the candle where the plain replay's fires; the
    re-entry after it and its take profit too, every equity sample the plain one's."""
    special = {
        i: (f"{60000 + (i - 99) * 2}.0",) * 4 for i in range(100, 400)
    }  # a rise of 2 a minute: about 75 minutes to +0.25 %
    csv = _flat_then(500, "60000.0", special)
    STEPPED.clear()
    with mock.patch.object(driver, "BULK", False):  # the rechecks' closes not proven at once
        plain, fast, passed = _same_three_ways(tmp_path, [TAKE_PROFIT], csv)
    rules = [o.rule for o in plain.result.orders]
    assert rules == ["enter", "take", "enter", "take"]
    assert [o.rule for o in fast.result.orders] == rules
    # the candles in a position stepped through (their cycles skipped one by one), all but
    # those whose cycle acts and the ones right after them; once flat for good, at once
    assert sum(STEPPED) > 240
    assert passed > 480
