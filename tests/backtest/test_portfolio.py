"""Portfolio backtests (``--data SYMBOL=FILE`` per symbol): several symbols replayed in
lockstep on one simulated account.

- the account is the sum of its parts: each symbol's part of a portfolio run equals that symbol
  run alone (every figure, every trade) when the margin does not bind, and the account's money
  figures are the parts' sums (the simulator books no fee the symbols share: every fee is a
  fill's);
- the symbols share one account's margin: a strategy on ETH is refused margin that BTC holds;
- a rule reading another symbol's price or candles sees that symbol's file up to the candle
  just closed, never later;
- a gap in one file holds that symbol's mark; files cut to the period they share;
- bad inputs are one line and exit 2.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from botkit.app.backtest import execute
from botkit.backtest.portfolio import PortfolioRun
from botkit.backtest.setup import BacktestOptions, prepare
from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
BTC_DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
EXITS = ROOT / "strategies" / "btc-exits.yaml"
FOLLOWS = ROOT / "strategies" / "portfolio" / "eth-follows-btc.yaml"
ONE_DAY = ["--end", "2024-01-02T00:00:00Z"]
T0 = 1_704_067_200_000
M = 60_000
MONEY = ("fees", "realized_pnl", "unrealized_pnl", "net_pnl", "traded_notional")
COUNTS = ("fills", "orders_total", "orders_placed", "orders_filled", "trades")

# the shipped ETH example with a fixed size: what it does cannot depend on BTC's margin
ETH_FIXED = (
    (ROOT / "strategies" / "eth-margin-sized.yaml")
    .read_text()
    .replace(
        "sz: floor(account.availMgn * params.margin_share * params.leverage / "
        "(price.mark * instrument.ctVal), instrument.lotSz)",
        "sz: 10",
    )
)

# BTC: 300 contracts of 0.001 BTC at 60000 = 18,000 USDT at 20x: 900 of a 1,000 USDT margin
HOLD_BTC = """\
strategy: hold-btc
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: buy
    when: position.qty == 0
    place: {order: {side: BUY, type: MARKET, sz: 300}}
    max_fires: {count: 1, per: 1d}
"""
# ETH, once its price is up (the 6th candle): 100 contracts of 0.01 ETH at 3,100 = 155 margin
LATE_ETH = """\
strategy: late-eth
symbol: ETH_USDT_PERP
every: 1m
rules:
  - name: buy
    when: position.qty == 0 and price.mark > 3050
    place: {order: {side: BUY, type: MARKET, sz: 100}}
    max_fires: {count: 1, per: 1d}
"""


def synth_eth(path: Path, candles: int = 1440, seed: int = 8) -> Path:
    """An ETH walk of its own (seed 7 is the shipped BTC week's: the same walk, scaled)."""
    argv = ["data", "synth", "--symbol", "ETH_USDT_PERP", "--start", "2024-01-01",
            "--candles", str(candles), "--seed", str(seed), "--out", str(path)]  # fmt: skip
    assert main(argv) == 0
    return path


def write_csv(path: Path, closes: list[Decimal], *, start_ms: int = T0, step_ms: int = M,
              skip: frozenset[int] = frozenset()) -> Path:  # fmt: skip
    """Candles whose open is the previous close, with a one-unit wick each side."""
    lines = ["time,open,high,low,close,volume"]
    prev = closes[0]
    for i, close in enumerate(closes):
        if i not in skip:
            lo, hi = min(prev, close) - 1, max(prev, close) + 1
            lines.append(f"{start_ms + i * step_ms},{prev},{hi},{lo},{close},1")
        prev = close
    path.write_text("\n".join(lines) + "\n")
    return path


def strategy(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> str:
    code = main(["backtest", *map(str, argv)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def summary(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "summary.json").read_text())
    return data


def trade_rows(folder: Path) -> list[dict[str, str]]:
    with (folder / "trades.csv").open() as f:
        return [{k: v for k, v in row.items() if k != "trade"} for row in csv.DictReader(f)]


def test_the_account_is_the_sum_of_its_symbols_each_run_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eth_data = synth_eth(tmp_path / "eth.csv")
    eth = strategy(tmp_path, "eth-fixed", ETH_FIXED)
    run(capsys, "--data", BTC_DATA, "--strategies", LADDER, EXITS, *ONE_DAY,
        "--report", tmp_path / "btc")  # fmt: skip
    run(capsys, "--data", eth_data, "--strategies", eth, *ONE_DAY, "--report", tmp_path / "eth")
    pair = ["--data", f"BTC_USDT_PERP={BTC_DATA}", "--data", f"ETH_USDT_PERP={eth_data}"]
    out = run(capsys, *pair, "--strategies", LADDER, EXITS, eth, *ONE_DAY,
              "--report", tmp_path / "both")  # fmt: skip
    alone = {"BTC_USDT_PERP": summary(tmp_path / "btc"), "ETH_USDT_PERP": summary(tmp_path / "eth")}
    both = summary(tmp_path / "both")
    assert both["symbol"] == "BTC_USDT_PERP+ETH_USDT_PERP"
    for symbol, single in alone.items():
        assert single["figures"]["fills"] > 0, symbol  # the test means something
        part = summary(tmp_path / "both" / symbol)
        assert both["symbols"][symbol]["figures"] == single["figures"], symbol
        assert part["figures"] == single["figures"], symbol
        assert part["attribution"] == single["attribution"], symbol
        assert trade_rows(tmp_path / "both" / symbol) == trade_rows(tmp_path / symbol[:3].lower())
    account = both["figures"]
    for name in MONEY:
        parts = sum(Decimal(s["figures"][name]) for s in alone.values())
        assert Decimal(account[name]) == parts, name
    for name in COUNTS:
        assert account[name] == sum(s["figures"][name] for s in alone.values()), name
    start = Decimal(account["starting_balance"])
    assert Decimal(account["final_equity"]) == start + Decimal(account["net_pnl"])
    rows = trade_rows(tmp_path / "both")
    assert {r["symbol"] for r in rows} == {"BTC_USDT_PERP", "ETH_USDT_PERP"}
    assert len(rows) == sum(len(trade_rows(tmp_path / s)) for s in ("btc", "eth"))
    assert "Σ symbols" in out
    assert "= account" in out


def test_the_symbols_equity_curves_add_up_to_the_accounts_at_every_candle(tmp_path: Path) -> None:
    eth_data = synth_eth(tmp_path / "eth.csv")
    eth = strategy(tmp_path, "eth-fixed", ETH_FIXED)
    legs = (("BTC_USDT_PERP", BTC_DATA), ("ETH_USDT_PERP", eth_data))
    options = BacktestOptions(data=BTC_DATA, legs=legs, strategies=(LADDER, EXITS, eth),
                              end_ms=T0 + 1440 * M)  # fmt: skip
    run = execute(prepare(options))
    assert isinstance(run, PortfolioRun)
    start = run.result.starting_balance
    curves = [part.equity for part in run.parts.values()]
    assert len(run.result.equity) == 1440
    assert all(len(curve) == 1440 for curve in curves)
    moved = 0
    for i, point in enumerate(run.result.equity):
        assert point.equity == start + sum(c[i].equity - start for c in curves), i
        assert point.exposure == sum(c[i].exposure for c in curves), i
        moved += all(c[i].exposure for c in curves)
    assert moved > 0  # both symbols held positions at once


def test_a_strategy_on_eth_is_refused_the_margin_btc_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    btc = write_csv(tmp_path / "btc.csv", [Decimal(60000)] * 30)
    eth = write_csv(tmp_path / "eth.csv", [Decimal(3000)] * 5 + [Decimal(3100)] * 25)
    hold_btc = strategy(tmp_path, "hold-btc", HOLD_BTC)
    late_eth = strategy(tmp_path, "late-eth", LATE_ETH)
    common = ["--balance", "1000", "--report"]
    run(capsys, "--data", eth, "--strategies", late_eth, *common, tmp_path / "alone")
    run(capsys, "--data", f"BTC_USDT_PERP={btc}", "--data", f"ETH_USDT_PERP={eth}",
        "--strategies", hold_btc, late_eth, *common, tmp_path / "both")  # fmt: skip
    assert summary(tmp_path / "alone")["figures"]["orders_filled"] == 1
    both = summary(tmp_path / "both")["symbols"]
    assert both["BTC_USDT_PERP"]["figures"]["orders_filled"] == 1
    eth_part = both["ETH_USDT_PERP"]["figures"]
    assert eth_part["orders_filled"] == 0
    assert eth_part["orders_refused"] + eth_part["orders_rejected"] >= 1


def test_a_portfolio_sweep_ranks_its_variants_by_the_account(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    btc = write_csv(tmp_path / "btc.csv", [Decimal(60000)] * 20)
    eth = write_csv(tmp_path / "eth.csv", [Decimal(3000)] * 5 + [Decimal(3100)] * 15)
    hold_btc = strategy(tmp_path, "hold-btc", HOLD_BTC)
    late_eth = strategy(tmp_path, "late-eth", LATE_ETH.replace("sz: 100", "sz: params.size")
                        .replace("every: 1m", "every: 1m\nparams: {size: 100}"))  # fmt: skip
    out = run(capsys, "--data", f"BTC_USDT_PERP={btc}", "--data", f"ETH_USDT_PERP={eth}",
              "--strategies", hold_btc, late_eth, "--balance", "1000",
              "--sweep", "size=20,100", "--jobs", "1", "--rank", "fills")  # fmt: skip
    rows = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    # 20 contracts fit in the margin BTC leaves (31 USDT of about 89), 100 (155 USDT) do not
    assert [(r[1], r[2]) for r in rows] == [("20", "2"), ("100", "1")], out


def test_a_rule_reads_another_symbols_candles_and_price_up_to_the_candle_just_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # BTC closes higher every minute: a read of a candle not yet closed would show
    btc = write_csv(tmp_path / "btc.csv", [Decimal(60000 + 10 * i) for i in range(40)])
    eth = write_csv(tmp_path / "eth.csv", [Decimal(3000)] * 40)
    peek = strategy(tmp_path, "peek", """\
strategy: peek
symbol: ETH_USDT_PERP
every: 1m
rules:
  - name: read
    when: >
      close('1m', 'BTC_USDT_PERP') > 0 and symbols.BTC_USDT_PERP.price.mark > 0
      and close('5m', 'BTC_USDT_PERP') > 0
    cancel: {}
""")  # fmt: skip
    journal = tmp_path / "j.sqlite"
    run(capsys, "--data", f"ETH_USDT_PERP={eth}", "--data", f"BTC_USDT_PERP={btc}",
        "--strategies", peek, "--journal", journal, "--evaluations", "all")  # fmt: skip
    with sqlite3.connect(journal) as conn:
        rows = conn.execute("SELECT ts_ms, inputs FROM evaluations WHERE strategy = 'peek'")
        seen = [(ts, json.loads(inputs)) for ts, inputs in rows]
    assert len(seen) == 40
    for ts, inputs in seen:
        minute = (ts - T0) // M - 1  # the candle that closed at this cycle
        close = Decimal(60000 + 10 * minute)
        assert Decimal(inputs["close('1m', 'BTC_USDT_PERP')"]) == close, ts
        assert Decimal(inputs["symbols.BTC_USDT_PERP.price.mark"]) == close, ts
        five = inputs.get("close('5m', 'BTC_USDT_PERP')")
        if minute < 4:
            assert five is None, ts  # no 5-minute candle has closed yet: warming up
        else:
            last = (minute + 1) // 5 * 5 - 1  # the last minute of the last closed 5m candle
            assert Decimal(five) == Decimal(60000 + 10 * last), ts


def test_a_gap_in_one_file_holds_that_symbols_mark_and_files_are_cut_to_their_common_period(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    btc = write_csv(tmp_path / "btc.csv", [Decimal(60000 + i) for i in range(30)])
    eth_closes = [Decimal(3000 + i) for i in range(40)]
    eth = write_csv(tmp_path / "eth.csv", eth_closes, skip=frozenset({10, 11}))
    watch = strategy(tmp_path, "watch", """\
strategy: watch
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: read
    when: symbols.ETH_USDT_PERP.price.mark > 0
    cancel: {}
""")  # fmt: skip
    argv: list[str | Path] = ["--data", f"BTC_USDT_PERP={btc}", "--data",
                              f"ETH_USDT_PERP={eth}", "--strategies", watch]  # fmt: skip
    assert main(["backtest", *map(str, argv)]) == 2
    assert "gap" in capsys.readouterr().err.lower()
    journal = tmp_path / "j.sqlite"
    out = run(capsys, *argv, "--allow-gaps", "--journal", journal, "--evaluations", "all",
              "--report", tmp_path / "rep")  # fmt: skip
    assert "(30 candles)" in out
    notes = summary(tmp_path / "rep")["notes"]
    assert any("2 missing" in n for n in notes), notes
    assert any(n.startswith(f"ETH_USDT_PERP={eth} covers") for n in notes), notes
    with sqlite3.connect(journal) as conn:
        rows = conn.execute("SELECT ts_ms, inputs FROM evaluations WHERE strategy = 'watch'")
        marks = {(ts - T0) // M - 1: Decimal(json.loads(i)["symbols.ETH_USDT_PERP.price.mark"])
                 for ts, i in rows}  # fmt: skip
    assert marks[9] == marks[10] == marks[11] == Decimal(3009)  # held through the missing minutes
    assert marks[12] == Decimal(3012)


def test_the_shipped_portfolio_example_runs_on_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eth = synth_eth(tmp_path / "eth.csv", candles=2880)
    capsys.readouterr()
    out = run(capsys, "--data", f"BTC_USDT_PERP={BTC_DATA}", "--data", f"ETH_USDT_PERP={eth}",
              "--strategies", LADDER, EXITS, FOLLOWS, "--end", "2024-01-03T00:00:00Z",
              "--report", tmp_path / "rep")  # fmt: skip
    assert out.startswith("Backtest   BTC_USDT_PERP+ETH_USDT_PERP 1m")
    assert main(["check", str(FOLLOWS)]) == 0  # botkit check takes the cross-symbol reads
    data = summary(tmp_path / "rep")
    assert set(data["symbols"]) == {"BTC_USDT_PERP", "ETH_USDT_PERP"}
    assert (tmp_path / "rep" / "ETH_USDT_PERP" / "index.html").is_file()
    # the account's overview lists each symbol's figures and links its own report
    page = (tmp_path / "rep" / "index.html").read_text()
    for symbol in ("BTC_USDT_PERP", "ETH_USDT_PERP"):
        assert f'<a href="{symbol}/index.html">{symbol}</a>' in page
        assert f'<a href="{symbol}/report.html">' in page
    assert "<h2>Symbols</h2>" in page
    assert "../index.html" not in page
    for symbol in ("BTC_USDT_PERP", "ETH_USDT_PERP"):  # and each symbol's page links back
        own = (tmp_path / "rep" / symbol / "index.html").read_text()
        assert '<a href="../index.html">← the account: every symbol together</a>' in own
    # ETH's page cannot draw the BTC EMAs its strategy reads, but BTC's page does: it says so,
    # not that BTC's candles are missing from the data
    eth_page = (tmp_path / "rep" / "ETH_USDT_PERP" / "report.html").read_text()
    assert "candles are not in the data" not in eth_page
    assert "ema(close('15m', 'BTC_USDT_PERP'), 20): not drawn here, see BTC_USDT_PERP's" in eth_page
    parts = sum(Decimal(s["figures"]["net_pnl"]) for s in data["symbols"].values())
    assert parts == Decimal(data["figures"]["net_pnl"])


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(["backtest", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in captured.err + captured.out
    assert captured.out == ""
    return err


def test_bad_portfolio_inputs_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    btc = write_csv(tmp_path / "btc.csv", [Decimal(60000)] * 10)
    eth = write_csv(tmp_path / "eth.csv", [Decimal(3000)] * 10)
    off_grid = write_csv(tmp_path / "off.csv", [Decimal(3000)] * 10, start_ms=T0 + 30_000)
    five = write_csv(tmp_path / "five.csv", [Decimal(3000)] * 10, step_ms=5 * M)
    later = write_csv(tmp_path / "later.csv", [Decimal(3000)] * 10, start_ms=T0 + 60 * M)
    follows = strategy(tmp_path, "follows", FOLLOWS.read_text())
    b, e = f"BTC_USDT_PERP={btc}", f"ETH_USDT_PERP={eth}"

    def err(*data: str, strategies: tuple[Path, ...] = (LADDER, follows), more: tuple[str, ...] = ()
            ) -> str:  # fmt: skip
        argv = [a for d in data for a in ("--data", d)]
        return one_line_error(capsys, [*argv, "--strategies", *map(str, strategies), *more])

    assert err(b, e, strategies=(LADDER,)) == (
        f"error: --data ETH_USDT_PERP={eth}: no strategy trades or reads ETH_USDT_PERP — leave "
        "the file out, or add a strategy of it"
    )
    assert err(b, f"ETH_USDT_PERPP={eth}").startswith(
        f"error: --data ETH_USDT_PERPP={eth}: unknown symbol 'ETH_USDT_PERPP' — did you mean "
        "'ETH_USDT_PERP'?"
    )
    assert err(e, strategies=(follows,)) == (
        f"error: {follows}: eth-follows-btc reads BTC_USDT_PERP, which has no candle file — add "
        f"--data BTC_USDT_PERP=FILE (given: ETH_USDT_PERP)"
    )
    assert err(b, f"ETH_USDT_PERP={off_grid}") == (
        f"error: --data ETH_USDT_PERP={off_grid}: its candles open at 2024-01-01T00:00:30Z, off "
        "BTC_USDT_PERP's grid (every 1m from 2024-01-01T00:00:00Z) — the symbols' candles must "
        "open at the same times"
    )
    assert err(b, f"ETH_USDT_PERP={five}") == (
        f"error: --data ETH_USDT_PERP={five}: 5m candles, but BTC_USDT_PERP={btc} has 1m — give "
        "every symbol candles of one interval (or name it with --interval)"
    )
    assert err(b, f"ETH_USDT_PERP={later}").startswith("error: --data: the files share no period")
    assert err(str(btc), str(eth)) == (
        f"error: --data {btc}: with several --data each names its symbol: SYMBOL=FILE, e.g. "
        "--data BTC_USDT_PERP=btc.csv --data ETH_USDT_PERP=eth.csv"
    )
    assert err(b, b).endswith("BTC_USDT_PERP is given twice — one candle file per symbol")
    assert "leave --symbol out" in err(b, e, more=("--symbol", "BTC_USDT_PERP"))
