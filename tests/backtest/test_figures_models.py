"""The figures worked out faster are the plain loops' (issue 20).

The maximum drawdown divides only at a new low since the peak, the exposure time sums spans
over arrays, the Sharpe and Sortino ratios take their returns through ``map``: the plain
loops below (the code before) are the model.
Random equity curves with ties, plateaus, equal values of other exponents (``100`` and
``100.00``), shared objects, non-positive values and repeated times must give the same
figures, exponent included.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from itertools import chain, islice, pairwise

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from botkit.backtest.columns import EquityCurve
from botkit.backtest.metrics import _max_drawdown, equity_statistics, exposure_fraction
from botkit.backtest.result import EquityPoint
from tests.fuzz.profiles import FUZZ

D = Decimal
_PLACES = D("1e-8")
_ZERO = D(0)


def model_drawdown(
    equity: Sequence[EquityPoint], start: Decimal, start_ms: int, end_ms: int
) -> tuple[Decimal, Decimal, int | None, int | None, int | None]:
    """The plain loop: a division at every point at or below the peak."""
    times = [p.time_ms for p in equity]
    values = [p.equity for p in equity]
    peak, peak_ms = start, start_ms
    best: tuple[Decimal, Decimal, int | None, int | None] = (_ZERO, _ZERO, None, None)
    best_ratio = _ZERO
    best_peak = start
    for time_ms, value in zip(times, values, strict=True):
        if value > peak:
            peak, peak_ms = value, time_ms
            continue
        fall = peak - value
        ratio = fall / peak if peak > 0 else _ZERO
        if fall > 0 and ratio > best_ratio:
            best_ratio, best_peak = ratio, peak
            best = (ratio, fall, peak_ms, time_ms)
    ratio, fall, peak_at, trough_at = best
    duration = None
    if peak_at is not None and trough_at is not None:
        recovered = next(
            (t for t, v in zip(times, values, strict=True) if t > trough_at and v >= best_peak),
            end_ms,
        )
        duration = recovered - peak_at
    return ratio.quantize(_PLACES, rounding=ROUND_HALF_EVEN), fall, peak_at, trough_at, duration


def model_exposure(equity: Sequence[EquityPoint], start_ms: int, end_ms: int) -> Decimal:
    total = end_ms - start_ms
    if total <= 0 or not equity:
        return _ZERO
    exposed = 0
    times = [p.time_ms for p in equity]
    ends = [*times[1:], end_ms]
    for point, until in zip(equity, ends, strict=True):
        if point.exposure:
            begin = max(point.time_ms, start_ms)
            until = min(until, end_ms)
            if until > begin:
                exposed += until - begin
    return (D(exposed) / D(total)).quantize(_PLACES, rounding=ROUND_HALF_EVEN)


def _float_ratio(value: float) -> Decimal | None:
    if not math.isfinite(value):
        return None
    return D(repr(value)).quantize(_PLACES, rounding=ROUND_HALF_EVEN)


def model_statistics(
    equity: Sequence[Decimal], start: Decimal, samples_a_year: float
) -> tuple[Decimal | None, Decimal | None]:
    if len(equity) < 2 or start <= 0 or any(e <= 0 for e in islice(equity, len(equity) - 1)):
        return None, None
    steps = pairwise(chain((start,), equity))
    returns = np.fromiter((float(b / a - 1) for a, b in steps), dtype=np.float64, count=len(equity))
    mean = float(returns.mean())
    scale = math.sqrt(samples_a_year)
    std = float(returns.std(ddof=1))
    sharpe = _float_ratio(mean / std * scale) if std > 0 else None
    downside = float(np.sqrt(np.mean(np.square(np.minimum(returns, 0.0)))))
    sortino = _float_ratio(mean / downside * scale) if downside > 0 else None
    return sharpe, sortino


def _spelled(value: int, places: int) -> Decimal:
    """``value`` hundredths written with ``places`` places: 10000 → 100.00, 100.0 or 1E+2."""
    exact = D(value).scaleb(-2)
    return exact.quantize(D(1).scaleb(-places)) if places >= 2 else exact.normalize()


amounts = st.builds(_spelled, st.integers(-500, 20_000), st.integers(0, 4))


@st.composite
def curves(draw: st.DrawFn) -> tuple[list[EquityPoint], Decimal, int, int]:
    """A curve of few distinct values (ties and plateaus), some repeated as the very same
    object, times rising with repeats, and a period around it."""
    values = draw(st.lists(amounts, max_size=60))
    pool = draw(st.lists(amounts, min_size=1, max_size=4))
    chosen = [v if draw(st.booleans()) else draw(st.sampled_from(pool)) for v in values]
    steps = draw(st.lists(st.integers(0, 3), min_size=len(chosen), max_size=len(chosen)))
    times = list(np.cumsum(steps).tolist()) if steps else []
    exposures = draw(st.lists(st.sampled_from([D(0), D("0.0"), D(1), D("0.5")]),
                              min_size=len(chosen), max_size=len(chosen)))  # fmt: skip
    points = [EquityPoint(t, v, x) for t, v, x in zip(times, chosen, exposures, strict=True)]
    start = draw(st.one_of(amounts, st.sampled_from(pool)))
    start_ms = draw(st.integers(-3, 5))
    end_ms = draw(st.integers(-3, (times[-1] if times else 0) + 5))
    return points, start, start_ms, end_ms


def _exact(value: object) -> object:
    """A figure with its exponent: ``Decimal('1.0')`` and ``Decimal('1')`` differ here."""
    return (str(value), value.as_tuple()) if isinstance(value, Decimal) else value


@FUZZ
@given(curves(), st.booleans())
def test_the_drawdown_divides_only_at_new_lows_and_finds_the_plain_loops_figures(
    case: tuple[list[EquityPoint], Decimal, int, int], as_curve: bool
) -> None:
    points, start, start_ms, end_ms = case
    equity: Sequence[EquityPoint] = EquityCurve.of(points) if as_curve else points
    got = _max_drawdown(equity, start, start_ms, end_ms)
    assert list(map(_exact, got)) == list(
        map(_exact, model_drawdown(points, start, start_ms, end_ms))
    )


def test_a_lower_value_after_a_new_peak_is_judged_against_that_peak() -> None:
    """The new low resets at a new peak: 100 → 90 (10 %) → 200 → 150 (25 %)."""
    points = [EquityPoint(t, D(v)) for t, v in enumerate((100, 90, 200, 180, 150, 160))]
    ratio, fall, peak_ms, trough_ms, _ = _max_drawdown(points, D(100), 0, 10)
    assert (ratio, fall, peak_ms, trough_ms) == (D("0.25"), D(50), 2, 4)


@FUZZ
@given(curves(), st.booleans())
def test_the_exposure_time_over_arrays_is_the_plain_loops(
    case: tuple[list[EquityPoint], Decimal, int, int], as_curve: bool
) -> None:
    points, _, start_ms, end_ms = case
    equity: Sequence[EquityPoint] = EquityCurve.of(points) if as_curve else points
    got = exposure_fraction(equity, start_ms, end_ms)
    assert _exact(got) == _exact(model_exposure(points, start_ms, end_ms))


@FUZZ
@given(curves(), st.sampled_from([4.0, 525_600.0]))
def test_the_sharpe_and_sortino_through_map_are_the_plain_loops(
    case: tuple[list[EquityPoint], Decimal, int, int], samples: float
) -> None:
    points, start, _, _ = case
    values = [p.equity for p in points]
    assert equity_statistics(values, start, samples) == model_statistics(values, start, samples)
