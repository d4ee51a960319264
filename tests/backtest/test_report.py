"""The report: every file, the same bytes twice, content that matches the result."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import struct
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.backtest.report import REPORT_FILES, render_summary, write_report
from botkit.backtest.report_html import TABLE_ROWS
from botkit.backtest.result import BacktestResult, EquityPoint, FillRow, OrderRow, PositionRow

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


@pytest.mark.parametrize("name", ["equity.png", "drawdown.png", "price.png"])
def test_charts_are_pngs_without_software_or_time_stamps(report: Path, name: str) -> None:
    data = (report / name).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1000, 360)
    assert b"Software" not in data
    assert b"tIME" not in data


def test_html_links_only_files_of_the_report(report: Path) -> None:
    html = (report / "index.html").read_text(encoding="utf-8")
    targets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sorted(set(targets)) == ["drawdown.png", "equity.png", "fills.csv", "orders.csv",
                                    "price.png", "summary.json", "trades.csv"]  # fmt: skip
    assert all((report / t).is_file() for t in targets)
    assert "http" not in html
    assert "<script" not in html
    assert "grid&lt;1&gt;" in html  # every text is escaped
    assert "price below band; size &lt; min" in html


def test_html_shows_only_the_first_orders_and_points_to_the_csv(tmp_path: Path) -> None:
    write_report(sample_result(orders=TABLE_ROWS + 5), tmp_path)
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert f"The first {TABLE_ROWS} of {TABLE_ROWS + 5}" in html
    assert html.count("<tr><td>2024-") == TABLE_ROWS + 2  # orders shown + 2 fills


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
