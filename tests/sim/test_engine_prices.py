"""The mark: a seeded random walk on the tick grid, deterministic for a seed; set_mark fills."""

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.clock import ManualClock
from botkit.sim import SimEngine
from tests.sim.conftest import BTC, T0, sim_config


def walk(seed: int, seconds: int) -> list[Decimal]:
    clock = ManualClock(T0)
    engine = SimEngine(sim_config(seed=seed, prices__model="random_walk"), clock)
    marks = []
    for _ in range(seconds):
        clock.advance(1000)
        engine.step()
        marks.append(engine.mark(BTC))
    return marks


def test_random_walk_is_deterministic_for_a_seed() -> None:
    assert walk(7, 120) == walk(7, 120)
    assert walk(7, 120) != walk(8, 120)


def test_random_walk_stays_on_the_tick_grid_and_moves() -> None:
    marks = walk(1, 300)
    assert all(m % Decimal("0.1") == 0 for m in marks)
    assert len(set(marks)) > 100
    assert all(Decimal(50000) < m < Decimal(70000) for m in marks)


def test_step_without_elapsed_time_does_nothing() -> None:
    clock = ManualClock(T0)
    engine = SimEngine(sim_config(prices__model="random_walk"), clock)
    engine.step()
    clock.advance(999)
    engine.step()
    assert engine.mark(BTC) == Decimal(60000)


def test_long_idle_gap_is_bounded_work_and_keeps_candles() -> None:
    clock = ManualClock(T0)
    engine = SimEngine(sim_config(prices__model="random_walk"), clock)
    clock.advance(30 * 24 * 3600 * 1000)  # a month idle: one jump, then the last hour stepwise
    engine.step()
    candles = engine.prices[BTC].candles(60_000, None, None, 1000)
    assert 60 <= len(candles) <= 62


def test_static_model_never_moves_by_itself() -> None:
    clock = ManualClock(T0)
    engine = SimEngine(sim_config(), clock)
    clock.advance(3_600_000)
    engine.step()
    assert engine.mark(BTC) == Decimal(60000)


def test_random_walk_fills_resting_orders_it_crosses() -> None:
    from botkit.exchange.models import OrderSide, OrderType
    from botkit.sim.orders import OrderInput

    clock = ManualClock(T0)
    engine = SimEngine(sim_config(seed=3, prices__model="random_walk"), clock)
    order = engine.place(
        OrderInput(BTC, OrderSide.BUY, OrderType.LIMIT, Decimal(1), px=Decimal("59990"))
    )
    for _ in range(3600):
        clock.advance(1000)
        engine.step()
        if order.state == "FILLED":
            break
    assert order.state == "FILLED"
    assert order.avg_px == Decimal("59990")  # a resting order fills at its own price


def test_set_mark_refuses_unknown_symbols_and_non_positive_prices() -> None:
    from botkit.sim import SimError

    engine = SimEngine(sim_config(), ManualClock(T0))
    with pytest.raises(SimError):
        engine.set_mark("NOPE", Decimal(1))
    with pytest.raises(ValueError, match="must be > 0"):
        engine.set_mark(BTC, Decimal(0))
