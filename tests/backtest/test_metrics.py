"""The figures: return, maximum drawdown, exposure time, order counts."""

from __future__ import annotations

from decimal import Decimal

from botkit.backtest.metrics import FIGURE_NAMES, compute_figures, exposure_fraction
from botkit.backtest.result import BacktestResult, EquityPoint, FillRow, OrderRow

D = Decimal


def result(equity: list[EquityPoint], **kw: object) -> BacktestResult:
    return BacktestResult(symbol="S", interval_ms=10, start_ms=0, end_ms=100, candles=10,
                          starting_balance=D(1000), equity=equity, **kw)  # type: ignore[arg-type]  # fmt: skip


def points(*values: int) -> list[EquityPoint]:
    return [EquityPoint(i * 10, D(v)) for i, v in enumerate(values)]


def test_return_is_final_equity_over_starting_balance() -> None:
    assert compute_figures(result(points(1000, 1050, 1100))).total_return == D("0.1")
    assert compute_figures(result(points(990, 900))).total_return == D("-0.1")


def test_max_drawdown_is_the_deepest_fall_from_a_running_peak() -> None:
    f = compute_figures(result(points(1000, 1200, 900, 1300, 1100)))
    assert f.max_drawdown == D("0.25")
    assert f.max_drawdown_amount == D(300)
    assert (f.max_drawdown_peak_ms, f.max_drawdown_trough_ms) == (10, 20)


def test_starting_balance_is_the_first_peak() -> None:
    f = compute_figures(result(points(800, 900)))
    assert f.max_drawdown == D("0.2")
    assert (f.max_drawdown_peak_ms, f.max_drawdown_trough_ms) == (0, 0)


def test_ratios_are_rounded_to_eight_places() -> None:
    f = compute_figures(result(points(1000, 1000 * 3, 1000)))
    assert f.max_drawdown == D("0.66666667")


def test_no_equity_points_means_no_change() -> None:
    f = compute_figures(result([]))
    assert (f.final_equity, f.total_return) == (D(1000), D(0))
    assert (f.max_drawdown, f.exposure_time) == (D(0), D(0))
    assert f.max_drawdown_peak_ms is None


def test_exposure_counts_time_with_a_position_until_the_next_point() -> None:
    eq = [EquityPoint(0, D(1), D(0)), EquityPoint(10, D(1), D(2)), EquityPoint(40, D(1), D(0)),
          EquityPoint(70, D(1), D("0.5"))]  # fmt: skip
    assert exposure_fraction(eq, 0, 100) == D("0.6")
    assert exposure_fraction(eq, 20, 50) == D("0.66666667")  # [20,40) of [20,50)
    assert exposure_fraction([], 0, 100) == 0


def test_order_counts_by_outcome_and_fills() -> None:
    def order(cid: str, outcome: str) -> OrderRow:
        return OrderRow(1, "s", "r", cid, "S", "BUY", "LIMIT", D(10), D(1), outcome)

    outcomes = {"a": "accepted", "b": "accepted", "c": "accepted", "d": "rejected_local",
                "e": "rejected", "f": "failed"}  # fmt: skip
    orders = [order(cid, outcome) for cid, outcome in outcomes.items()]
    fills = [FillRow(2, "a", "BUY", D(10), D("0.5"), D("0.01"), "maker"),
             FillRow(3, "a", "BUY", D(11), D("0.5"), D("0.01"), "maker"),
             FillRow(4, "b", "BUY", D(12), D(1), D("0.02"), "taker")]  # fmt: skip
    f = compute_figures(result([], orders=orders, fills=fills, fees=D("0.04")))
    assert (f.orders_total, f.orders_placed, f.orders_filled) == (6, 3, 2)
    assert (f.orders_refused, f.orders_rejected, f.orders_failed, f.fills) == (1, 1, 1, 3)
    assert f.traded_notional == D("22.5")
    assert f.fees == D("0.04")


def test_figures_by_name_are_json_ready() -> None:
    figures = compute_figures(result(points(1000, 1100))).as_dict()
    assert tuple(figures) == FIGURE_NAMES
    assert figures["return"] == "0.10000000"
    assert figures["orders_placed"] == 0
    assert figures["final_equity"] == "1100"
