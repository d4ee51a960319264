"""Balance invariants: whatever happens, equity, margins and PnL agree with positions and orders."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botkit.exchange.models import PositionMode
from botkit.sim import SimError, load_sim_config
from tests.sim.conftest import TST, Sim, sim_config, tst_instrument

INITIAL = Decimal(10000)

action = st.one_of(
    st.tuples(
        st.just("market"),
        st.sampled_from(["BUY", "SELL"]),
        st.integers(2, 10).map(lambda n: n * 2),
        st.booleans(),
    ),
    st.tuples(
        st.just("limit"),
        st.sampled_from(["BUY", "SELL"]),
        st.integers(2, 10).map(lambda n: n * 2),
        st.integers(-18, 18).map(lambda n: Decimal(n) / 2),
    ),
    st.tuples(st.just("mark"), st.integers(-16, 16).map(lambda n: Decimal(n) / 2)),
    st.tuples(st.just("cancel_all")),
    st.tuples(st.just("lever"), st.integers(1, 20)),
)


def every(sim: Sim, path: str) -> list[dict[str, Any]]:
    """All records of a history path, paged back with from / limit."""
    out: list[dict[str, Any]] = []
    query = {"limit": "100", "sTime": "0"}
    while True:
        page = sim.get(path, **query)
        out += page
        if len(page) < 100:
            return out
        query["from"] = page[-1]["id"] if "id" in page[-1] else page[-1]["ordId"]


def run(sim: Sim, step: tuple[Any, ...]) -> None:
    mark = sim.engine.mark(TST)
    kind = step[0]
    try:
        if kind == "market":
            sim.place(symbol=TST, side=step[1], type="MARKET", sz=str(step[2]), reduceOnly=step[3])
        elif kind == "limit":
            px = mark + step[3]
            sim.place(symbol=TST, side=step[1], type="LIMIT", px=str(px), sz=str(step[2]))
        elif kind == "mark":
            sim.mark(str(max(Decimal(60), min(Decimal(140), mark + step[1]))), TST)
        elif kind == "cancel_all":
            sim.delete("/v3/trade/allOrders", {"symbol": TST})
        else:
            sim.post(
                "/v3/position/leverage", {"symbol": TST, "lever": str(step[1]), "mgnMode": "CROSS"}
            )
    except SimError:
        pass
    sim.clock.advance(1000)


def order_margin(order: dict[str, Any], positions: list[dict[str, Any]], sim: Sim) -> Decimal:
    """The documented model: the part that adds exposure × ctVal (1) × px / current leverage."""
    remaining = Decimal(order["sz"]) - Decimal(order["execQty"])
    buy = order["side"] == "BUY"
    hedge_close = (order["posSide"], buy) in (("LONG", False), ("SHORT", True))
    if order["reduceOnly"] or hedge_close:
        return Decimal(0)
    part = remaining
    for p in positions:
        if p["posSide"] == order["posSide"] and (p["side"] == "BUY") != buy:
            part = max(Decimal(0), remaining - abs(Decimal(p["qty"])))
    levers = sim.get("/v3/position/leverages", symbol=TST, mgnMode=order["mgnMode"])
    (lever,) = [x["lever"] for x in levers if x["posSide"] == order["posSide"]]
    return (part * Decimal(order["px"]) / Decimal(lever)).quantize(Decimal("1e-8"))


def check_invariants(sim: Sim) -> None:
    b = sim.balance()
    (d,) = b["details"]
    eq, im, upl = Decimal(b["eq"]), Decimal(b["im"]), Decimal(b["upl"])
    positions = sim.positions()
    assert eq == Decimal(d["eq"])
    assert Decimal(b["availMgn"]) == max(Decimal(0), eq - im)
    assert upl == sum((Decimal(p["upl"]) for p in positions), Decimal(0))
    assert Decimal(b["mm"]) == sum((Decimal(p["mm"]) for p in positions), Decimal(0))
    position_im = sum((Decimal(p["im"]) for p in positions), Decimal(0))
    assert im == position_im + Decimal(d["trdHold"])
    opens = sim.get("/v3/trade/order/opens", limit="100")
    assert all(o["state"] in ("NEW", "PARTIALLY_FILLED") for o in opens)
    assert Decimal(d["trdHold"]) == sum(
        (order_margin(o, positions, sim) for o in opens), Decimal(0)
    )
    # the wallet is the start plus every realized PnL minus every fee ever charged
    fees = sum((Decimal(f["feeAmt"]) for f in every(sim, "/v3/trade/order/trades")), Decimal(0))
    closed = every(sim, "/v3/trade/position/history")
    realized = sum((Decimal(p["pnl"]) for p in closed + positions), Decimal(0))
    assert eq - upl == INITIAL + realized - fees
    # every position's unrealized PnL is qty × ctVal × (mark − entry)
    mark = sim.engine.mark(TST)
    for p in positions:
        qty = Decimal(p["qty"]) if p["side"] == "BUY" else -abs(Decimal(p["qty"]))
        assert Decimal(p["upl"]) == qty * (mark - Decimal(p["openAvgPx"]))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(steps=st.lists(action, min_size=1, max_size=25), hedge=st.booleans())
def test_balance_adds_up_after_any_sequence(steps: list[tuple[Any, ...]], hedge: bool) -> None:
    base = load_sim_config(None)
    sim = Sim(
        sim_config(
            instruments=[base.instruments[0], tst_instrument()],
            position_mode=PositionMode.HEDGE if hedge else PositionMode.ONE_WAY,
        )
    )
    for step in steps:
        if hedge and step[0] in ("market", "limit"):
            leg = "LONG" if (step[1] == "BUY") != (step[0] == "market" and step[3]) else "SHORT"
            _run_hedge(sim, step, leg)
        else:
            run(sim, step)
        check_invariants(sim)


def _run_hedge(sim: Sim, step: tuple[Any, ...], leg: str) -> None:
    mark = sim.engine.mark(TST)
    fields: dict[str, Any] = {"symbol": TST, "side": step[1], "sz": str(step[2]), "posSide": leg}
    if step[0] == "limit":
        fields.update(type="LIMIT", px=str(mark + step[3]))
    else:
        fields.update(type="MARKET")
    sim.place(**fields)
    sim.clock.advance(1000)


def test_fresh_account_is_all_cash(sim: Sim) -> None:
    b = sim.balance()
    assert (b["eq"], b["availMgn"], b["im"], b["upl"], b["state"]) == (
        "10000",
        "10000",
        "0",
        "0",
        "NORMAL",
    )
    assert b["details"][0]["ccy"] == "USDT"
