"""Round trips and attribution (:mod:`botkit.backtest.trades`), the statistics of
:mod:`botkit.backtest.metrics` against hand-computed cases, and both on the shipped week through
``botkit backtest`` on the simulator: per-rule net PnL adds up to the account's."""

from __future__ import annotations

import csv
import json
from decimal import Decimal as D  # noqa: N817
from pathlib import Path

import pytest

from botkit.backtest.metrics import (
    YEAR_MS,
    compute_figures,
    equity_statistics,
    show_figure,
    trade_statistics,
)
from botkit.backtest.result import BacktestResult, EquityPoint, FillRow
from botkit.backtest.trades import Tag, Trade, attribute, build_trades
from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
LADDER = ROOT / "strategies" / "btc-dip-ladder.yaml"
EXITS = ROOT / "strategies" / "btc-exits.yaml"
SYM = "BTC_USDT_PERP"


def fill(t: int, side: str, px: str, qty: str, fee: str, rule: str, *, pos_side: str = "BOTH",
         value: str | None = None) -> FillRow:  # fmt: skip
    return FillRow(t, f"id{t}", side, D(px), D(qty), D(fee), "maker", SYM,
                   None if value is None else D(value), pos_side, "s", rule)  # fmt: skip


def test_partial_entries_and_exits_make_one_round_trip() -> None:
    fills = [fill(1, "BUY", "100", "1", "0.1", "a"), fill(2, "BUY", "90", "1", "0.1", "b"),
             fill(3, "SELL", "110", "1.5", "0.2", "x"),
             fill(4, "SELL", "120", "0.5", "0.05", "y")]  # fmt: skip
    [trade] = build_trades(fills, end_ms=10)
    assert (trade.side, trade.status, trade.qty, trade.fills) == ("long", "closed", D(2), 4)
    assert (trade.entry_px, trade.exit_px) == (D(95), D("112.5"))
    assert (trade.gross, trade.fees, trade.net) == (D(35), D("0.45"), D("34.55"))
    assert (trade.entry, trade.exit) == (Tag("s", "a"), Tag("s", "y"))
    assert trade.entry_rules == ("s/a", "s/b")
    assert (trade.entry_ms, trade.exit_ms, trade.holding_ms) == (1, 4, 3)


def test_a_fill_through_zero_closes_one_trade_and_opens_the_next() -> None:
    fills = [fill(1, "BUY", "100", "1", "0.1", "a"), fill(2, "SELL", "110", "3", "0.1", "b"),
             fill(3, "BUY", "105", "2", "0.2", "c")]  # fmt: skip
    first, second = build_trades(fills, end_ms=10)
    assert (first.side, first.gross, first.exit) == ("long", D(10), Tag("s", "b"))
    assert first.fees == D("0.1") + D("0.03333333")  # a third of the flip's fee
    assert (second.side, second.qty, second.entry, second.entry_ms) == (
        "short",
        D(2),
        Tag("s", "b"),
        2,
    )
    assert second.fees == D("0.06666667") + D("0.2")  # the rest of it: nothing lost
    assert (second.gross, second.exit_px) == (D(10), D(105))
    assert first.fees + second.fees == D("0.4")


def test_hedge_legs_are_separate_trades() -> None:
    fills = [fill(1, "BUY", "100", "1", "0", "l", pos_side="LONG"),
             fill(1, "SELL", "100", "1", "0", "s", pos_side="SHORT"),
             fill(2, "SELL", "110", "1", "0", "lx", pos_side="LONG"),
             fill(3, "BUY", "110", "1", "0", "sx", pos_side="SHORT")]  # fmt: skip
    trades = build_trades(fills, end_ms=10)
    assert [(t.pos_side, t.side, t.net, t.exit.rule) for t in trades] == [
        ("LONG", "long", D(10), "lx"), ("SHORT", "short", D(-10), "sx")]  # fmt: skip


def test_contract_value_rebates_and_an_open_trade_at_the_mark() -> None:
    fills = [fill(1, "BUY", "100", "2", "-0.01", "a", value="0.2"),  # a maker rebate
             fill(2, "SELL", "110", "1", "0.02", "x", value="0.11")]  # fmt: skip
    [trade] = build_trades(fills, end_ms=9, marks={SYM: D(120)})
    assert (trade.status, trade.exit_ms, trade.exit, trade.exit_px) == ("open", 9, Tag(), D(115))
    assert trade.gross == D("0.11") + D("0.12") - D("0.2")  # contract value 0.001
    assert trade.net == trade.gross - D("0.01")


def test_attribution_tables_each_add_up_to_the_trades_net() -> None:
    fills = [fill(1, "BUY", "100", "1", "0.1", "a"), fill(2, "SELL", "110", "1", "0.1", "x"),
             fill(3, "BUY", "100", "1", "0.1", "b"), fill(4, "SELL", "95", "1", "0.1", "y"),
             fill(5, "BUY", "100", "1", "0.1", "a"),
             fill(6, "SELL", "90", "1", "0.1", "x")]  # fmt: skip
    trades = build_trades(fills, end_ms=10)
    total = sum(t.net for t in trades)
    for by in ("entry", "exit", "strategy"):
        assert sum(r.net for r in attribute(trades, by)) == total
    rows = {r.key: (r.trades, r.wins, r.net, r.fees) for r in attribute(trades, "entry")}
    assert rows == {"s/a": (2, 1, D("-0.4"), D("0.4")), "s/b": (1, 0, D("-5.2"), D("0.2"))}
    assert attribute(trades, "entry")[0].win_rate == D("0.5")


def test_sharpe_and_sortino_of_a_hand_computed_series() -> None:
    # returns 0.1, -0.1, 0.1: mean 1/30, sd (n-1) 0.11547005, downside √(0.01/3)
    sharpe, sortino = equity_statistics([D(11), D("9.9"), D("10.89")], D(10), 4)
    assert sharpe == D("0.57735027")  # 1/30 / 0.11547005 · √4
    assert sortino == D("1.15470054")  # 1/30 / 0.05773503 · √4
    assert equity_statistics([D(10), D(10)], D(10), 4) == (None, None)  # no variation


def test_return_drawdown_duration_and_calmar_of_a_hand_computed_run() -> None:
    half = YEAR_MS // 2
    points = [EquityPoint(100, D(10500)), EquityPoint(200, D(9450)),
              EquityPoint(300, D(10600)), EquityPoint(half, D(11000))]  # fmt: skip
    result = BacktestResult(SYM, 100, 0, half, 4, D(10000), equity=points)
    f = compute_figures(result)
    assert f.total_return == D("0.1")
    assert f.annualised_return == D("0.21")  # 1.1² − 1 over half a year
    assert (f.max_drawdown, f.max_drawdown_peak_ms, f.max_drawdown_trough_ms) == (
        D("0.1"),
        100,
        200,
    )
    assert f.max_drawdown_duration_ms == 200  # back above 10,500 at 300
    assert f.calmar == D("2.1")


def trade(net: str, holding: int, status: str = "closed") -> Trade:
    return Trade(1, SYM, "BOTH", "long", status, Tag(), Tag(), (), 0, holding, D(1), D(1),
                 D(1), 2, D(net), D(0), D(net))  # fmt: skip


def test_trade_statistics_of_a_hand_computed_list() -> None:
    trades = [trade("10", 1000), trade("-5", 3000), trade("20", 2000), trade("-5", 2000),
              trade("99", 9999, status="open")]  # fmt: skip
    stats = trade_statistics(trades)
    assert stats == {"trades": 4, "win_rate": D("0.5"), "profit_factor": D(3),
                     "expectancy": D(5), "avg_holding_ms": 2000, "longest_holding_ms": 3000,
                     "best_trade": D(20), "worst_trade": D(-5)}  # fmt: skip
    assert trade_statistics([trade("1", 1)])["profit_factor"] is None  # nothing lost


def test_figures_are_shown_as_percentages_times_and_durations() -> None:
    assert show_figure("win_rate", "0.881") == "88.10%"
    assert show_figure("max_drawdown_peak_ms", 1704175440000) == "2024-01-02T06:04:00Z"
    assert show_figure("avg_holding_ms", 3_600_000 + 60_000) == "1h 01m"
    assert show_figure("longest_holding_ms", 2 * 86_400_000) == "2d 0h 00m"
    assert show_figure("sharpe", "-0.5812") == "-0.58"
    assert show_figure("sortino", None) == "-"


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("week")
    argv = ["backtest", "--data", str(DATA), "--strategies", str(LADDER), str(EXITS),
            "--report", str(folder)]  # fmt: skip
    assert main(argv) == 0
    return folder


def test_week_per_rule_net_pnl_adds_up_to_the_accounts(week: Path) -> None:
    summary = json.loads((week / "summary.json").read_text())
    figures, books = summary["figures"], summary["attribution"]
    equity_change = D(figures["final_equity"]) - D(figures["starting_balance"])
    assert D(figures["net_pnl"]) == equity_change
    assert D(figures["net_pnl"]) == D(figures["realized_pnl"]) + D(figures["unrealized_pnl"]) - D(
        figures["fees"]
    )
    for table in ("opened_by", "closed_by", "by_strategy"):
        assert sum(D(r["net_pnl"]) for r in books[table]) == equity_change, table
        assert sum(D(r["fees"]) for r in books[table]) == D(figures["fees"]), table
    assert books["difference"] == "0E-8" or D(books["difference"]) == 0
    opened = {r["key"] for r in books["opened_by"]}
    closed = {r["key"] for r in books["closed_by"]}
    assert opened == {"btc-dip-ladder/ladder-on-dip"}
    assert closed <= {"btc-exits/take-profit", "btc-exits/stop-loss", "(open)"}


def test_week_trades_csv_and_tagged_fills(week: Path) -> None:
    with (week / "fills.csv").open() as f:
        fills = list(csv.DictReader(f))
    assert fills
    assert all(r["strategy"] and r["rule"] for r in fills)
    assert {r["posSide"] for r in fills} == {"BOTH"}
    with (week / "trades.csv").open() as f:
        trades = list(csv.DictReader(f))
    summary = json.loads((week / "summary.json").read_text())
    closed = [t for t in trades if t["status"] == "closed"]
    assert len(closed) == summary["figures"]["trades"] > 0
    assert sum(int(t["fills"]) for t in trades) == len(fills)
    assert all(t["holding"] and int(t["holding_ms"]) >= 0 for t in trades)


def test_summary_json_keeps_plain_names_and_raw_values(week: Path) -> None:
    figures = json.loads((week / "summary.json").read_text())["figures"]
    for name in ("return", "annualised_return", "sharpe", "sortino", "calmar", "win_rate",
                 "profit_factor", "expectancy", "exposure_time", "max_drawdown",
                 "max_drawdown_duration_ms", "avg_holding_ms", "longest_holding_ms",
                 "best_trade", "worst_trade", "trades", "net_pnl"):  # fmt: skip
        assert name in figures, name
    assert isinstance(figures["avg_holding_ms"], int)
    D(figures["sharpe"])  # a plain decimal string, not "0.58" or "88 %"
    assert "%" not in figures["win_rate"]
    html = (week / "index.html").read_text()
    assert "btc-exits/take-profit" in html
    assert "trades.csv" in html


def test_a_sweep_ranks_by_sharpe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["backtest", "--data", str(DATA), "--strategies", str(LADDER), str(EXITS),
            "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-02T00:00:00Z",
            "--sweep", "dip=0.5,0.002", "--rank", "sharpe", "--jobs", "1",
            "--report", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ranked by sharpe (highest first)"
    assert lines[1].split()[:3] == ["#", "dip", "sharpe"]
    assert lines[3].split()[:3] == ["2", "0.5", "-"]  # never traded: no Sharpe, ranked last
    with (tmp_path / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["dip"] == "0.002"
    assert rows[0]["sharpe"]


FLIPPER = """
strategy: flipper
symbol: BTC_USDT_PERP
every: 1h
margin: {mode: CROSS, position_mode: ONE_WAY}
rules:
  - name: open
    when: position.qty == 0
    place: {order: {side: BUY, sz: 1}}
  - name: flip-short
    when: position.qty > 0
    place: {order: {side: SELL, sz: 2}}
  - name: flip-long
    when: position.qty < 0
    place: {order: {side: BUY, sz: 2}}
"""


def test_flips_on_the_simulator_split_into_trades_that_add_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strategy = tmp_path / "flipper.yaml"
    strategy.write_text(FLIPPER)
    argv = ["backtest", "--data", str(DATA), "--strategies", str(strategy),
            "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T06:00:00Z",
            "--report", str(tmp_path / "rep")]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    with (tmp_path / "rep" / "trades.csv").open() as f:
        trades = list(csv.DictReader(f))
    # open at 01:00, then every hour a 2-lot market order closes one side and opens the other
    assert [(t["side"], t["entry_rule"], t["exit_rule"], t["status"]) for t in trades[:3]] == [
        ("long", "open", "flip-short", "closed"),
        ("short", "flip-short", "flip-long", "closed"),
        ("long", "flip-long", "flip-short", "closed"),
    ]
    assert trades[-1]["status"] == "open"
    assert all(t["qty"] == "1" for t in trades)
    figures = json.loads((tmp_path / "rep" / "summary.json").read_text())["figures"]
    assert sum(D(t["net_pnl"]) for t in trades) == D(figures["net_pnl"])
    assert sum(D(t["fees"]) for t in trades) == D(figures["fees"])


def test_hedge_legs_on_the_simulator_are_separate_trades_that_add_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, config = tmp_path / "eth.csv", tmp_path / "sim.toml"
    assert main(["data", "synth", "--symbol", "ETH_USDT_PERP", "--start", "2024-01-01",
                 "--candles", "2880", "--start-price", "2300", "--seed", "3",
                 "--out", str(data)]) == 0  # fmt: skip
    shipped = (ROOT / "configs" / "sim.toml").read_text()
    config.write_text(shipped.replace('position_mode = "ONE_WAY"', 'position_mode = "HEDGE"', 1))
    argv = ["backtest", "--data", str(data), "--sim-config", str(config), "--strategies",
            str(ROOT / "strategies" / "hedge" / "eth-hedge-legs.yaml"),
            "--report", str(tmp_path / "rep")]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    with (tmp_path / "rep" / "trades.csv").open() as f:
        trades = list(csv.DictReader(f))
    sides = {(t["posSide"], t["side"], t["entry_rule"]) for t in trades}
    assert sides == {("LONG", "long", "open-long"), ("SHORT", "short", "open-short")}
    overlapping = [(a, b) for a in trades for b in trades if a["posSide"] == "LONG"
                   and b["posSide"] == "SHORT" and a["entry_time_ms"] < b["exit_time_ms"]
                   and b["entry_time_ms"] < a["exit_time_ms"]]  # fmt: skip
    assert overlapping, "both legs were open at once"
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert sum(D(t["net_pnl"]) for t in trades) == D(summary["figures"]["net_pnl"])
    closed_by = {r["key"] for r in summary["attribution"]["closed_by"]}
    assert "eth-hedge-legs/cut-both" in closed_by
