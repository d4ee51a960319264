"""A verdict taken in a cycle that moved the book (placed, cancelled or filled an order) holds
for the book as the cycle left it when every book value its rules read is the same after the
cycle as before (``QuietCycles.observe``): the cycle right after a cycle that placed orders is
skipped when no rule reads what those orders moved, and runs when one does."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from botkit.app.backtest import make_runner
from botkit.backtest.setup import backtest_sim_config
from botkit.clock import ManualClock
from botkit.journal import Journal
from botkit.rules.loader import loads
from botkit.sim.config import load_sim_config
from botkit.sim.inprocess import make_sim
from botkit.sim.port import SimPort
from tests.runner.test_quiet_property import DIP_LADDER, EXITS, MINUTE, T0, _run


def _flat_candles(path: Path, count: int, px: int = 60000) -> Path:
    rows = ["time,open,high,low,close,volume"]
    rows += [f"{T0 + i * MINUTE},{px},{px},{px},{px},1" for i in range(count)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_cycle_after_a_kept_ladder_is_placed_is_skipped(tmp_path: Path) -> None:
    """The README pair on a flat market: the first cycle places the ladder (the exits read
    only their own orders and the position, which the rungs do not move); before, the second
    cycle ran because the book had moved; now only the first cycle runs, with the same orders
    and journal rows as without the skip."""
    ladder = DIP_LADDER.format(dip="-1", first="0.01", rungs=3, tolerance=20, min_rest="")
    exits = EXITS.format(take="0.08", stop="0.2")
    data = _flat_candles(tmp_path / "candles.csv", 30)
    files = []
    for name, text in (("dip", ladder), ("exits", exits)):
        files.append(tmp_path / f"{name}.yaml")
        files[-1].write_text(text)
    plain, plain_rows, plain_cycles = _run(tmp_path, data, files, skip=False)
    quick, quick_rows, quick_cycles = _run(tmp_path, data, files, skip=True)
    assert len([o for o in plain.result.orders if o.rule == "ladder-on-dip"]) == 3
    assert quick.result.orders == plain.result.orders
    assert quick_rows == plain_rows
    assert len(plain_cycles) == 30
    assert sorted(quick_cycles) == [min(plain_cycles)]  # before: the first two


def test_a_rule_reading_what_the_cycle_moved_wakes_at_the_next_cycle(tmp_path: Path) -> None:
    """A kept ladder places its rungs (its strategy stays quiet: the reconcile keeps them on a
    flat market); a rule of the same strategy read ``strategy.open_orders > 0`` as false
    before they rested. After the cycle the count is 2, so its verdict waits for the book as it
    was before the cycle: it runs at the next cycle and fires there, as without the skip (a
    verdict moved to the book after the cycle without comparing the values would never wake
    it: nothing moves the book again)."""
    text = (
        "strategy: both\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
        "rules:\n"
        "  - name: ladder\n    when: true\n"
        "    keep: {ladder: {side: BUY, count: 2, from_px: price.mark * 0.99,"
        " step_px: price.mark * 0.001, sz: 1}, tolerance: 20 bps}\n"
        "  - name: see\n    when: strategy.open_orders > 0\n"
        "    place: {order: {side: BUY, px: price.mark * 0.97, sz: 1}}\n"
        "    max_fires: {count: 1, per: 1d}\n"
    )
    data = _flat_candles(tmp_path / "candles.csv", 10)
    path = tmp_path / "both.yaml"
    path.write_text(text)
    plain, plain_rows, plain_cycles = _run(tmp_path, data, [path], skip=False)
    quick, quick_rows, quick_cycles = _run(tmp_path, data, [path], skip=True)
    seen = [o for o in plain.result.orders if o.rule == "see"]
    assert len(seen) == 1  # the shape this test needs: it fires at the second cycle
    assert quick.result.orders == plain.result.orders
    assert quick_rows == plain_rows
    assert sorted(plain_cycles)[1] in quick_cycles


def test_run_cycle_unless_quiet_gives_none_exactly_for_the_cycles_run_cycle_skips() -> None:
    """The replay's entry (no report made for a quiet minute) skips the same cycles as
    :meth:`Runner.run_cycle` and runs the others alike: over the same minutes, None where
    ``run_cycle`` reports a quiet cycle, the same evaluations and orders elsewhere."""
    ladder = DIP_LADDER.format(dip="-1", first="0.001", rungs=2, tolerance=20, min_rest="")
    exits = EXITS.format(take="0.02", stop="0.05")
    seen: list[list[tuple[object, ...]]] = []
    for entry in ("run_cycle", "run_cycle_unless_quiet"):
        config = backtest_sim_config(
            load_sim_config(None), symbol="BTC_USDT_PERP", first_price=Decimal(60000)
        )
        clock = ManualClock(T0)
        sim = make_sim(config, clock, auto_step=False)
        journal = Journal(":memory:", clock=clock.now_ms, synchronous="OFF")
        strategies = [loads(ladder, "dip.yaml"), loads(exits, "exits.yaml")]
        runner = make_runner(SimPort(sim.engine), journal, strategies, skip_quiet=True)
        steps: list[tuple[object, ...]] = []
        for minute in range(60):
            px = Decimal(60000 - (90 if 20 <= minute < 40 else 0) + minute % 3)
            clock.set(T0 + minute * MINUTE + 30_000)
            sim.engine.set_mark("BTC_USDT_PERP", px)
            clock.set(T0 + (minute + 1) * MINUTE)
            report = getattr(runner, entry)()
            if report is None or report.quiet:
                steps.append(("quiet",))
            else:
                sent = report.execution.outcomes if report.execution is not None else ()
                steps.append((report.evaluations, tuple(o.cl_ord_id for o in sent)))
        journal.close()
        seen.append(steps)
    assert seen[1] == seen[0]
    assert ("quiet",) in seen[0]
    assert any(s != ("quiet",) for s in seen[0][1:])
