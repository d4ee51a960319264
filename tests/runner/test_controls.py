"""The operator's stop controls through the runner on the simulator: the kill switch stops new
risk but lets exits and cancels through; the halt stops everything."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from botkit.exchange.models import OrderRequest, OrderSide, OrderType
from botkit.journal import OrderFilter, Outcome
from botkit.pipeline import GuardSettings
from tests.runner.conftest import Rig, open_orders

MINUTE = 60_000
SYMBOL = "BTC_USDT_PERP"

EXITS = """\
    strategy: exits
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: stop-loss
        when: position.qty > 0
        close: {}
      - name: add-more
        when: position.qty > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.99, sz: 1}
"""

RESTING = """\
    strategy: resting
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: rest
        when: price.mark > 0
        place:
          order: {side: BUY, type: LIMIT, px: price.mark * 0.97, sz: 1}
        keep_open: true
"""

CANCELLING = """\
    strategy: resting
    symbol: BTC_USDT_PERP
    every: 1m
    rules:
      - name: pull
        when: price.mark > 0
        cancel: {}
"""


def _open_long(rig: Rig, sz: str = "3") -> None:
    (result,) = rig.client.place_orders(
        [OrderRequest(symbol=SYMBOL, side=OrderSide.BUY, type=OrderType.MARKET, sz=Decimal(sz))]
    )
    assert result.accepted, result
    assert _position(rig) == Decimal(sz)


def _position(rig: Rig) -> Decimal:
    return sum((p.qty or Decimal(0) for p in rig.client.open_positions(SYMBOL)), Decimal(0))


def _reasons(rig: Rig, rule: str) -> list[tuple[Outcome | None, tuple[str, ...]]]:
    return [(r.outcome, r.reasons) for r in rig.journal.orders(OrderFilter(rule=rule))]


def test_the_kill_switch_lets_a_reduce_only_close_through_and_refuses_new_risk(rig: Rig) -> None:
    _open_long(rig)
    rig.runner.guards = GuardSettings(kill_switch=True)
    rig.write("exits.yaml", EXITS)
    report = rig.runner.run_cycle()
    assert report.ok
    assert _position(rig) == 0  # the stop-loss fired: the position is closed
    assert open_orders(rig) == []  # the new BUY was not sent
    ((outcome, _),) = _reasons(rig, "stop-loss")
    assert outcome is Outcome.ACCEPTED
    ((refused, reasons),) = _reasons(rig, "add-more")
    assert refused is Outcome.REJECTED_LOCAL
    assert reasons[0].startswith("kill_switch:")
    assert [t.guard for t in rig.journal.trips()] == ["kill_switch"]
    assert report.plan is not None
    assert "reduce-only orders and cancels still go out" in report.plan.render()


def test_the_kill_switch_lets_cancels_through(rig: Rig) -> None:
    rig.write("resting.yaml", RESTING)
    rig.runner.run_cycle()
    assert len(open_orders(rig)) == 1
    rig.runner.guards = GuardSettings(kill_switch=True)
    rig.write("resting.yaml", CANCELLING)
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert open_orders(rig) == []
    assert [(e.action, e.ok) for e in report.effects] == [("cancel", True)]


def test_the_kill_switch_file_engages_and_releases_and_the_journal_says_when(
    rig: Rig, tmp_path: Path
) -> None:
    flag = tmp_path / "STOP"
    rig.runner.guards = GuardSettings(kill_switch_file=str(flag))
    rig.write("resting.yaml", RESTING)
    flag.touch()
    rig.runner.run_cycle()
    assert open_orders(rig) == []
    flag.unlink()
    rig.advance(MINUTE)
    rig.runner.run_cycle()
    assert len(open_orders(rig)) == 1
    texts = [e.text for e in rig.journal.events_after(0) if e.kind == "controls"]
    assert len(texts) == 2
    assert "kill switch: ENGAGED — kill switch file" in texts[0]
    assert "kill switch: off" in texts[1]


def test_the_halt_sends_nothing_not_even_a_close_or_a_cancel(rig: Rig, tmp_path: Path) -> None:
    rig.write("resting.yaml", RESTING)
    rig.runner.run_cycle()
    (resting,) = open_orders(rig)
    _open_long(rig)
    halt = tmp_path / "HALT"
    halt.touch()
    rig.runner.guards = GuardSettings(halt_file=str(halt))
    rig.write("resting.yaml", CANCELLING)
    rig.write("exits.yaml", EXITS)
    rig.advance(MINUTE)
    report = rig.runner.run_cycle()
    assert report.ok
    assert _position(rig) == Decimal(3)  # the close was not sent
    assert [o.ordId for o in open_orders(rig)] == [resting.ordId]  # nor the cancel
    for rule in ("stop-loss", "add-more"):
        ((outcome, reasons),) = _reasons(rig, rule)
        assert outcome is Outcome.REJECTED_LOCAL
        assert reasons[0].startswith("halt: halt file")
    assert [(e.action, e.ok) for e in report.effects] == [("cancel", False)]
    halted = [e for e in rig.journal.events_after(0) if e.kind == "halt"]
    assert len(halted) == 1
    assert "cancel 1 order(s) not sent: halt file" in halted[0].text
    # a strategy whose file goes while halted keeps its orders too (on_delete: cancel)
    (rig.strategies / "resting.yaml").unlink()
    rig.advance(MINUTE)
    rig.runner.run_cycle()
    assert [o.ordId for o in open_orders(rig)] == [resting.ordId]
    # and once the halt is released, the exits go out
    halt.unlink()
    rig.advance(MINUTE)
    rig.runner.run_cycle()
    assert _position(rig) == 0
