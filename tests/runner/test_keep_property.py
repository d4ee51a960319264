"""A property of keep: rules on the simulator, over random marks, fills, edits and faults.

After every cycle: no client order id was ever sent twice (the simulator refuses a repeated one
with 250, and the journal holds each once) and no rung of the grid rests twice. After every
cycle that met no fault, the resting orders are exactly the declared grid, each within the
tolerance of its declared price (a cycle with a fault may leave a replacement for the next one:
the cancel it waits for did not go through).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botkit.journal import OrderFilter
from botkit.rules.ids import parse_client_order_id
from tests.runner.conftest import make_rig, open_orders

SYMBOL = "BTC_USDT_PERP"
MINUTE = 60_000
TICK = Decimal("0.1")
TOLERANCE_BPS = Decimal(10)

GRID = """\
strategy: grid
symbol: BTC_USDT_PERP
every: 1m
params: {{step: {step}, levels: {levels}}}
rules:
  - name: grid
    keep:
      grid: {{center: price.mark, step_px: price.mark * params.step, levels: params.levels, sz: 1}}
      tolerance: 10 bps
"""

FAULTS = [
    ("drop_after", "POST", "/v3/trade/orders"),  # placed, answer lost: looked up
    ("drop_before", "POST", "/v3/trade/orders"),  # never arrived: looked up, not there
    ("http_500", "POST", "/v3/trade/orders"),
    ("drop_after", "DELETE", "/v3/trade/batchOrders"),
    ("http_500", "DELETE", "/v3/trade/batchOrders"),
    ("truncated", "GET", "/v3/trade/order/opens"),
]

steps = st.lists(
    st.tuples(
        st.integers(min_value=-150, max_value=150),  # the mark moves this many bps
        st.none() | st.tuples(st.sampled_from(["0.001", "0.002", "0.004"]), st.integers(1, 4)),
        st.none() | st.sampled_from(range(len(FAULTS))),
        st.booleans(),  # the next cycle evaluates the same slot again (SIGHUP)
    ),
    min_size=1,
    max_size=10,
)


def rig_sleep(seconds: float) -> None:
    """Back-offs take no time here (the faults last one cycle)."""


def declared(mark: Decimal, step: str, levels: int) -> dict[int, Decimal]:
    out: dict[int, Decimal] = {}
    for k in range(levels):
        gap = mark * Decimal(step) * (k + 1)
        out[2 * k] = ((mark - gap) / TICK).to_integral_value(ROUND_FLOOR) * TICK
        out[2 * k + 1] = ((mark + gap) / TICK).to_integral_value(ROUND_CEILING) * TICK
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(steps)
def test_resting_orders_follow_the_declared_grid(
    moves: list[tuple[int, tuple[str, int] | None, int | None, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rig = make_rig(Path(tmp), sleep=rig_sleep)
        try:
            step, levels = "0.002", 3
            rig.write("grid.yaml", GRID.format(step=step, levels=levels))
            mark = Decimal(60000)
            for bps, edit, fault, again in [(0, None, None, False), *moves]:
                mark = (mark * (1 + Decimal(bps) / 10_000) / TICK).to_integral_value() * TICK
                rig.sim.set_mark(SYMBOL, mark)  # fills the rungs it crosses
                if edit is not None:
                    step, levels = edit
                    rig.write("grid.yaml", GRID.format(step=step, levels=levels))
                if fault is not None:
                    kind, method, path = FAULTS[fault]
                    rig.sim.faults.add(kind, method=method, path=path, every=1)
                report = rig.runner.run_cycle()
                rig.sim.faults.clear()
                if again:
                    rig.runner.force_due()
                else:
                    rig.advance(MINUTE)

                rows = rig.journal.orders(OrderFilter())
                sent = Counter(r.cl_ord_id for r in rows)
                assert max(sent.values(), default=0) <= 1
                assert not [r for r in rows if r.code == 250], "a client order id was sent twice"
                resting = open_orders(rig)
                rungs = Counter(parse_client_order_id(o.clOrdId).leg for o in resting)  # type: ignore[union-attr]
                assert max(rungs.values(), default=0) <= 1, "a rung rests twice"
                if fault is not None or not report.ok:
                    continue
                want = declared(mark, step, levels)
                have = {parse_client_order_id(o.clOrdId).leg: o.px for o in resting}  # type: ignore[union-attr]
                assert set(have) == set(want), (have, want)
                for rung, px in have.items():
                    assert px is not None
                    assert abs(px - want[rung]) / px * 10_000 <= TOLERANCE_BPS, (rung, px, want)
        finally:
            rig.client.close()
            rig.journal.close()
