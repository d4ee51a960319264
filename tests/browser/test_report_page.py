"""The interactive backtest report (``report.html``) in a real headless Chromium.

The report is written by the CLI (a subprocess, as a user runs it) for the shipped week with the
README pair and the EMA-cross example (so there are indicators), and opened from the folder over
``file://``: it must work offline, alone. Each test loads the page and checks it through what a
reader does — look, zoom, hover, click a trade, sort, filter, page — and that no error reached
the console.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
PAIR = ("strategies/btc-dip-ladder.yaml", "strategies/btc-exits.yaml")
EMA = "strategies/btc-ema-cross.yaml"


def backtest(folder: Path, *extra: str) -> None:
    argv = [sys.executable, "-m", "botkit", "backtest", "--data", "data/btc-synth-7d.csv",
            "--strategies", *PAIR, EMA, "--report", str(folder), *extra]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("week")
    backtest(folder)
    return folder


def open_report(page: Page, folder: Path) -> None:
    page.goto((folder / "report.html").as_uri())
    page.wait_for_function("window.botkitReport !== undefined")


def js(page: Page, expression: str) -> Any:
    return page.evaluate(expression)


def test_the_same_run_writes_the_same_page(tmp_path: Path) -> None:
    for name in ("a", "b"):
        backtest(tmp_path / name, "--end", "2024-01-02")
    first, second = (tmp_path / n / "report.html" for n in ("a", "b"))
    assert first.read_bytes() == second.read_bytes()


def test_page_loads_without_errors_and_draws_every_pane(
    page: Page, page_errors: list[str], week: Path
) -> None:
    open_report(page, week)
    panes = js(page, "botkitReport.chart.panes().map(p => p.getSeries().map(s => s.data().length))")
    # price (candles + the two EMAs), the ATR, the position, the equity, the drawdown
    assert len(panes) == 5
    assert len(panes[0]) == 3
    assert all(n > 0 for pane in panes for n in pane)
    # the canvases hold a drawing, not a blank
    inked = js(
        page,
        """[...document.querySelectorAll('#chart canvas')].map(c => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 200) n++; return n; })""",
    )
    assert sum(1 for n in inked if n > 500) >= 5
    legend = page.text_content("#legend") or ""
    assert "btc-dip-ladder/ladder-on-dip" in legend
    assert "ema(close('15m'), 20)" in legend
    assert js(page, "botkitReport.markers().length") > 0
    assert page_errors == []


def test_zoom_narrows_the_range_and_switches_to_finer_candles(
    page: Page, page_errors: list[str], week: Path
) -> None:
    open_report(page, week)
    whole = js(page, "botkitReport.visibleRange()")
    assert js(page, "botkitReport.level()") == 900  # a week fits in 15-minute candles
    box = page.locator("#chart").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 150)
    for _ in range(6):
        page.mouse.wheel(0, -600)
    page.wait_for_function(
        f"(r => r && r.to - r.from < ({whole['to']} - {whole['from']}) * 0.8)"
        "(botkitReport.visibleRange())"
    )
    # a programmatic zoom to two hours draws the minutes
    page.evaluate(
        "botkitReport.chart.timeScale().setVisibleRange({from: 1704196800, to: 1704204000})"
    )
    page.wait_for_function("botkitReport.level() === 60")
    page.click("#fit")
    page.wait_for_function("botkitReport.level() === 900")
    assert page_errors == []


def test_a_trade_row_links_to_its_fills(page: Page, page_errors: list[str], week: Path) -> None:
    open_report(page, week)
    page.click("#trades tbody tr:nth-child(2)")
    row = int(page.get_attribute("#trades tbody tr:nth-child(2)", "data-row") or -1)
    own = js(page, f"botkitReport.tradeFills({row})")
    assert own
    page.wait_for_function(f"botkitReport.fillRows().length === {len(own)}")
    assert sorted(js(page, "botkitReport.fillRows()")) == sorted(own)
    assert page.locator("#fills tbody tr.sel").count() == len(own)
    assert "of trade #2" in (page.text_content("#fills .chip") or "")
    assert page.locator("#trades tbody tr.sel").count() == 1
    # the chart zoomed to the trade and rings its fills
    trade = js(page, f"botkitReport.trade({row})")
    shown = js(page, "botkitReport.visibleRange()")
    assert shown["from"] * 1000 <= trade["entry_ms"]
    assert trade["exit_ms"] <= shown["to"] * 1000
    assert js(page, "botkitReport.markers().filter(m => m.shape === 'circle').length") >= 1
    page.click("#fills .all")
    page.wait_for_function("botkitReport.fillRows().length === 50")  # one page of all the fills
    assert page_errors == []


def test_hover_shows_the_fills_of_the_candle_with_their_orders(
    page: Page, page_errors: list[str], week: Path
) -> None:
    open_report(page, week)
    page.click("#trades tbody tr:nth-child(1)")
    first = js(page, "botkitReport.fill(botkitReport.tradeFills(0)[0])")
    x = js(page, f"botkitReport.chart.timeScale().timeToCoordinate({first['bucket']})")
    page.locator("#chart").scroll_into_view_if_needed()
    box = page.locator("#chart").bounding_box()
    assert box is not None
    assert x is not None
    page.mouse.move(box["x"] + x, box["y"] + 120)
    page.wait_for_selector("#tip:not([hidden])")
    tip = page.text_content("#tip") or ""
    assert first["clOrdId"] in tip
    assert "btc-dip-ladder/ladder-on-dip" in tip
    assert "LIMIT BUY" in tip  # the order's own details
    assert page_errors == []


def test_tables_sort_filter_and_page_through_every_row(
    page: Page, page_errors: list[str], week: Path
) -> None:
    open_report(page, week)
    orders = int(js(page, "botkitReport.count('orders')"))
    assert orders > 200  # more than the old page showed
    page.click("#orders .last")
    assert f"of {orders:,}" in (page.text_content("#orders .count") or "")
    last_page = page.locator("#orders tbody tr").count()
    assert last_page == orders - (orders - 1) // 50 * 50
    # sort the trades by net PnL, both ways
    page.click("#trades th:has-text('net PnL')")
    nets = [float(t) for t in page.locator("#trades tbody tr td:nth-child(14)").all_text_contents()]
    assert nets == sorted(nets)
    page.click("#trades th:has-text('net PnL')")
    nets = [float(t) for t in page.locator("#trades tbody tr td:nth-child(14)").all_text_contents()]
    assert nets == sorted(nets, reverse=True)
    # filter
    page.fill("#trades input", "stop-loss")
    rows = page.locator("#trades tbody tr").all_text_contents()
    assert rows
    assert all("stop-loss" in r for r in rows)
    assert "(of " in (page.text_content("#trades .count") or "")
    assert page_errors == []


def test_a_run_without_prices_or_orders_still_opens(
    page: Page, page_errors: list[str], tmp_path: Path
) -> None:
    from decimal import Decimal

    from botkit.backtest.report import write_report
    from botkit.backtest.result import BacktestResult

    t0 = 1_704_067_200_000
    empty = BacktestResult("BTC_USDT_PERP", 60_000, t0, t0 + 60_000, 0, Decimal(100))
    write_report(empty, tmp_path)
    open_report(page, tmp_path)
    assert page.text_content("#orders .count") == "no row of 0"
    assert page_errors == []


def test_a_portfolio_has_a_page_per_symbol_and_one_for_the_account(
    page: Page, page_errors: list[str], tmp_path: Path
) -> None:
    eth = tmp_path / "eth.csv"
    synth = [sys.executable, "-m", "botkit", "data", "synth", "--start", "2024-01-01",
             "--candles", "1440", "--seed", "8", "--start-price", "3000", "--symbol",
             "ETH_USDT_PERP", "--out", str(eth)]  # fmt: skip
    subprocess.run(synth, cwd=ROOT, capture_output=True, check=True, timeout=120)
    argv = [sys.executable, "-m", "botkit", "backtest", "--data",
            "BTC_USDT_PERP=data/btc-synth-7d.csv", "--data", f"ETH_USDT_PERP={eth}",
            "--strategies", *PAIR, "strategies/eth-margin-sized.yaml", "--end", "2024-01-02",
            "--report", str(tmp_path / "rep")]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    open_report(page, tmp_path / "rep" / "ETH_USDT_PERP")
    assert (
        page.text_content("h1")
        == "Backtest ETH_USDT_PERP 1m 2024-01-01T00:00:00Z → 2024-01-02T00:00:00Z"
    )
    assert "eth-margin-sized/enter-long" in (page.text_content("#legend") or "")
    assert "btc-" not in (page.text_content("#legend") or "")
    open_report(page, tmp_path / "rep")  # the account: every symbol's rows, one symbol's chart
    page.fill("#fills input", "ETH_USDT_PERP")
    assert page.locator("#fills tbody tr").count() > 0
    assert "the chart shows BTC_USDT_PERP" in (page.text_content("#notes") or "")
    assert page_errors == []
