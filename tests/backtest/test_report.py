"""The report: every file, the same bytes twice, content that matches the result."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.backtest.bars import Bar
from botkit.backtest.report import REPORT_FILES, render_summary, write_report
from botkit.backtest.report_page import COARSEST_BARS, FINEST_BARS, levels, trade_fills
from botkit.backtest.result import BacktestResult, EquityPoint, FillRow, OrderRow, PositionRow
from botkit.backtest.trades import build_trades
from botkit.cli import main

D = Decimal
T0 = 1_704_067_200_000
M = 60_000


def sample_result(orders: int = 4) -> BacktestResult:
    prices = [(T0 + i * M, D(30000) + D(i % 37) - D(i % 11)) for i in range(600)]
    equity = [
        EquityPoint(t, D(10000) + (px - D(30000)) / 10, D("0.01") if 100 <= i < 400 else D(0))
        for i, (t, px) in enumerate(prices)
    ]
    rows = [
        OrderRow(T0 + 100 * M, "grid<1>", "buy_dip", "g1buy", "BTC_USDT_PERP", "BUY", "LIMIT",
                 D("30010.5"), D("0.01"), "accepted"),
        OrderRow(T0 + 400 * M, "grid<1>", "take_profit", "g1sell", "BTC_USDT_PERP", "SELL",
                 "MARKET", None, D("0.01"), "accepted"),
        OrderRow(T0 + 401 * M, "grid<1>", "buy_dip", "g1buy2", "BTC_USDT_PERP", "BUY", "LIMIT",
                 D(1), D("0.01"), "rejected_local", reasons=("price below band", "size < min")),
        OrderRow(T0 + 402 * M, "grid<1>", "buy_dip", "g1buy3", "BTC_USDT_PERP", "BUY", "LIMIT",
                 D(29000), D("0.01"), "rejected", code="10014", msg="price limit"),
    ]  # fmt: skip
    rows += [
        OrderRow(T0 + (500 + i) * M, "s", "r", f"x{i}", "BTC_USDT_PERP", "BUY", "LIMIT", D(1),
                 D(1), "rejected_local", reasons=("r",))
        for i in range(orders - 4)
    ]  # fmt: skip
    fills = [
        FillRow(T0 + 100 * M + 20_000, "g1buy", "BUY", D("30010.5"), D("0.01"), D("0.06"),
                "maker", "BTC_USDT_PERP"),
        FillRow(T0 + 400 * M, "g1sell", "SELL", D("30020"), D("0.01"), D("0.18"), "taker"),
    ]  # fmt: skip
    return BacktestResult(
        symbol="BTC_USDT_PERP",
        interval_ms=M,
        start_ms=T0,
        end_ms=T0 + 600 * M,
        candles=600,
        starting_balance=D(10000),
        equity=equity,
        prices=prices,
        orders=rows,
        fills=fills,
        refused_by_reason={"price_band": 1, "min_size": 1, "a_tie": 1, "more": 3},
        rejected_by_code={"10014": 1},
        final_positions=[PositionRow("BTC_USDT_PERP", "BOTH", D("-0.01"), D(30020), D("-0.5"))],
        realized_pnl=D("0.095"),
        unrealized_pnl=D("-0.5"),
        fees=D("0.24"),
        meta={"data": "data/btc-synth-7d.csv", "strategies": "strategies/grid.yaml"},
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    written = write_report(sample_result(), folder)
    assert written == [folder / name for name in REPORT_FILES]
    return folder


def test_same_result_gives_the_same_bytes(report: Path, tmp_path: Path) -> None:
    write_report(sample_result(), tmp_path)
    for name in REPORT_FILES:
        assert (tmp_path / name).read_bytes() == (report / name).read_bytes(), name


def test_summary_json_holds_the_figures_and_counts(report: Path) -> None:
    data = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert data["symbol"] == "BTC_USDT_PERP"
    assert data["interval"] == "1m"
    assert data["period"] == {"start": "2024-01-01T00:00:00Z", "end": "2024-01-01T10:00:00Z",
                              "start_ms": T0, "end_ms": T0 + 600 * M}  # fmt: skip
    assert data["candles"] == 600
    figures = data["figures"]
    assert figures["orders_placed"] == 2
    assert figures["orders_filled"] == 2
    assert figures["orders_refused"] == 1
    assert figures["orders_rejected"] == 1
    assert figures["fills"] == 2
    assert figures["fees"] == "0.24"
    assert figures["exposure_time"] == "0.50000000"
    assert figures["starting_balance"] == "10000"
    assert list(data["refused_by_reason"].items()) == [
        ("more", 3), ("a_tie", 1), ("min_size", 1), ("price_band", 1)
    ]  # fmt: skip
    assert data["final_positions"] == [{"symbol": "BTC_USDT_PERP", "posSide": "BOTH",
                                        "qty": "-0.01", "avgPx": "30020",
                                        "unrealizedPnl": "-0.5"}]  # fmt: skip
    assert data["run"] == {"data": "data/btc-synth-7d.csv", "strategies": "strategies/grid.yaml"}


def test_orders_csv_has_one_row_per_order(report: Path) -> None:
    with (report / "orders.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["clOrdId"] for r in rows] == ["g1buy", "g1sell", "g1buy2", "g1buy3"]
    assert rows[0]["time"] == "2024-01-01T01:40:00Z"
    assert rows[0]["px"] == "30010.5"
    assert rows[1]["px"] == ""  # a market order has no price
    assert rows[2]["reasons"] == "price below band; size < min"
    assert (rows[3]["code"], rows[3]["msg"]) == ("10014", "price limit")
    assert rows[0]["strategy"] == "grid<1>"


def test_fills_csv_has_one_row_per_fill(report: Path) -> None:
    with (report / "fills.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0] == {"time": "2024-01-01T01:40:20Z", "time_ms": str(T0 + 100 * M + 20_000),
                       "clOrdId": "g1buy", "symbol": "BTC_USDT_PERP", "side": "BUY",
                       "px": "30010.5", "qty": "0.01", "fee": "0.06", "role": "maker",
                       "posSide": "", "strategy": "", "rule": ""}  # fmt: skip
    assert rows[1]["symbol"] == "BTC_USDT_PERP"  # filled in from the result


def test_html_links_only_files_of_the_report(report: Path) -> None:
    html = (report / "index.html").read_text(encoding="utf-8")
    targets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sorted(set(targets)) == ["fills.csv", "orders.csv", "report.html", "summary.json",
                                    "trades.csv"]  # fmt: skip
    assert all((report / t).is_file() for t in targets)
    assert "http" not in html
    assert "<script" not in html


def _page_data(folder: Path) -> dict[str, object]:
    html = (folder / "report.html").read_text(encoding="utf-8")
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html)
    assert found is not None
    data: dict[str, object] = json.loads(found.group(1))
    return data


def _rows(packed: object) -> list[list[object]]:
    """A table of the page's data as rows (the page's script unpacks it the same way)."""
    assert isinstance(packed, dict)
    columns = []
    for kind, column in zip(packed["k"], packed["c"], strict=True):
        if kind == "k":
            columns.append([column["d"][i] for i in column["i"]])
        elif kind == "t":
            at, out = 0, []
            for step in column:
                at += step
                out.append(at)
            columns.append(out)
        else:
            columns.append(column)
    return [list(row) for row in zip(*columns, strict=True)]


def test_report_page_is_self_contained(report: Path) -> None:
    html = (report / "report.html").read_text(encoding="utf-8")
    tags = re.sub(r"(<script[^>]*>).*?</script>", r"\1</script>", html, flags=re.S)
    assert re.findall(r"<script[^>]*>", tags) == [
        '<script id="report-data" type="application/json">',
        "<script>",
        "<script>",
    ]  # every script inline: no CDN, opens offline
    assert "src=" not in tags
    assert "<link" not in tags
    targets = re.findall(r'href="([^"]+)"', tags)
    assert sorted(set(targets)) == ["fills.csv", "index.html", "orders.csv", "summary.json",
                                    "trades.csv"]  # fmt: skip
    assert "TradingView Lightweight Charts" in html  # the library, inlined with its licence line
    # the data cannot close its script element early, whatever a strategy is called
    assert html.count("</script>") == html.count("<script")


def test_report_page_holds_every_order_and_fill(tmp_path: Path) -> None:
    write_report(sample_result(orders=505), tmp_path)
    data = _page_data(tmp_path)
    orders = _rows(data["orders"])
    assert len(orders) == 505  # every row, however many (the page pages them)
    assert orders[2][-1] == "price below band; size < min"
    assert data["rules"] == ["(unknown)", "grid<1>/buy_dip", "grid<1>/take_profit", "s/r"]
    fills = _rows(data["fills"])
    assert fills[0][:7] == [T0 + 100 * M + 20_000, 0, "g1buy", "BUY", "30010.5", "0.01", "0.06"]


def test_report_page_levels_keep_the_extremes(report: Path) -> None:
    levels = _page_data(report)["levels"]
    assert isinstance(levels, list)
    assert [lv["w"] for lv in levels] == [60, 300]  # 600 minutes: 120 five-minute candles
    finest, coarse = levels[0], levels[-1]
    assert len(finest["t"]) == 600
    # each wide candle keeps the highest high and the lowest low of the minutes it covers
    assert max(coarse["h"]) == max(finest["h"])
    assert min(coarse["l"]) == min(finest["l"])
    assert min(coarse["dd"]) == min(finest["dd"])
    assert max(map(abs, coarse["pos"])) == max(map(abs, finest["pos"])) == 0.01


def test_a_long_run_keeps_its_finest_level_small_and_its_spike() -> None:
    n = 100_800  # 70 days of minutes: more than FINEST_BARS
    bars = [Bar(T0 + i * M, D(100), D(101), D(99), D(100), D(1)) for i in range(n)]
    bars[77_777] = Bar(T0 + 77_777 * M, D(100), D(250), D(40), D(100), D(1))
    built = levels(bars, M)
    widths = [lv.width_ms for lv in built]
    assert widths == [300_000, 900_000, 3_600_000, 14_400_000, 86_400_000]
    assert len(built[0]) == n // 5 <= FINEST_BARS
    assert len(built[-1]) == 70 <= COARSEST_BARS
    for lv in built:  # the one spike is in every level
        assert (max(lv.h), min(lv.low)) == (250.0, 40.0)


def test_empty_run_still_writes_every_file(tmp_path: Path) -> None:
    empty = BacktestResult(symbol="S", interval_ms=M, start_ms=T0, end_ms=T0 + M, candles=1,
                           starting_balance=D(100))  # fmt: skip
    write_report(empty, tmp_path)
    assert all((tmp_path / name).stat().st_size > 0 for name in REPORT_FILES)
    assert (tmp_path / "orders.csv").read_text(encoding="utf-8").count("\n") == 1


def test_printed_summary_names_every_figure() -> None:
    text = render_summary(sample_result())
    lines = text.splitlines()
    assert lines[0] == (
        "Backtest   BTC_USDT_PERP 1m  2024-01-01T00:00:00Z → 2024-01-01T10:00:00Z  (600 candles)"
    )
    assert lines[1] == (
        "Orders     placed 2 · filled 2 · refused 1 · rejected 1 · failed 0  "
        "(2 fills, 600.30 USDT traded)"  # 600.305, half to even
    )
    assert lines[2] == "Refused    more 3 · a_tie 1 · min_size 1 · price_band 1"
    assert lines[3] == "Rejected   10014 1"
    assert lines[4] == "Fees       0.24 USDT"
    assert lines[5] == "PnL        realized 0.10 · unrealized -0.50 USDT (before fees)"
    assert lines[6] == (
        "Net PnL    -0.64 USDT = realized + unrealized − fees (realized after fees -0.14)"
    )
    assert lines[7].startswith("Equity     10,000.00 → ")
    assert lines[8].startswith("Risk       Sharpe ")
    assert lines[9].startswith("Drawdown   max ")
    assert lines[10] == "Exposure   50.00 % of the time in a position"
    assert lines[11].startswith("Trades     ")
    assert lines[-1] == "Position   BTC_USDT_PERP BOTH -0.01 @ 30020  unrealized -0.50 USDT"


def test_printed_counts_have_thousands_separators_like_the_money() -> None:
    base = sample_result(orders=1_204)
    result = dataclasses.replace(
        base, refused_by_reason={**base.refused_by_reason, "min_size": 12_345}
    )
    lines = render_summary(result).splitlines()
    assert lines[1].startswith("Orders     placed 2 · filled 2 · refused 1,201 · rejected 1 ")
    assert lines[2].startswith("Refused    min_size 12,345 · ")


def test_each_trade_links_to_the_fills_that_made_it() -> None:
    def fill(t: int, side: str, qty: str, cl: str, pos_side: str = "BOTH") -> FillRow:
        return FillRow(T0 + t * M, cl, side, D(100), D(qty), D(0), "taker", "BTC_USDT_PERP",
                       pos_side=pos_side)  # fmt: skip

    fills = [
        fill(1, "BUY", "1", "a"), fill(2, "BUY", "1", "b"),  # a long in two rungs
        fill(3, "SELL", "3", "c"),  # closes it and opens a short of 1 (through zero)
        fill(3, "BUY", "2", "h", "LONG"),  # a hedge leg of its own at the same time
        fill(4, "BUY", "1", "d"),  # closes the short
        fill(5, "SELL", "2", "i", "LONG"),
    ]  # fmt: skip
    trades = build_trades(fills, end_ms=T0 + 10 * M)
    linked = trade_fills(trades, fills, "BTC_USDT_PERP")
    by_fills = {t.number: [fills[i].cl_ord_id for i in own]
                for t, own in zip(trades, linked, strict=True)}  # fmt: skip
    assert by_fills == {1: ["a", "b", "c"], 2: ["c", "d"], 3: ["h", "i"]}


SMA_1 = """\
strategy: s
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: r
    when: sma(close('15m'), 1) < 0
    cancel: {}
"""


def test_the_page_draws_no_indicator_value_of_a_candle_that_never_closed(
    tmp_path: Path,
) -> None:
    """40 minutes are two closed 15-minute candles and ten minutes of a third: the rule never
    saw the third one close, so the page draws the indicator at the first two only."""
    data, strategy, out = tmp_path / "c.csv", tmp_path / "s.yaml", tmp_path / "out"
    assert (
        main(["data", "synth", "--start", "2024-01-01", "--candles", "40", "--out", str(data)]) == 0
    )
    strategy.write_text(SMA_1)
    assert (
        main(["backtest", "--data", str(data), "--strategies", str(strategy), "--report", str(out)])
        == 0
    )
    with data.open(encoding="utf-8") as f:
        closes = [row["close"] for row in csv.DictReader(f)]
    indicators = _page_data(out)["indicators"]
    assert isinstance(indicators, list)
    (line,) = indicators
    assert [value for _, value in line["points"]] == [float(closes[14]), float(closes[29])]
