"""What each context name reads from the snapshot and the journal's activity."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.exchange.models import Fill, Order, PositionHistory
from botkit.intents import Activity, RuleActivity
from botkit.rules import RuleStatus, client_order_id, evaluate
from botkit.snapshot import Snapshot
from tests.rules.helpers import NOW, SYMBOL, open_order, position, snapshot, strategy, ticker

D = Decimal
MIN = 60_000
HOUR = 3_600_000


def read(expr: str, snap: Snapshot, activity: Activity | None = None) -> str:
    """The value of a numeric context expression, as the journal records it."""
    s = strategy(f'  - name: r\n    when: "{expr} == {expr}"\n    cancel: {{}}\n')
    result = evaluate(s, snap, activity or {}, NOW).result("r")
    assert result.status is RuleStatus.FIRED, result.reason
    return result.inputs[expr]


def fill(t: int, side: str = "BUY", qty: str = "1", px: str = "100", **kw: object) -> Fill:
    return Fill(id=str(t), symbol=kw.pop("symbol", SYMBOL), side=side, qty=D(qty), px=D(px),
                cTime=t, **kw)  # fmt: skip


HISTORY = snapshot(
    fills=[
        fill(NOW - 10 * MIN, qty="2", px="100", clOrdId=client_order_id("test", "r", 1, 0)),
        fill(NOW - 30 * MIN, side="SELL", qty="3", px="110"),
        fill(NOW - 2 * HOUR, qty="5", px="90"),
        fill(NOW - 5 * MIN, qty="7", px="95", symbol="ETH_USDT_PERP"),
    ],
    order_history=[
        Order(symbol=SYMBOL, side="BUY", type="LIMIT", state="FILLED", px=D(101), sz=D(2),
              cTime=NOW - 3 * HOUR, uTime=NOW - 2 * HOUR),
        Order(symbol=SYMBOL, side="SELL", type="LIMIT", state="CANCELED", px=D(120), sz=D(1),
              cTime=NOW - 3 * HOUR, uTime=NOW - 20 * MIN),
    ],
    position_history=[
        PositionHistory(id="1", symbol=SYMBOL, pnl=D("12.5"), uTime=NOW - 90 * MIN),
        PositionHistory(id="2", symbol=SYMBOL, pnl=D("-2.5"), uTime=NOW - 30 * MIN),
    ],
)  # fmt: skip


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("history.fills.count('1h')", "2"),  # the ETH fill is another symbol
        ("history.fills.count('3h')", "3"),
        ("history.fills.sum('qty', '1h')", "5"),
        ("history.fills.avg('px', '3h')", "100"),
        ("history.fills.max('px', '3h')", "110"),
        ("history.fills.min('px', '1h')", "100"),
        ("history.fills.buys.count('3h')", "2"),
        ("history.fills.sells.sum('qty', '1h')", "3"),
        ("history.fills.mine.count('1d')", "1"),
        ("history.fills.last.px", "100"),
        ("history.fills.last_ago", "600000"),
        ("history.fills.sum('qty', '1s')", "0"),
        ("history.orders.count('1h')", "1"),
        ("history.orders.last.px", "120"),
        ("history.orders.filled.count('1d')", "1"),
        ("history.positions.sum('pnl', '1d')", "10.0"),
        ("history.positions.last.pnl", "-2.5"),
    ],
)
def test_history_helpers_count_and_sum_over_a_window(expr: str, expected: str) -> None:
    assert read(expr, HISTORY) == expected


def test_empty_history_reads_as_zero_and_never() -> None:
    snap = snapshot()
    assert read("history.fills.last.px", snap) == "0"
    assert read("history.fills.avg('px', '1h')", snap) == "0"
    assert read("history.fills.last_ago", snap) == "Infinity"
    s = strategy("  - name: r\n    when: not history.orders.last.exists\n    cancel: {}\n")
    assert evaluate(s, snap, {}, NOW).result("r").fired


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("position.qty", "0"),
        ("position.openAvgPx", "0"),
        ("position.upl", "0"),
        ("position.age", "0"),
        ("positions.count", "0"),
    ],
)
def test_flat_position_reads_as_zeros(expr: str, expected: str) -> None:
    assert read(expr, snapshot()) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("position.qty", "-4"),
        ("position.size", "4"),
        ("position.availQty", "4"),
        ("position.upl", "-12.5"),
        ("position.im", "12"),
        ("position.age", "3600000"),
        ("positions.count", "2"),
        ("positions.upl", "-10.0"),
        ("positions.net.qty", "-4"),
    ],
)
def test_open_position_fields(expr: str, expected: str) -> None:
    snap = snapshot(
        positions=[
            position("-4", upl=D("-12.5"), im=D(12), cTime=NOW - HOUR, side="SELL"),
            position("1", symbol="ETH_USDT_PERP", upl=D("2.5")),
        ]
    )
    assert read(expr, snap) == expected


def test_short_reported_with_unsigned_qty_and_side_sell_is_negative() -> None:
    snap = snapshot(positions=[position("4", side="SELL")])
    assert read("position.qty", snap) == "-4"


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("account.eq", "10000"),
        ("account.availMgn", "10000"),
        ("account.ccy.USDT.avail", "10000"),
        ("account.ccy.usdt.eq", "10000"),
        ("account.ccy.BTC.avail", "0"),
        ("instrument.tSz", "0.1"),
        ("instrument.ctVal", "0.001"),
        ("instrument.limitMaxQty", "0"),
        ("price.mark", "60000"),
        ("price.bid", "59999.9"),
        ("price.mid", "60000.0"),
        ("now", str(NOW)),
    ],
)
def test_account_instrument_price_and_now(expr: str, expected: str) -> None:
    assert read(expr, snapshot()) == expected


def test_price_24h_change_and_limit_band() -> None:
    snap = snapshot(tickers={SYMBOL: ticker("60000", o=D(50000))})
    assert read("price.change_24h", snap) == "0.2"
    s = strategy("  - name: r\n    when: price.buy_limit > 0\n    cancel: {}\n")
    result = evaluate(s, snap, {}, NOW).result("r")
    assert result.status is RuleStatus.ERROR
    assert "price.buy_limit is not available for BTC_USDT_PERP now" in result.reason


def test_missing_ticker_is_an_error_not_a_zero_price() -> None:
    s = strategy("  - name: r\n    when: price.mark > 0\n    cancel: {}\n")
    result = evaluate(s, snapshot(tickers={}), {}, NOW).result("r")
    assert result.status is RuleStatus.ERROR
    assert result.reason == (
        "rule 'r': price.mark is not available for BTC_USDT_PERP now in 'price.mark > 0'"
    )


def test_rule_activity_comes_from_the_journal_and_the_open_orders() -> None:
    activity = {
        "r": RuleActivity(
            fire_times_ms=(NOW - 2 * HOUR, NOW - 30 * MIN),
            orders=((NOW - 2 * HOUR, "a"), (NOW - 30 * MIN, "b"), (NOW - 30 * MIN, "c")),
        )
    }
    snap = snapshot(
        open_orders=[
            open_order(client_order_id("test", "r", 5, 0), cTime=NOW - 45 * MIN),
            open_order(client_order_id("test", "other", 5, 0), side="SELL", cTime=NOW - 10 * MIN),
            open_order("manual", cTime=NOW - 5 * HOUR),
        ]
    )
    assert read("rule.fires('1h')", snap, activity) == "1"
    assert read("rule.orders('1h')", snap, activity) == "2"
    assert read("rule.orders('1d')", snap, activity) == "3"
    assert read("rule.last_fire_ago", snap, activity) == str(30 * MIN)
    assert read("rule.last_fire_ago", snap) == "Infinity"
    assert read("rule.open_orders", snap) == "1"
    assert read("strategy.open_orders", snap) == "2"
    assert read("strategy.open_sells", snap) == "1"
    assert read("strategy.oldest_open_ago", snap) == str(45 * MIN)
