"""A huge size or price never stops a strategy beside it: ``botkit check`` refuses a constant
one with its location, the pipeline refuses any one with a reason (never an exception), and a
strategy whose planning fails has its orders refused while the others are planned as usual."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.cli import main
from botkit.exchange.models import OrderSide
from botkit.journal import Outcome
from botkit.pipeline import build_plan
from tests.pipeline.helpers import D, instrument, intent, snapshot
from tests.runner.conftest import ONE_ORDER, Rig

LITERAL = """\
strategy: literal
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: big
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.99, sz: 10 ** 60}
"""

COMPUTED = """\
    strategy: computed
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: big
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.99, sz: price.mark ** 20}
"""


@pytest.mark.parametrize(
    ("action", "line"),
    [
        ("close: {sz: 0}", "sz: 0 is not above zero — write a size above 0"),
        ("close: {sz: -1, px: 100}", "sz: -1 is not above zero — write a size above 0"),
        ("place: {order: {side: BUY, px: 0 - 5, sz: 1}}", "px: -5 is not above zero"),
        (
            "place: {ladder: {side: BUY, count: 2, from_px: 0, step_px: 1, sz: 1}}",
            "from_px: 0 is not above zero — write a price above 0",
        ),
    ],
)
def test_check_refuses_a_constant_size_or_price_at_or_below_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str, line: str
) -> None:
    path = tmp_path / "zero.yaml"
    path.write_text(LITERAL.replace("big", "zero").split("    place:")[0] + f"    {action}\n")
    assert main(["check", str(path), "--instruments", "none"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:7:")
    assert line in out[0]
    assert out[-1] == "1 problem"


def test_check_refuses_a_constant_huge_size_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "literal.yaml"
    path.write_text(LITERAL)
    assert main(["check", str(path), "--instruments", "none"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:8:")
    assert "sz: 1e+60 is beyond any order (at most 1e+15)" in out[0]
    assert out[-1] == "1 problem"


def test_a_computed_huge_size_is_refused_and_the_strategy_beside_it_places(rig: Rig) -> None:
    rig.write("computed.yaml", COMPUTED)
    rig.write("one.yaml", ONE_ORDER)
    report = rig.runner.run_cycle()
    assert report.ok, report.error
    by_strategy = {o.strategy: o for o in rig.journal.orders()}
    assert by_strategy["one-order"].outcome is Outcome.ACCEPTED
    huge = by_strategy["computed"]
    assert huge.outcome is Outcome.REJECTED_LOCAL
    assert huge.reasons[0].startswith("sz_too_large: size 3.65616e+95 is beyond any order")
    rig.advance(60_000)
    assert rig.runner.run_cycle().ok  # and the next cycle too


def test_a_strategy_whose_planning_fails_is_refused_with_its_name_and_the_others_go() -> None:
    broken = instrument(symbol="ETH_USDT_PERP").model_copy(update={"lotSz": "not a number"})
    plan = build_plan(
        [
            intent(0, strategy="good"),
            intent(1, strategy="bad", symbol="ETH_USDT_PERP"),
            intent(2, strategy="bad", side=OrderSide.SELL, px="101"),
        ],
        snapshot(instruments={"BTC_USDT_PERP": instrument(), "ETH_USDT_PERP": broken}),
    )
    assert [o.intent.strategy for o in plan.accepted] == ["good"]
    assert {r.intent.strategy for r in plan.refused} == {"bad"}
    assert all(r.reasons[0].code == "planning_failed" for r in plan.refused)
    assert "planning strategy bad failed (TypeError" in plan.refused[0].reasons[0].message
    assert plan.accepted[0].request.sz == D(1)
