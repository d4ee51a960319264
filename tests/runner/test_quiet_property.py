"""Skipping quiet cycles changes nothing: random strategies over random candles, with and
without the skip (botkit.runner.quiet), give the same orders, fills, equity and journal rows.

The strategies are drawn from the language: conditions combine atoms of every input kind
(the book: position size and open orders; constants; the market: prices, the account, the
unrealized PnL; time: ``now``, ages, windows, rule activity, history; candles and indicators
on 1m and 5m; an expression that fails while flat) with ``and`` / ``or`` / ``not``; actions
place limit and market orders and ladders, close, cancel, or keep a ladder; gates are
cooldowns, max_fires, keep_open and disabled rules. Every journal row is compared — orders,
evaluations, events, guard trips, strategies — with its cycle named by the cycle's time (the
skip leaves the quiet cycles' own rows out, so their ids differ); every cycle the skipping run
journaled is one the other run journaled, and every cycle it left out holds no row at all.

``make test`` runs a handful of examples; ``HYPOTHESIS_PROFILE=reliability`` thirty times more.
"""

from __future__ import annotations

import random
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from botkit.app.backtest import backtest_journal, execute
from botkit.backtest.setup import BacktestOptions, prepare
from botkit.clock import ManualClock
from tests.fuzz.profiles import FUZZ, examples

T0 = 1_704_067_200_000
MINUTE = 60_000

BOOK = [
    "position.qty == 0",
    "position.qty != 0",
    "position.qty > 0",
    "position.qty < 0",
    "position.size >= 2",
    "position.is_open",
    "not position.is_long",
    "strategy.open_orders == 0",
    "strategy.open_buys > 0",
    "strategy.open_sells == 0",
    "rule.open_orders == 0",
    "position.openAvgPx > price.mark",
    "positions.count == 0",
    "position.availQty > 0",
    "position.pnl >= 0",
    "position.fee > 0",
]
CONSTANT = ["instrument.tSz > 0", "instrument.lotSz > 1", "true", "false"]
MARKET = [
    "price.mark < price.high_24h * 0.999",
    "price.mark > price.low_24h * 1.001",
    "account.availMgn > 9990",
    "position.upl > 0",
    "position.upl < 0",
    "account.upl < 0",
    "price.bid > 0",
    # conditions false for a price, checked again against each new mark / last price alone
    "price.mark < position.openAvgPx - 2 * atr('1m', 3)",
    "price.last > position.openAvgPx + 5",
    "price.mark > 60010 or price.last < 59990",
    "price.mark < sma(close('5m'), 2) - 3 and strategy.open_orders == 0",
    # account and position figures the skip reads again at each cycle (deps.RECHECKED)
    "position.upl > position.im * 0.01",
    "position.upl < -position.im * 0.02",
    "account.availMgn > 9995 and price.mark < price.high_24h * 0.9995",
    "price.buy_limit > price.mark * 1.01",
    "positions.long.upl >= 0 or account.eq < 9999",
]
TIME = [
    "now % 300000 < 120000",
    "position.age > 180000",
    "rule.fires('10m') < 2",
    "rule.last_fire_ago > 120000",
    "history.fills.count('30m') < 3",
    "strategy.oldest_open_ago > 180000",
]
CANDLES = [
    "close('1m') > open('1m')",
    "sma(close('1m'), 3) < price.mark",
    "rsi(close('1m'), 5) < 50",
    "close('5m') > sma(close('5m'), 2)",
    "crosses_above(close('1m'), sma(close('1m'), 4))",
    "prev(close('5m'), 1) < close('5m')",
    "high('1m') - low('1m') > 5",
]
FAILING = ["1 / position.qty > 0"]  # division by zero while flat: an error status

atoms = st.sampled_from(BOOK + CONSTANT + MARKET + TIME + CANDLES + FAILING)
anything = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"
        ),
        inner.map(lambda c: f"not ({c})"),
    ),
    max_leaves=4,
)
moving = st.sampled_from(MARKET + TIME + CANDLES + FAILING)
gated = st.tuples(
    st.sampled_from(BOOK), st.sampled_from(["and", "or"]), st.one_of(moving, moving, anything)
).map(lambda t: f"{t[0]} {t[1]} ({t[2]})")
conditions = st.one_of(gated, gated, gated, anything)
"""Conditions, mostly a book atom and a moving part (as most strategies gate on the position
and decide on the market)."""

ACTIONS = [
    "place: {order: {side: BUY, px: price.mark * 0.999, sz: 1}}",
    "place: {order: {side: SELL, px: price.mark * 1.001, sz: 1}}",
    "place: {order: {side: BUY, type: MARKET, sz: 1}}",
    "place: {order: {side: SELL, type: MARKET, sz: 1}}",
    "place: {ladder: {side: BUY, count: 3, from_px: price.mark * 0.999,"
    " step_px: price.mark * 0.001, sz: 1}}",
    "close: {}",
    "cancel: {}",
    "keep: {ladder: {side: BUY, count: 2, from_px: price.mark * 0.998,"
    " step_px: price.mark * 0.001, sz: 1}, tolerance: 10 bps}",
    # kept ladders the skip checks again at each cycle (runner.quiet.KeepCheck): a rung that
    # drifts past its tolerance once min_rest is over, refills, a replacement budget
    "keep: {ladder: {side: BUY, count: 3, from_px: price.mark * 0.999,"
    " step_px: price.mark * 0.001, sz: 1}, tolerance: 20 bps, min_rest: 2m}",
    "keep: {ladder: {side: SELL, count: 2, from_px: price.mark * 1.001,"
    " step_px: price.mark * 0.0005, sz: 1}, tolerance: 5 bps, refill: after 3m,"
    " max_replacements: 1}",
    "keep: {order: {side: BUY, px: price.high_24h * 0.997, sz: 1}, tolerance: 2 ticks,"
    " refill: never}",
]
GATES = ["", "cooldown: 3m", "max_fires: {count: 2, per: 10m}", "keep_open: true",
         "enabled: false"]  # fmt: skip


@st.composite
def rules(draw: st.DrawFn, index: int) -> str:
    action = draw(st.sampled_from(ACTIONS))
    gate = draw(st.sampled_from(GATES))
    if action.startswith(("keep", "close", "cancel")) and gate == "keep_open: true":
        gate = ""
    if action.startswith("keep") and gate.startswith(("cooldown", "max_fires")):
        gate = ""
    lines = [f"  - name: r{index}", f"    when: {draw(conditions)}", f"    {action}"]
    if gate:
        lines.append(f"    {gate}")
    return "\n".join(lines)


@st.composite
def strategy_files(draw: st.DrawFn, name: str) -> str:
    count = draw(st.integers(1, 2))
    every = draw(st.sampled_from(["1m", "1m", "2m"]))
    body = "\n".join(draw(rules(i)) for i in range(count))
    return (
        f"strategy: {name}\nsymbol: BTC_USDT_PERP\nevery: {every}\n"
        "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
        f"rules:\n{body}\n"
    )


def _candles(seed: int, count: int, swing: int) -> str:
    """A CSV of ``count`` minute candles: a random walk with wicks of up to ``swing`` bps."""
    rng = random.Random(seed)
    rows = ["time,open,high,low,close,volume"]
    price = Decimal(60000)
    for i in range(count):
        open_ = price
        close = (open_ * (1 + Decimal(rng.randint(-swing, swing)) / 10_000)).quantize(
            Decimal("0.1")
        )
        wick = Decimal(rng.randint(0, swing)) / 10_000
        high = (max(open_, close) * (1 + wick)).quantize(Decimal("0.1"))
        low = (min(open_, close) * (1 - wick)).quantize(Decimal("0.1"))
        rows.append(f"{T0 + i * MINUTE},{open_},{high},{low},{close},1")
        price = close
    return "\n".join(rows) + "\n"


def _journal_rows(path: Path) -> tuple[dict[str, list[Any]], dict[int, tuple[Any, ...]]]:
    """Every row of every table but ``cycles``, its ``cycle_id`` replaced by the cycle's start
    time; and the cycles by start time."""
    db = sqlite3.connect(path)
    try:
        starts = {r[0]: r[1] for r in db.execute("SELECT id, started_ms FROM cycles")}
        cycles = {r[1]: r[2:] for r in db.execute("SELECT * FROM cycles")}
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows: dict[str, list[Any]] = {}
        for table in sorted(tables):
            if table == "cycles" or table.startswith("sqlite_"):
                continue
            cursor = db.execute(f"SELECT * FROM {table} ORDER BY rowid")  # noqa: S608
            names = [d[0] for d in cursor.description]
            out = []
            for row in cursor:
                record = dict(zip(names, row, strict=True))
                if "cycle_id" in record:
                    record["cycle_id"] = starts.get(record["cycle_id"], record["cycle_id"])
                out.append(record)
            rows[table] = out
        return rows, cycles
    finally:
        db.close()


def _run(tmp: Path, data: Path, files: list[Path], skip: bool) -> tuple[Any, ...]:
    prepared = prepare(BacktestOptions(data=data, strategies=tuple(files)))
    clock = ManualClock(prepared.series.start_ms)
    path = tmp / f"journal-{skip}.sqlite"
    journal = backtest_journal(path, clock)
    try:
        run = execute(prepared, journal=journal, clock=clock, skip_quiet=skip)
    finally:
        journal.close()
    rows, cycles = _journal_rows(path)
    return run, rows, cycles


def _same_with_and_without_the_skip(
    tmp: Path, texts: list[str], seed: int, count: int, swing: int
) -> None:
    data = tmp / "candles.csv"
    data.write_text(_candles(seed, count, swing))
    files = []
    for i, text in enumerate(texts):
        path = tmp / f"s{i}.yaml"
        path.write_text(text)
        files.append(path)
    plain, plain_rows, plain_cycles = _run(tmp, data, files, skip=False)
    quick, quick_rows, quick_cycles = _run(tmp, data, files, skip=True)
    event(f"cycles skipped: {'some' if len(quick_cycles) < len(plain_cycles) else 'none'}")

    a, b = plain.result, quick.result
    assert b.orders == a.orders
    assert b.fills == a.fills
    assert b.equity == a.equity
    assert b.final_positions == a.final_positions
    assert (b.realized_pnl, b.unrealized_pnl, b.fees) == (a.realized_pnl, a.unrealized_pnl, a.fees)
    assert (quick.cycles, quick.cancelled, quick.replaced) == (
        plain.cycles,
        plain.cancelled,
        plain.replaced,
    )
    assert quick.problems == plain.problems
    for table, rows in plain_rows.items():
        assert quick_rows[table] == rows, table
    for started, row in quick_cycles.items():  # each cycle it journaled, the other did alike
        assert plain_cycles[started] == row
    referenced = {r["cycle_id"] for rows in plain_rows.values() for r in rows if r.get("cycle_id")}
    assert not referenced - set(quick_cycles), "a skipped cycle journaled something"


@given(
    texts=st.tuples(strategy_files("alpha"), st.none() | strategy_files("beta")),
    seed=st.integers(0, 10_000),
    count=st.integers(40, 120),
    swing=st.sampled_from([10, 30, 80]),
)
@settings(FUZZ, max_examples=examples(12))
def test_skipping_quiet_cycles_changes_no_order_fill_equity_or_journal_row(
    texts: tuple[str, str | None], seed: int, count: int, swing: int, tmp_path_factory: Any
) -> None:
    tmp = tmp_path_factory.mktemp("quiet")
    _same_with_and_without_the_skip(tmp, [t for t in texts if t], seed, count, swing)


FLAT_TRUE = ["position.qty == 0", "strategy.open_orders == 0", "positions.count == 0"]
FLAT_FALSE = ["position.qty != 0", "position.is_open", "strategy.open_buys > 0"]
one_rule = st.one_of(
    st.tuples(st.sampled_from(FLAT_TRUE), st.just("and"), moving),
    st.tuples(st.sampled_from(FLAT_FALSE), st.just("or"), moving),
).map(lambda t: f"{t[0]} {t[1]} ({t[2]})")


@given(
    condition=one_rule,
    action=st.sampled_from(ACTIONS[:5]),
    seed=st.integers(0, 10_000),
    count=st.integers(30, 90),
    swing=st.sampled_from([10, 30, 80]),
)
@settings(FUZZ, max_examples=examples(12))
def test_one_rule_whose_moving_part_decides_while_flat_is_never_skipped_wrongly(
    condition: str, action: str, seed: int, count: int, swing: int, tmp_path_factory: Any
) -> None:
    """The common shape, one rule alone: a book gate that lets the moving part (a price, a
    time, a candle, a failing expression) decide while flat; so every kind of input is the one
    that must wake the rule up."""
    text = (
        "strategy: solo\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
        "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
        f"rules:\n  - name: r0\n    when: {condition}\n    {action}\n"
    )
    _same_with_and_without_the_skip(tmp_path_factory.mktemp("solo"), [text], seed, count, swing)


@given(
    seed=st.integers(0, 10_000),
    count=st.integers(60, 150),
    swing=st.sampled_from([10, 30, 80]),
    gap=st.sampled_from([5, 20, 60]),
    price=st.sampled_from(["price.mark", "price.last"]),
)
@settings(FUZZ, max_examples=examples(12))
def test_a_stop_under_the_entry_fires_on_the_same_candle_with_the_skip(
    seed: int, count: int, swing: int, gap: int, price: str, tmp_path_factory: Any
) -> None:
    """The ATR stop's shape: while a position is held the stop's condition is false for a
    price, and the skip checks it against each new price alone (``deps.Recheck``) instead of
    running the cycle; the stop must still fire on the candle it fires on without the skip."""
    text = (
        "strategy: stop\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
        "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
        "rules:\n"
        "  - name: enter\n    when: position.qty == 0\n"
        "    place:\n      order: {side: BUY, type: MARKET, sz: 1}\n    cooldown: 10m\n"
        f"  - name: stop\n    when: position.qty > 0 and {price} < position.openAvgPx - {gap}\n"
        "    close: {}\n"
    )
    _same_with_and_without_the_skip(tmp_path_factory.mktemp("stop"), [text], seed, count, swing)


DIP_LADDER = (
    "strategy: dip\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "margin: {{mode: CROSS, position_mode: ONE_WAY}}\ndefaults: {{time_in_force: GTC}}\n"
    "risk: {{max_orders_per_cycle: 20, max_position: 30}}\n"
    "rules:\n"
    "  - name: ladder-on-dip\n"
    "    when: position.qty == 0 and account.availMgn > 200"
    " and price.mark < price.high_24h * (1 - {dip})\n"
    "    keep:\n"
    "      ladder: {{side: BUY, count: {rungs}, from_px: price.mark * (1 - {first}),"
    " step_px: price.mark * 0.001, sz: 1}}\n"
    "      tolerance: {tolerance} bps\n"
    "{min_rest}"
)
EXITS = (
    "strategy: exits\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "rules:\n"
    "  - name: take-profit\n    when: position.qty != 0 and position.upl > position.im * {take}\n"
    "    close: {{}}\n"
    "  - name: stop-loss\n    when: position.qty != 0 and position.upl < -position.im * {stop}\n"
    "    close: {{}}\n"
    "  - name: tidy-up\n    when: position.qty == 0 and strategy.open_orders > 0\n"
    "    cancel: {{}}\n"
)


@given(
    seed=st.integers(0, 10_000),
    count=st.integers(60, 160),
    swing=st.sampled_from([10, 30, 80]),
    dip=st.sampled_from(["0", "0.0005", "0.002"]),
    rungs=st.integers(1, 4),
    tolerance=st.sampled_from([2, 5, 20]),
    min_rest=st.sampled_from(["", "      min_rest: 2m\n", "      min_rest: 5m\n"]),
    take=st.sampled_from(["0.01", "0.08"]),
    stop=st.sampled_from(["0.02", "0.2"]),
)
@settings(FUZZ, max_examples=examples(12))
def test_the_readme_pair_with_a_kept_ladder_and_exits_on_the_pnl_skips_exactly(
    seed: int,
    count: int,
    swing: int,
    dip: str,
    rungs: int,
    tolerance: int,
    min_rest: str,
    take: str,
    stop: str,
    tmp_path_factory: Any,
) -> None:
    """Scenario B's shape: a kept dip ladder (its rungs rest while flat; the skip checks at
    each cycle that its reconcile would keep every rung: ``runner.quiet.KeepCheck``) and exits
    on the unrealized PnL against the margin (rechecked figures): the same orders, fills,
    equity and journal rows with the skip as without it."""
    ladder = DIP_LADDER.format(
        dip=dip, first="0.001", rungs=rungs, tolerance=tolerance, min_rest=min_rest
    )
    exits = EXITS.format(take=take, stop=stop)
    _same_with_and_without_the_skip(
        tmp_path_factory.mktemp("pair"), [ladder, exits], seed, count, swing
    )


def test_a_resting_kept_ladder_is_skipped_until_a_rung_drifts_past_its_min_rest(
    tmp_path: Path,
) -> None:
    """The fast path is taken (cycles are skipped while the rungs rest within tolerance) and
    every replacement the plain run makes, the skipping run makes on the same candle: a check
    that ignored ``min_rest``, the tolerance or the fresh mark would miss or add one."""
    ladder = DIP_LADDER.format(
        dip="0", first="0.01", rungs=3, tolerance=20, min_rest="      min_rest: 3m\n"
    )
    data = tmp_path / "candles.csv"
    data.write_text(_candles(8, 120, 30))
    path = tmp_path / "dip.yaml"
    path.write_text(ladder)
    plain, plain_rows, plain_cycles = _run(tmp_path, data, [path], skip=False)
    quick, quick_rows, quick_cycles = _run(tmp_path, data, [path], skip=True)
    assert quick.result.orders == plain.result.orders
    assert quick.replaced == plain.replaced
    assert sum(plain.replaced.values()) > 0  # rungs drifted, and were replaced
    assert quick_rows == plain_rows
    assert len(quick_cycles) < len(plain_cycles) // 2  # the resting ladder is mostly skipped


def test_a_rule_counting_orders_wakes_when_a_reconcile_cancels_them(tmp_path: Path) -> None:
    """A cycle whose only change is a kept ladder cancelled (its condition turned false on the
    price) leaves every strategy quiet; a rule that counted the orders resting must still wake
    at the next cycle (its verdict waits for the orders, not only for fills): it fires on the
    candle after the cancels with the skip as without it."""
    text = (
        "strategy: count\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
        "risk: {max_orders_per_cycle: 10, max_position: 6}\n"
        "rules:\n"
        "  - name: ladder\n    when: price.mark < 60050\n"
        "    keep: {ladder: {side: BUY, count: 2, from_px: price.mark * 0.99,"
        " step_px: price.mark * 0.001, sz: 1}, tolerance: 20 bps}\n"
        "  - name: alone\n    when: strategy.open_orders == 0 and price.mark > 60050\n"
        "    place: {order: {side: BUY, px: price.mark * 0.98, sz: 1}}\n"
    )
    rows = ["time,open,high,low,close,volume"]
    for i in range(20):
        px = 60000 if i < 6 else 60100
        rows.append(f"{T0 + i * MINUTE},{px},{px},{px},{px},1")
    data = tmp_path / "candles.csv"
    data.write_text("\n".join(rows) + "\n")
    path = tmp_path / "count.yaml"
    path.write_text(text)
    plain, plain_rows, _ = _run(tmp_path, data, [path], skip=False)
    quick, quick_rows, quick_cycles = _run(tmp_path, data, [path], skip=True)
    fired = [o for o in plain.result.orders if o.rule == "alone"]
    assert len(fired) == 1  # the shape this test needs: it fires once, after the cancels
    assert quick.result.orders == plain.result.orders
    assert quick_rows == plain_rows
    assert len(quick_cycles) < 20  # and the quiet cycles around it are skipped


@pytest.mark.parametrize("condition", ["rule.fires('10m') == 0", "rule.fires('7m') < 2"])
def test_a_rule_counting_its_own_fires_is_skipped_until_the_oldest_leaves_the_window(
    tmp_path: Path, condition: str
) -> None:
    """A rule gated on its own fires is quiet between them (the count stands while it does not
    fire) and wakes when the oldest fire it counts leaves the window: the same orders and rows
    as without the skip, with fewer cycles run. Fails if the verdict waits for a fire only (the
    rule would never fire again), or if the rule's activity is not read for it (no skip)."""
    text = (
        "strategy: counted\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
        f"rules:\n  - name: r0\n    when: {condition}\n"
        "    place: {order: {side: BUY, type: MARKET, sz: 1}}\n"
    )
    data = tmp_path / "candles.csv"
    data.write_text(_candles(7, 60, 10))
    (tmp_path / "s0.yaml").write_text(text)
    plain, plain_rows, plain_cycles = _run(tmp_path, data, [tmp_path / "s0.yaml"], skip=False)
    quick, quick_rows, quick_cycles = _run(tmp_path, data, [tmp_path / "s0.yaml"], skip=True)
    assert len(plain.result.fills) >= 5  # it fires again as fires leave the window
    assert len(quick_cycles) < len(plain_cycles) * 3 // 4  # and is skipped in between
    assert quick.result.orders == plain.result.orders
    assert quick.result.fills == plain.result.fills
    assert quick.result.equity == plain.result.equity
    assert quick_rows == plain_rows
