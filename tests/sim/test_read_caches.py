"""The cached account figures and SimPort reads give exactly what an uncached computation and the
wire give, after any sequence of orders, fills, settings and mark moves; old answers never change.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from botkit.exchange.models import (
    Balance,
    LimitPrice,
    MarginMode,
    OrderRequest,
    OrderSide,
    OrderType,
    Position,
    PositionMode,
    PosSide,
    Ticker,
)
from botkit.sim import SimEngine, SimError, load_sim_config
from botkit.sim.accounts import BalanceFigures, balance_figures, order_margin, position_figures
from botkit.sim.port import SimPort
from tests.sim.conftest import BTC, TST, Sim, sim_config, tst_instrument

_ZERO = Decimal(0)


# --- the uncached reference: the plain formulas of botkit.sim.accounts, called directly ----------
def reference_balance(e: SimEngine) -> BalanceFigures:
    acc = e.account
    positions = []
    for pos in acc.positions.values():
        inst = e.instruments[pos.symbol]
        lever = e.lever(pos.symbol, pos.mgn_mode, pos.pos_side)
        positions.append(
            (pos, position_figures(pos, e.prices[pos.symbol].mark, inst.ctVal, lever, inst.mM))
        )
    orders = [
        (
            order.mgn_mode,
            order_margin(
                order.remaining,
                order.px if order.px is not None else _ZERO,
                is_buy=order.is_buy,
                closing=order.closing,
                pos_qty=acc.position_qty(order.symbol, order.pos_side),
                ct_val=e.instruments[order.symbol].ctVal,
                lever=e.lever(order.symbol, order.mgn_mode, order.pos_side),
            ),
        )
        for order in e.matcher.open.values()
    ]
    return balance_figures(acc, positions, orders)


def reference_positions(e: SimEngine) -> list[tuple[Any, ...]]:
    held: dict[tuple[str, PosSide], Decimal] = {}
    for order in e.matcher.open.values():
        if order.closing:
            key = (order.symbol, order.pos_side)
            held[key] = held.get(key, _ZERO) + order.remaining
    out = []
    for key, pos in e.account.positions.items():
        inst = e.instruments[pos.symbol]
        mark = e.prices[pos.symbol].mark
        lever = e.lever(pos.symbol, pos.mgn_mode, pos.pos_side)
        f = position_figures(pos, mark, inst.ctVal, lever, inst.mM)
        avail = max(_ZERO, abs(pos.qty) - held.get(key, _ZERO))
        out.append((pos, repr(f), repr(mark), repr(lever), repr(avail)))
    return out


def exact(value: Any) -> Any:
    """A value with every Decimal as its repr (exponent and sign of zero count)."""
    if isinstance(value, BaseModel):
        return {k: exact(v) for k, v in value.__dict__.items()}
    if isinstance(value, list):
        return [exact(v) for v in value]
    return repr(value) if isinstance(value, Decimal) else value


def wire(value: Any) -> Any:
    """A value as the wire writes it: every Decimal as a plain decimal string."""
    if isinstance(value, BaseModel):
        return {k: wire(v) for k, v in value.__dict__.items()}
    if isinstance(value, list):
        return [wire(v) for v in value]
    return format(value, "f") if isinstance(value, Decimal) else value


# --- random sequences --------------------------------------------------------------------------
side = st.sampled_from(["BUY", "SELL"])
size = st.integers(2, 10).map(lambda n: n * 2)
action = st.one_of(
    st.tuples(st.just("market"), side, size, st.booleans(), st.booleans()),
    st.tuples(st.just("limit"), side, size, st.integers(-18, 18).map(lambda n: Decimal(n) / 2)),
    st.tuples(st.just("mark"), st.integers(-16, 16).map(lambda n: Decimal(n) / 2)),
    st.tuples(st.just("mark"), st.integers(-16, 16).map(lambda n: Decimal(n) / 2)),
    st.tuples(st.just("btc"), st.integers(-300, 300)),
    st.tuples(st.just("btc_market"), side, st.booleans()),
    st.tuples(st.just("cancel_all")),
    st.tuples(st.just("lever"), st.integers(1, 20), st.booleans()),
    st.tuples(st.just("wait"), st.integers(1, 3000)),
)


def run(sim: Sim, step: tuple[Any, ...], hedge: bool) -> None:
    mark = sim.engine.mark(TST)
    kind = step[0]
    try:
        if kind in ("market", "limit"):
            fields: dict[str, Any] = {"symbol": TST, "side": step[1], "sz": str(step[2])}
            if kind == "limit":
                fields.update(type="LIMIT", px=str(mark + step[3]))
            else:
                fields.update(type="MARKET")
                fields["mgnMode"] = "ISOLATED" if step[4] else "CROSS"
                if step[3] and not hedge:
                    fields["reduceOnly"] = True
            if hedge:
                closing = kind == "market" and step[3]
                fields["posSide"] = "LONG" if (step[1] == "BUY") != closing else "SHORT"
            sim.place(**fields)
        elif kind == "mark":
            sim.mark(str(max(Decimal(60), min(Decimal(140), mark + step[1]))), TST)
        elif kind == "btc":
            sim.mark(str(Decimal(60000) + step[1]), BTC)
        elif kind == "btc_market":
            leg = {"posSide": "LONG" if step[2] else "SHORT"} if hedge else {}
            sim.place(symbol=BTC, side=step[1], type="MARKET", sz="1", **leg)
        elif kind == "cancel_all":
            sim.delete("/v3/trade/allOrders", {"symbol": TST})
        elif kind == "lever":
            mode = "ISOLATED" if step[2] else "CROSS"
            sim.post(
                "/v3/position/leverage", {"symbol": TST, "lever": str(step[1]), "mgnMode": mode}
            )
        else:
            sim.clock.advance(step[1] * 1000)
    except SimError:
        pass
    sim.clock.advance(1000)


READS = ("equity", "balance", "positions", "port_balance", "port_positions", "port_positions_tst")
reads = st.lists(st.sampled_from(READS), unique=True, max_size=len(READS))
"""The reads a step makes first, in that order (maybe none, maybe only equity): what the caches
were left with by the earlier reads must not change any answer."""


def read_in_order(sim: Sim, port: SimPort, order: list[str]) -> None:
    """Read ``order`` first, then check each answer against the uncached reference and the wire
    (no wire read happens before: the wire reads the engine's caches too)."""
    e = sim.engine
    reference, positions = reference_balance(e), reference_positions(e)
    got: dict[str, Any] = {}
    for name in order:
        if name == "equity":
            got[name] = e.equity()
        elif name == "balance":
            got[name] = e.balance()
        elif name == "positions":
            got[name] = e.positions()
        elif name == "port_balance":
            got[name] = port.balance()
        elif name == "port_positions":
            got[name] = port.open_positions()
        else:
            got[name] = port.open_positions(TST)
    if "equity" in got:
        assert repr(got["equity"]) == repr(reference.eq)
    if "balance" in got:
        assert exact(got["balance"]) == exact(reference)
    if "positions" in got:
        assert [
            (op.position, repr(op.figures), repr(op.mark), repr(op.lever), repr(op.avail_qty))
            for op in got["positions"]
        ] == positions
    # the wire last, and only when a port answer needs it (it leaves the caches up to date)
    if "port_balance" in got:
        assert wire(got["port_balance"]) == wire(Balance.model_validate(sim.balance()))
    if "port_positions" in got or "port_positions_tst" in got:
        wire_positions = [Position.model_validate(p) for p in sim.positions()]
        if "port_positions" in got:
            assert exact(got["port_positions"]) == exact(port.open_positions())
            assert wire(got["port_positions"]) == wire(wire_positions)
        if "port_positions_tst" in got:
            tst_positions = [p for p in wire_positions if p.symbol == TST]
            assert wire(got["port_positions_tst"]) == wire(tst_positions)


def check(sim: Sim, port: SimPort) -> None:
    e = sim.engine
    reference = reference_balance(e)
    assert repr(e.equity()) == repr(reference.eq)
    assert exact(e.balance()) == exact(reference)
    assert repr(e.equity()) == repr(reference.eq)
    got = [
        (op.position, repr(op.figures), repr(op.mark), repr(op.lever), repr(op.avail_qty))
        for op in e.positions()
    ]
    assert got == reference_positions(e)
    assert wire(port.balance()) == wire(Balance.model_validate(sim.balance()))
    wire_positions = [Position.model_validate(p) for p in sim.positions()]
    assert wire(port.open_positions()) == wire(wire_positions)
    assert wire(port.open_positions(TST)) == wire([p for p in wire_positions if p.symbol == TST])
    assert wire(port.tickers()) == wire(
        [Ticker.model_validate(t) for t in sim.get("/v3/market/tickers")]
    )
    for symbol in (BTC, TST):
        (band,) = sim.get("/v3/market/limitPrice", symbol=symbol)
        assert wire(port.limit_price(symbol)) == wire(LimitPrice.model_validate(band))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    steps=st.lists(st.tuples(action, reads, st.booleans()), min_size=8, max_size=30),
    hedge=st.booleans(),
)
def test_cached_reads_equal_the_uncached_figures_and_the_wire(
    steps: list[tuple[tuple[Any, ...], list[str], bool]], hedge: bool
) -> None:
    base = load_sim_config(None)
    sim = Sim(
        sim_config(
            instruments=[base.instruments[0], tst_instrument()],
            position_mode=PositionMode.HEDGE if hedge else PositionMode.ONE_WAY,
        )
    )
    port = SimPort(sim.engine)
    before: list[tuple[Any, Any]] = []
    for step, order, full in steps:
        run(sim, step, hedge)
        read_in_order(sim, port, order)
        for model, seen in before:  # answers handed out earlier never change
            assert exact(model) == seen
        if full:  # else the next step's reads find the caches as this step's reads left them
            check(sim, port)
            answers = [port.balance(), port.open_positions(), port.tickers(), port.limit_price(TST)]
            before = [(a, exact(a)) for a in answers]


# --- the backtest's path: a position held while the mark moves ---------------------------------
def order(side: str, type: str = "MARKET", sz: str = "1", **kw: Any) -> OrderRequest:
    return OrderRequest.model_validate({"symbol": BTC, "side": side, "type": type, "sz": sz, **kw})


def test_mark_moves_with_a_position_and_resting_orders_match_the_wire(sim: Sim) -> None:
    port = SimPort(sim.engine)
    port.place_orders([order("BUY", sz="5")])
    ladder = [order("BUY", "LIMIT", px=str(59000 - 10 * i), clOrdId=f"b{i}") for i in range(6)]
    ladder += [order("SELL", "LIMIT", px=str(61000 + 10 * i), clOrdId=f"s{i}") for i in range(6)]
    port.place_orders(ladder[:10])
    port.place_orders(ladder[10:])
    for i, px in enumerate(["60010", "59990.5", "60100", "60000.0", "59950"]):
        sim.clock.advance(15_000)
        sim.mark(px)
        if i % 2:
            assert wire(port.tickers(BTC)) == wire(
                [Ticker.model_validate(t) for t in sim.get("/v3/market/tickers", symbol=BTC)]
            )
        assert wire(port.balance()) == wire(Balance.model_validate(sim.balance()))
        assert wire(port.open_positions()) == wire(
            [Position.model_validate(p) for p in sim.positions()]
        )
        (band,) = sim.get("/v3/market/limitPrice", symbol=BTC)
        assert wire(port.limit_price(BTC)) == wire(LimitPrice.model_validate(band))
        assert sim.engine.equity() == port.balance().eq
    assert len(port.open_orders(BTC)) == 12


def test_answers_are_shared_until_something_they_show_changes(sim: Sim) -> None:
    port = SimPort(sim.engine)
    balance, limit = port.balance(), port.limit_price(BTC)
    sim.mark("60100")  # no position: the balance does not depend on the mark
    assert port.balance() is balance
    assert port.limit_price(BTC) is not limit
    assert port.limit_price(BTC) is port.limit_price(BTC)
    port.place_orders([order("BUY")])
    held = port.balance()
    assert held is not balance
    assert port.balance() is held
    (position,) = port.open_positions()
    assert port.open_positions()[0] is position
    sim.mark("60200")
    moved = port.balance()
    assert moved is not held
    assert moved.upl == Decimal("0.10000000")
    assert (position.markPx, port.open_positions()[0].markPx) == (Decimal(60100), Decimal(60200))
    assert held.upl == Decimal("0E-8")  # the earlier answer still shows its own moment
    port.set_leverage(BTC, 10, mgn_mode=MarginMode.CROSS)
    assert port.open_positions()[0].lever == Decimal(10)
    assert port.balance() is not moved


def test_lists_are_fresh_and_models_frozen(sim: Sim) -> None:
    port = SimPort(sim.engine)
    port.place_orders([order("BUY")])
    first = port.open_positions()
    first.clear()
    assert len(port.open_positions()) == 1
    tickers = port.tickers()
    tickers.pop()
    assert len(port.tickers()) == 3
    balance, (position,) = port.balance(), port.open_positions()
    copy = balance.model_copy(update={"eq": Decimal(1), "note": "x"})
    assert (copy.eq, copy.model_extra) == (Decimal(1), {"note": "x"})
    moved = position.model_copy(update={"note": "y"}, deep=True)
    assert moved.model_extra == {"note": "y"}
    # the models built share their fields-set and (empty) extras: copies never touch them
    for model in (port.balance(), balance, *port.open_positions()):
        assert model.model_extra == {}
        assert model.model_fields_set == set(type(model).model_fields)
    assert port.balance() is balance
    assert balance.eq == Decimal("9999.96400000")


def test_equity_follows_fills_marks_and_leverage(sim: Sim) -> None:
    e = sim.engine
    assert e.equity() == Decimal(10000)
    port = SimPort(e)
    port.place_orders([order("SELL", sz="2")])
    for px in ("60500", "59000", "59000"):
        sim.mark(px)
        assert repr(e.equity()) == repr(reference_balance(e).eq)
    port.set_leverage(BTC, 3, mgn_mode=MarginMode.CROSS)
    assert repr(e.equity()) == repr(reference_balance(e).eq)
    port.place_orders([order("BUY", sz="2")])
    assert e.account.positions == {}
    assert repr(e.equity()) == repr(reference_balance(e).eq)


def test_equity_with_hedge_legs_on_two_symbols(make_sim: Any) -> None:
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], position_mode=PositionMode.HEDGE
    )
    port = SimPort(sim.engine)
    legs = [
        order("BUY", mgnMode="CROSS", posSide="LONG"),
        order("SELL", mgnMode="ISOLATED", posSide="SHORT"),
        order("BUY", mgnMode="CROSS", posSide="LONG").model_copy(
            update={"symbol": TST, "sz": Decimal(4)}
        ),
    ]
    assert all(r.accepted for r in port.place_orders(legs))
    for btc, tst in (("60100", "101"), ("59900", "99.5")):
        sim.mark(btc)
        sim.mark(tst, TST)
        assert exact(sim.engine.balance()) == exact(reference_balance(sim.engine))
        assert wire(port.open_positions(TST)) == wire(
            [Position.model_validate(p) for p in sim.positions() if p["symbol"] == TST]
        )
    assert [p.posSide for p in port.open_positions(BTC)] == [PosSide.LONG, PosSide.SHORT]
    assert port.open_positions()[1].side is OrderSide.SELL
    assert OrderType.MARKET.value == "MARKET"


# --- the order of the reads: positions only, then the balance; the balance first; equity alone --
def _held_with_ladder(sim: Sim) -> SimPort:
    port = SimPort(sim.engine)
    port.place_orders([order("BUY", sz="5")])
    sim.mark("60123.4")
    port.place_orders([order("BUY", sz="2")])  # an average price with eight decimals
    ladder = [order("BUY", "LIMIT", px=str(59000 - 10 * i), clOrdId=f"b{i}") for i in range(6)]
    port.place_orders(ladder)
    return port


def test_positions_read_alone_then_the_balance_after_each_move(sim: Sim) -> None:
    port = _held_with_ladder(sim)
    for px in ("60010.1", "59990.5", "60100", "59950.37"):
        sim.clock.advance(15_000)
        sim.mark(px)
        reference = reference_balance(sim.engine)
        positions = port.open_positions()  # a cycle that stops at position.qty
        book = sim.engine.figures.marked()
        assert book.summed != book.stamp  # the balance totals wait for a balance read
        assert repr(sim.engine.equity()) == repr(reference.eq)
        assert book.summed != book.stamp  # equity sums no totals either
        balance = port.balance()
        assert exact(sim.engine.balance()) == exact(reference)
        assert wire(balance) == wire(Balance.model_validate(sim.balance()))
        assert wire(positions) == wire([Position.model_validate(p) for p in sim.positions()])
        assert port.open_positions()[0] is positions[0]


def test_balance_read_first_then_the_positions_after_each_move(sim: Sim) -> None:
    port = _held_with_ladder(sim)
    for px in ("60010.1", "59990.5", "60100", "59950.37"):
        sim.clock.advance(15_000)
        sim.mark(px)
        reference, expected = reference_balance(sim.engine), reference_positions(sim.engine)
        balance = port.balance()
        positions = port.open_positions()
        assert [
            (op.position, repr(op.figures), repr(op.mark), repr(op.lever), repr(op.avail_qty))
            for op in sim.engine.positions()
        ] == expected
        assert repr(sim.engine.equity()) == repr(reference.eq)
        assert exact(sim.engine.balance()) == exact(reference)
        assert wire(balance) == wire(Balance.model_validate(sim.balance()))
        assert wire(positions) == wire([Position.model_validate(p) for p in sim.positions()])
        assert port.balance() is balance


def test_equity_alone_over_moves_nothing_reads_then_every_read(make_sim: Any) -> None:
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], position_mode=PositionMode.HEDGE
    )
    port = SimPort(sim.engine)
    legs = [
        order("BUY", mgnMode="CROSS", posSide="LONG"),
        order("SELL", mgnMode="ISOLATED", posSide="SHORT", sz="2"),
        order("BUY", mgnMode="ISOLATED", posSide="LONG").model_copy(
            update={"symbol": TST, "sz": Decimal(4)}
        ),
    ]
    assert all(r.accepted for r in port.place_orders(legs))
    port.balance()
    moves = [("60100.5", BTC), ("101.25", TST), ("59900", BTC), ("99.5", TST), ("60000.01", BTC)]
    for i, (px, symbol) in enumerate(moves):
        sim.mark(px, symbol)
        assert repr(sim.engine.equity()) == repr(reference_balance(sim.engine).eq)
        if i == 2:  # positions read in between: the next move leaves one symbol's legs behind
            assert wire(port.open_positions(TST)) == wire(
                [Position.model_validate(p) for p in sim.positions() if p["symbol"] == TST]
            )
    reference, expected = reference_balance(sim.engine), reference_positions(sim.engine)
    positions, balance = port.open_positions(), port.balance()
    assert exact(sim.engine.balance()) == exact(reference)
    assert [
        (op.position, repr(op.figures), repr(op.mark), repr(op.lever), repr(op.avail_qty))
        for op in sim.engine.positions()
    ] == expected
    assert wire(balance) == wire(Balance.model_validate(sim.balance()))
    assert wire(positions) == wire([Position.model_validate(p) for p in sim.positions()])


# --- the backtest's fast-forward: the quiet band, marks passed quietly, equity at many marks --
def test_the_quiet_band_is_the_best_resting_bid_and_ask(sim: Sim) -> None:
    e = sim.engine
    assert e.quiet_band(BTC) == (Decimal("-Infinity"), Decimal("Infinity"))
    port = SimPort(e)
    port.place_orders([
        order("BUY", "LIMIT", px="59000", clOrdId="b1"),
        order("BUY", "LIMIT", px="59500", clOrdId="b2"),
        order("SELL", "LIMIT", px="61000", clOrdId="s1"),
    ])  # fmt: skip
    assert e.quiet_band(BTC) == (Decimal("59500"), Decimal("61000"))
    with pytest.raises(SimError):
        e.quiet_band("NOPE")


def test_marks_passed_quietly_are_recorded_as_set_mark_records_them(make_sim: Any) -> None:
    plain, quick = make_sim(), make_sim()
    for s in (plain, quick):
        SimPort(s.engine).place_orders([order("BUY", "LIMIT", px="59000", clOrdId="b1")])
    points = [(plain.clock.now_ms() + 15_000 * i, Decimal(60000 + 7 * (i % 5))) for i in range(9)]
    for at, px in points:
        plain.clock.set(at)
        plain.engine.set_mark(BTC, px)
    quick.engine.pass_quietly(BTC, points, len(points))
    a, b = plain.engine.prices[BTC], quick.engine.prices[BTC]
    assert (b.mark, b.current, b.since(0)) == (a.mark, a.current, a.since(0))
    assert b.day_stats(points[-1][0]) == a.day_stats(points[-1][0])
    assert quick.engine.mark_rev == plain.engine.mark_rev
    with pytest.raises(ValueError, match="outside the band"):  # it would have filled
        quick.engine.pass_quietly(BTC, [(points[-1][0] + 1, Decimal(59000))], 1)


def test_equity_at_many_marks_is_equity_after_each_mark(make_sim: Any) -> None:
    base = load_sim_config(None)
    sim = make_sim(
        instruments=[base.instruments[0], tst_instrument()], position_mode=PositionMode.HEDGE
    )
    port = SimPort(sim.engine)
    assert all(r.accepted for r in port.place_orders([
        order("BUY", mgnMode="CROSS", posSide="LONG", sz="3"),
        order("SELL", mgnMode="ISOLATED", posSide="SHORT"),
        order("BUY", mgnMode="CROSS", posSide="LONG").model_copy(
            update={"symbol": TST, "sz": Decimal(4)}
        ),
    ]))  # fmt: skip
    sim.mark("101.5", TST)
    marks = [Decimal(x) for x in ("60100", "59900.5", "60100.0", "61234.5", "60100")]
    got = sim.engine.equity_at(BTC, marks)
    for mark, equity in zip(marks, got, strict=True):
        sim.mark(str(mark))
        assert repr(equity) == repr(sim.engine.equity()) == repr(reference_balance(sim.engine).eq)


@pytest.mark.parametrize("mode", ["CROSS", "ISOLATED"])
def test_a_ladder_placed_rung_by_rung_takes_each_margin_without_a_rebuild(
    sim: Sim, mode: str
) -> None:
    """Each rung is checked against the margin available with the rungs before it resting: the
    book takes a resting rung's margin (issue 20) instead of rebuilding every order's, and its
    figures stay the uncached ones."""
    port = SimPort(sim.engine)
    port.place_orders([order("BUY", sz="5", mgnMode=mode)])
    figures = sim.engine.figures
    number = figures.current().number
    ladder = [
        order("BUY", "LIMIT", px=str(59000 - 10 * i), clOrdId=f"b{i}", mgnMode=mode)
        for i in range(10)
    ]
    outcomes = port.place_orders(ladder)
    assert all(o.accepted for o in outcomes)
    assert figures.current().number == number  # not rebuilt once per rung
    assert exact(sim.engine.balance()) == exact(reference_balance(sim.engine))
    assert wire(port.balance()) == wire(Balance.model_validate(sim.balance()))
    sim.mark("60050.5")
    assert exact(sim.engine.balance()) == exact(reference_balance(sim.engine))
    port.place_orders([order("SELL", "LIMIT", px="61000", sz="2", reduceOnly=True, mgnMode=mode)])
    assert figures.current().number != number  # a closing order changes a leg: rebuilt
    assert exact(sim.engine.balance()) == exact(reference_balance(sim.engine))
    got = [
        (op.position, repr(op.figures), repr(op.mark), repr(op.lever), repr(op.avail_qty))
        for op in sim.engine.positions()
    ]
    assert got == reference_positions(sim.engine)
