"""``SimEngine.figures_between`` bounds what the reads give at any mark of a range.

After random orders, fills, leverage changes and mark moves (one-way and hedge, isolated and
cross, positions on two symbols, orders resting), the bounds over a range of one symbol's marks
inside its quiet band are taken; then the mark is moved to points of that range (nothing
fills) and every figure the port's reads give — each position's upl, im, mgn, mm and markPx,
the balance's eq, upl, im, mm and availMgn — is inside its bounds.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botkit.exchange.models import PositionMode
from botkit.sim import load_sim_config
from botkit.sim.port import SimPort
from tests.sim.conftest import TST, Sim, sim_config, tst_instrument
from tests.sim.test_read_caches import action, run

POSITION_FIGURES = ("upl", "im", "mgn", "mm", "markPx")
ACCOUNT_FIGURES = ("eq", "upl", "im", "mm", "availMgn")


def _inside(bounds: tuple[Decimal, Decimal], value: Any, what: str) -> None:
    lo, hi = bounds
    assert lo <= value <= hi, f"{what}: {value} outside [{lo}, {hi}]"


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    steps=st.lists(action, min_size=4, max_size=20),
    hedge=st.booleans(),
    ends=st.tuples(st.integers(0, 1000), st.integers(0, 1000)),
    points=st.lists(st.integers(0, 1000), min_size=1, max_size=6),
)
def test_every_figure_read_at_a_mark_of_the_range_is_inside_its_bounds(
    steps: list[tuple[Any, ...]], hedge: bool, ends: tuple[int, int], points: list[int]
) -> None:
    base = load_sim_config(None)
    sim = Sim(
        sim_config(
            instruments=[base.instruments[0], tst_instrument()],
            position_mode=PositionMode.HEDGE if hedge else PositionMode.ONE_WAY,
        )
    )
    port = SimPort(sim.engine)
    for step in steps:
        run(sim, step, hedge)
    engine = sim.engine
    bid, ask = engine.quiet_band(TST)
    floor = max(bid, Decimal(60))  # the instrument's own limits and the band's
    top = min(ask, Decimal(140))
    if not floor < top:
        return

    def at(share: int) -> Decimal:
        """A mark strictly inside (floor, top), ``share`` thousandths of the way."""
        return floor + (top - floor) * (Decimal(share) + Decimal("0.5")) / Decimal("1001")

    lo, hi = sorted((at(ends[0]), at(ends[1])))
    bounds = engine.figures_between(TST, lo, hi)
    assert bounds is not None
    assert bounds.mark == (lo, hi)
    marks = [lo, hi] + [lo + (hi - lo) * Decimal(p) / 1000 for p in points]
    for mark in marks:
        sim.clock.advance(1000)
        engine.set_mark(TST, mark)
        assert engine.quiet_band(TST) == (bid, ask)  # nothing filled: the same book
        for position in port.open_positions():
            leg = bounds.positions[(position.symbol, position.posSide)]
            for name in POSITION_FIGURES:
                _inside(leg[name], getattr(position, name), f"{position.symbol} {name}")
        balance = port.balance()
        for name in ACCOUNT_FIGURES:
            _inside(bounds.account[name], getattr(balance, name), name)


def test_a_long_positions_bounds_are_its_figures_at_the_ends(sim: Sim) -> None:
    """With one long position and nothing resting: the upl, im and equity bounds are the
    figures read at the two ends, and the available margin's are wider (equity and margin
    move together)."""
    port = SimPort(sim.engine)
    sim.place(symbol="BTC_USDT_PERP", side="BUY", type="MARKET", sz="5")
    engine = sim.engine
    lo, hi = Decimal("59000.5"), Decimal("61000.5")
    bounds = engine.figures_between("BTC_USDT_PERP", lo, hi)
    assert bounds is not None
    read: dict[Decimal, Any] = {}
    for mark in (lo, hi):
        sim.mark(str(mark))
        (position,) = port.open_positions()
        read[mark] = (position, port.balance())
    ((position_lo, balance_lo), (position_hi, balance_hi)) = read[lo], read[hi]
    (leg,) = bounds.positions.values()
    assert leg["upl"] == (position_lo.upl, position_hi.upl)
    assert leg["im"] == (position_lo.im, position_hi.im)
    assert bounds.account["eq"] == (balance_lo.eq, balance_hi.eq)
    low, high = bounds.account["availMgn"]
    assert low <= min(balance_lo.availMgn, balance_hi.availMgn)
    assert high >= max(balance_lo.availMgn, balance_hi.availMgn)
