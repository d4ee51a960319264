"""The simulator's placement without its slower steps (issue 20): an amount's text read by str
methods instead of a regex, and a resting rung's margin taken into the balance totals without
summing the legs again or dividing for the margin ratios until they are read. Each must give
what the plain way gives, for any text and any ladder."""

from __future__ import annotations

import re
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.exchange.models import OrderRequest
from botkit.sim import codes
from botkit.sim.orders import text_on_step
from botkit.sim.port import SimPort
from tests.sim.conftest import BTC, Sim, sim_config
from tests.sim.test_read_caches import reference_balance

_PLAIN = re.compile(r"[0-9]+(?:\.([0-9]+))?")
"""The model: a plain decimal number's text."""

_TEXT = st.one_of(
    st.text(alphabet="0123456789.", max_size=8),
    st.text(alphabet="0123456789.-+eE ²٣\n", max_size=8),
    st.text(max_size=6),
)


@settings(max_examples=400, deadline=None)
@given(
    text=_TEXT,
    step=st.sampled_from([Decimal(1), Decimal("0.1"), Decimal("0.50"), Decimal("0.001")]),
)
def test_text_on_step_reads_the_text_as_the_regex_does(text: str, step: Decimal) -> None:
    got = text_on_step("px", text, step, "tSz")
    match = _PLAIN.fullmatch(text)
    if match is None:
        assert got is not None
        assert got[0] == codes.BAD_PARAM
        assert "not a plain decimal" in got[1]
        return
    allowed = -min(0, int(step.normalize().as_tuple().exponent))
    decimals = len(match.group(1) or "")
    assert (got is None) == (decimals <= allowed)
    if got is not None:
        assert f"has {decimals} decimal(s)" in got[1]


def _exact(b: object) -> list[str]:
    return [repr(getattr(b, f)) for f in ("eq", "im", "avail", "mmr", "imr", "iso_eq", "upl")]


@settings(max_examples=40, deadline=None)
@given(
    position=st.sampled_from([None, "BUY", "SELL"]),
    mode=st.sampled_from(["CROSS", "ISOLATED"]),
    rungs=st.lists(st.integers(1, 200), min_size=1, max_size=12),
    read_between=st.booleans(),
    move=st.sampled_from([None, "60010.5", "59990"]),
)
def test_a_ladder_rung_by_rung_keeps_the_uncached_totals(
    position: str | None, mode: str, rungs: list[int], read_between: bool, move: str | None
) -> None:
    """Each rung is checked against the margin available with the rungs before it resting,
    and the balance read at any point (before, between, after, after a move of the mark) is
    the plain formulas' figure for figure, margin ratios included."""
    sim = Sim(sim_config())
    port = SimPort(sim.engine)
    if position is not None:
        opened = OrderRequest(symbol=BTC, side=position, type="MARKET", sz=Decimal(3), mgnMode=mode)
        assert all(r.accepted for r in port.place_orders([opened]))
    engine = sim.engine
    assert _exact(engine.balance()) == _exact(reference_balance(engine))
    for i, depth in enumerate(rungs):
        rung = OrderRequest(
            symbol=BTC,
            side="BUY",
            type="LIMIT",
            sz=Decimal(1 + i % 3),
            px=Decimal(59_500 - 10 * depth),
            clOrdId=f"r{i}",
            mgnMode=mode,
        )
        (result,) = port.place_orders([rung])
        assert result.accepted, result
        if read_between:
            assert _exact(engine.balance()) == _exact(reference_balance(engine))
            assert engine.figures.current().avail == reference_balance(engine).avail
        if move is not None and i == len(rungs) // 2:
            sim.mark(move)
    assert _exact(engine.balance()) == _exact(reference_balance(engine))
