"""The legs' figures ``SimEngine.figures_between`` keeps are those of the book as it is.

:meth:`~botkit.sim.figures.AccountFigures.between` keeps each leg's figures at the ends of the
ranges it was asked for (:meth:`~botkit.sim.figures.Leg.figures_at`: one stretch's proofs share
their ends). After random orders, fills, leverage changes and mark moves, with the bounds asked
for between the steps at ends drawn from a few marks (so that ends come back, before and after
the position changes), every answer is the one a fresh computation gives: the account's own
figures object, and a new one that has kept nothing.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botkit.exchange.models import PositionMode
from botkit.sim import SimEngine, load_sim_config
from botkit.sim.accounts import leg_figures
from botkit.sim.figures import AccountFigures, MarkBounds
from tests.sim.conftest import TST, Sim, sim_config, tst_instrument
from tests.sim.test_read_caches import action, run

MARKS = [Decimal(m) for m in ("95", "99.5", "100", "100.50", "101", "104")]


def _plain(bounds: MarkBounds | None) -> Any:
    if bounds is None:
        return None
    return (
        bounds.mark,
        {k: dict(v) for k, v in bounds.positions.items()},
        dict(bounds.account),
    )


def _legs(engine: SimEngine, lo: Decimal, hi: Decimal) -> dict[Any, dict[str, Any]]:
    """Each position's bounds of ``TST`` over ``[lo, hi]`` from the plain formulas."""
    out = {}
    inst = engine.instruments[TST]
    for pos in engine.account.positions.values():
        if pos.symbol != TST:
            continue
        lever = engine.lever(TST, pos.mgn_mode, pos.pos_side)
        size, signed = abs(pos.qty) * inst.ctVal, pos.qty * inst.ctVal
        _, upl_a, im_a, mm_a = leg_figures(size, signed, pos.avg_px, lo, lever, inst.mM)
        _, upl_b, im_b, mm_b = leg_figures(size, signed, pos.avg_px, hi, lever, inst.mM)
        out[(TST, pos.pos_side)] = {
            "upl": (min(upl_a, upl_b), max(upl_a, upl_b)),
            "im": (im_a, im_b),
            "mgn": (im_a, im_b),
            "mm": (mm_a, mm_b),
            "markPx": (lo, hi),
        }
    return out


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    steps=st.lists(
        st.tuples(action, st.lists(st.tuples(st.sampled_from(MARKS), st.sampled_from(MARKS)))),
        min_size=2,
        max_size=16,
    ),
    hedge=st.booleans(),
)
def test_bounds_asked_again_after_any_step_are_those_of_a_fresh_computation(
    steps: list[tuple[tuple[Any, ...], list[tuple[Decimal, Decimal]]]], hedge: bool
) -> None:
    base = load_sim_config(None)
    sim = Sim(
        sim_config(
            instruments=[base.instruments[0], tst_instrument()],
            position_mode=PositionMode.HEDGE if hedge else PositionMode.ONE_WAY,
        )
    )
    engine = sim.engine
    series = engine.prices[TST]
    for step, ends in steps:
        run(sim, step, hedge)
        for a, b in ends:
            lo, hi = min(a, b), max(a, b)
            kept = engine.figures_between(TST, lo, hi)
            fresh = AccountFigures(engine).between(series, lo, hi)
            assert _plain(kept) == _plain(fresh)
            assert kept is not None
            mine = {k: v for k, v in kept.positions.items() if k[0] == TST}
            assert mine == _legs(engine, lo, hi)
