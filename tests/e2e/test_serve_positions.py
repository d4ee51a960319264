"""``/api/positions``' figures by strategy over far more fills than one page of the exchange's
history: ``botkit sim serve`` is the exchange (a real process), ``botkit run`` loaded two
strategies, the test trades for them through the client (batches of market orders carrying
their client order ids, and orders of nobody's), and a real ``botkit serve`` answers. Each
strategy's share of the open position is checked against a replay written here, from every
fill the exchange holds, restarted where the position was last at zero."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from botkit.exchange.models import Fill, OrderRequest, OrderSide, OrderType
from botkit.exchange.queries import FillQuery
from botkit.live.client import ExchangeClient
from botkit.rules.ids import client_order_id
from tests.e2e.serving import BTC, SECRETS, botkit, call, service_env, serving
from tests.simserve import sim_serve

KEYS = {
    "BOTKIT_API_KEY": "sim-key",
    "BOTKIT_API_SECRET": "sim-secret",
    "BOTKIT_API_PASSPHRASE": "sim-passphrase",
}
CLOSE = Decimal("1e-12")


def _all_fills(client: ExchangeClient) -> list[Fill]:
    """Every fill, oldest first (paged back from the newest, written here)."""
    out: list[Fill] = []
    from_id: str | None = None
    while True:
        page = client.fills(FillQuery(limit=100, from_id=from_id))
        out += [f for f in page if from_id is None or int(f.id) < int(from_id)]
        if len(page) < 100:
            return sorted(out, key=lambda f: int(f.id))
        from_id = page[-1].id


def _expected(
    fills: list[Fill], owner: dict[str, str], ct_val: Decimal
) -> dict[str, dict[str, Any]]:
    """Each strategy's average-cost book over the fills since the account's position last
    stood at zero (an independent replay; ``owner``: client order id → strategy)."""
    account = Decimal(0)
    books: dict[str, dict[str, Any]] = {}
    for f in fills:
        assert f.qty is not None
        assert f.px is not None
        signed = f.qty if f.side is OrderSide.BUY else -f.qty
        if account == 0:
            books = {}
        account += signed
        strategy = owner.get(f.clOrdId)
        if strategy is None:
            continue
        b = books.setdefault(
            strategy,
            {"qty": Decimal(0), "avg": Decimal(0), "realized": Decimal(0), "fees": Decimal(0)}
            | {"fills": 0},
        )
        b["fills"] += 1
        b["fees"] += f.feeAmt or 0
        q, avg = b["qty"], b["avg"]
        if q == 0 or (q > 0) == (signed > 0):
            b["avg"] = (avg * abs(q) + f.px * f.qty) / abs(q + signed)
        else:
            closed = min(f.qty, abs(q))
            b["realized"] += (f.px - avg) * closed * ct_val * (1 if q > 0 else -1)
            if abs(signed) >= abs(q):
                b["avg"] = Decimal(0) if abs(signed) == abs(q) else f.px
        b["qty"] = q + signed
    if account == 0:
        return {}
    return books


def _opened(fills: list[Fill]) -> int | None:
    """The time of the first fill after the account's position last stood at zero."""
    account, opened = Decimal(0), None
    for f in fills:
        assert f.qty is not None
        if account == 0:
            opened = f.cTime
        account += f.qty if f.side is OrderSide.BUY else -f.qty
    return opened


def _trade(client: ExchangeClient, rounds: range, owner: dict[str, str]) -> None:
    """Market orders in batches of ten: taker mostly buys, rest mostly sells, and one order in
    ten is nobody's; the account is back at zero once, after the second order, and long from
    the third on. ``owner`` learns whose each id is."""
    orders = []
    for i in rounds:
        strategy = ("taker", "rest")[i % 2]
        if i % 10 == 9:
            side, size, cl = OrderSide.BUY, Decimal(1), None
        elif strategy == "taker":
            side = OrderSide.SELL if i % 6 == 4 else OrderSide.BUY
            size, cl = Decimal(1 + i % 3), client_order_id("taker", "buy", 10_000 + i, 0)
        else:
            side = OrderSide.BUY if i % 6 == 3 else OrderSide.SELL
            size, cl = Decimal(1), client_order_id("rest", "rest-one", 10_000 + i, 0)
        if cl is not None:
            owner[cl] = strategy
        orders.append(
            OrderRequest(symbol=BTC, side=side, type=OrderType.MARKET, sz=size, clOrdId=cl)
        )
    for start in range(0, len(orders), 10):
        results = client.place_orders(orders[start : start + 10])
        assert [r.code for r in results] == [200] * len(results), results


def _check(
    answer: dict[str, Any], fills: list[Fill], owner: dict[str, str], ct_val: Decimal
) -> None:
    expected = _expected(fills, owner, ct_val)
    assert expected, "the account must hold a position"
    mark = Decimal(answer["positions"][0]["mark_px"])
    got = {r["strategy"]: r for r in answer["by_strategy"]}
    assert set(got) == set(expected)
    for strategy, want in expected.items():
        row = got[strategy]
        assert Decimal(row["qty"]) == want["qty"], strategy
        assert abs(Decimal(row["avg_px"]) - want["avg"]) < CLOSE, strategy
        assert abs(Decimal(row["realized"]) - want["realized"]) < CLOSE, strategy
        assert Decimal(row["fees"]) == want["fees"], strategy
        assert row["fills"] == want["fills"], strategy
        unrealized = (mark - want["avg"]) * want["qty"] * ct_val
        assert abs(Decimal(row["unrealized"]) - unrealized) < CLOSE, strategy
        assert row["complete"] is True
    (coverage,) = answer["coverage"]
    assert coverage["complete"] is True
    assert coverage["short_of_it"] is None


def test_by_strategy_counts_every_fill_since_the_position_opened(tmp_path: Path) -> None:
    env = {k: v for k, v in service_env(tmp_path, taker=True).items() if k not in SECRETS}
    with sim_serve(env, cwd=tmp_path) as url:
        live = {**env, **KEYS, "BOTKIT_EXCHANGE": "live", "BOTKIT_BASE_URL": url}
        done = botkit(live, "run", "--once")  # loads rest and taker; taker buys 1
        assert done.returncode == 0, done.stderr
        with ExchangeClient(
            url,
            key=KEYS["BOTKIT_API_KEY"],
            secret=KEYS["BOTKIT_API_SECRET"],
            passphrase=KEYS["BOTKIT_API_PASSPHRASE"],
        ) as client:
            client.cancel_all(BTC)  # rest's resting buy: no fill the test did not make
            (instrument,) = client.instruments(BTC)
            ct_val = instrument.ctVal
            # nobody's sell takes the account to zero: the position's life starts after it
            flat = OrderRequest(symbol=BTC, side=OrderSide.SELL, type=OrderType.MARKET, sz=1)
            assert client.place_orders([flat])[0].code == 200
            owner: dict[str, str] = {}
            _trade(client, range(0, 160), owner)
            with serving(live, tmp_path, "--exchange-every", "0") as served:
                first = call(served.url("/api/positions"))
                assert first.status == 200, first.body
                fills = _all_fills(client)
                assert len(fills) > 150  # well over the one page the answer used to read
                _check(first.body, fills, owner, ct_val)
                since = first.body["coverage"][0]["since_ms"]
                assert since == _opened(fills)

                _trade(client, range(160, 290), owner)  # more than a page again, between two reads
                second = call(served.url("/api/positions"))
                assert second.status == 200, second.body
                fills = _all_fills(client)
                _check(second.body, fills, owner, ct_val)
                assert second.body["coverage"][0]["since_ms"] == since
            assert "reading the fill history again" not in served.log.read_text()
