"""The fill ledger behind ``/api/positions``' figures by strategy, against the in-process
simulator: a poll reads only the new fills (not the history again), a long history is walked
over several reads, a position older than what is read says so, a fill through zero opens the
position with its part beyond zero, and fills that stop adding up start it over. Every kept
ledger is compared with one built from nothing on the same account (the plain model)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.app.api_read import ExchangeReads, positions_json
from botkit.app.fill_ledger import FillLedger, Share
from botkit.clock import ManualClock
from botkit.exchange.models import Fill, OrderRequest, OrderSide, OrderType
from botkit.exchange.queries import FillQuery
from botkit.live.client import ExchangeClient
from botkit.rules.ids import client_order_id, strategy_tag
from botkit.settings import load_settings
from botkit.sim.config import BalanceConfig
from botkit.sim.inprocess import SimHandle, make_sim
from tests.pipeline.simharness import SYMBOL, client_for, static_config

T0 = 1_763_000_000_000
DAY_MS = 86_400_000
A, B = strategy_tag("alpha"), strategy_tag("beta")
_SLOTS = itertools.count()


@pytest.fixture
def sim() -> Iterator[tuple[SimHandle, ManualClock, ExchangeClient]]:
    clock = ManualClock(T0)
    config = static_config()
    config = config.model_copy(update={"balance": BalanceConfig(amount=Decimal(10_000_000))})
    handle = make_sim(config, clock, auto_step=False)
    client = client_for("http://sim", config, local=clock.now_ms, transport=handle.transport)
    yield handle, clock, client
    client.close()


def _orders(client: ExchangeClient, *orders: tuple[str, OrderSide, str]) -> None:
    """Market orders (strategy or "" for nobody's, side, size), ten a request."""
    requests = [
        OrderRequest(
            symbol=SYMBOL,
            side=side,
            type=OrderType.MARKET,
            sz=Decimal(size),
            clOrdId=client_order_id(who, "r", 1_000 + n, 0) if who else None,
        )
        for who, side, size in orders
        for n in (next(_SLOTS),)
    ]
    for start in range(0, len(requests), 10):
        for result in client.place_orders(requests[start : start + 10]):
            assert result.code == 200, result


def _many(client: ExchangeClient, count: int) -> None:
    """``count`` fills: alpha buys two, beta sells one, nobody buys one; the account stays long."""
    cycle = [("alpha", OrderSide.BUY, "2"), ("beta", OrderSide.SELL, "1"), ("", OrderSide.BUY, "1")]
    _orders(client, *(cycle[i % 3] for i in range(count)))


def _refresh(ledger: FillLedger, client: ExchangeClient) -> list[Share]:
    ct = {i.symbol: i.ctVal for i in client.instruments()}
    ledger.refresh(client.fills, client.open_positions, ct)
    return ledger.shares()


def _plain(client: ExchangeClient) -> list[Share]:
    """What a ledger built from nothing says now, in one read."""
    return _refresh(FillLedger(pages_per_read=1_000), client)


def _books(shares: list[Share]) -> dict[str, tuple[Decimal, Decimal, Decimal, Decimal, int]]:
    (share,) = shares
    return {t: (b.qty, b.avg_px, b.realized, b.fees, b.fills) for t, b in share.books}


def test_a_poll_reads_only_the_fills_newer_than_the_last_read(
    sim: tuple[SimHandle, ManualClock, ExchangeClient],
) -> None:
    _sim, _clock, client = sim
    _many(client, 300)
    ledger = FillLedger()
    first = _refresh(ledger, client)
    assert ledger.pages_read >= 4  # the walk back: the newest page, the check, three more
    assert ledger.reading() is None
    assert _books(first)[A][0] == 200  # alpha bought 2 a time, 100 times
    before = ledger.pages_read
    assert _refresh(ledger, client) == first
    assert ledger.pages_read - before == 2  # the newest page (nothing new) and the check
    _many(client, 150)
    before = ledger.pages_read
    second = _refresh(ledger, client)
    assert ledger.pages_read - before == 3  # two pages of new fills, and the check
    assert second == _plain(client)
    assert _books(second)[A][0] == 300
    assert second[0].complete
    assert second[0].fills == 450
    assert ledger.restarts == 0


def test_a_long_walk_goes_on_over_reads_and_says_so_meanwhile(
    sim: tuple[SimHandle, ManualClock, ExchangeClient],
) -> None:
    _sim, _clock, client = sim
    _many(client, 500)
    ledger = FillLedger(pages_per_read=1)
    assert _refresh(ledger, client) == []
    assert ledger.reading() == 200  # the newest page, and one more; the next read goes on
    reads = 1
    while ledger.reading() is not None and reads < 10:
        _many(client, 3)  # fills keep landing meanwhile
        _refresh(ledger, client)
        reads += 1
    assert reads == 4  # 200, 300, 400, 500
    assert ledger.shares() == _plain(client)
    assert ledger.shares()[0].fills == 509


def test_a_position_older_than_the_fills_read_says_what_the_figures_cover(
    sim: tuple[SimHandle, ManualClock, ExchangeClient],
) -> None:
    _sim, clock, client = sim
    _many(client, 300)
    capped = FillLedger(max_history_fills=100)
    (share,) = _refresh(capped, client)
    assert not share.complete
    assert "serve reads at most the newest 100 fills" in share.why
    assert share.fills == 100

    clock.advance(91 * DAY_MS)  # the exchange answers the last 90 days by default
    _many(client, 30)
    (share,) = _plain(client)
    assert not share.complete
    assert share.fills == 30
    assert share.since_ms == T0 + 91 * DAY_MS
    assert (
        "history (by default its last 90 days) reaches back to 2026-02-12T02:13:20Z only"
        in share.why
    )


def test_a_fill_through_zero_opens_the_position_with_its_part_beyond_zero(
    sim: tuple[SimHandle, ManualClock, ExchangeClient],
) -> None:
    _sim, _clock, client = sim
    _orders(client, ("alpha", OrderSide.BUY, "2"), ("beta", OrderSide.BUY, "1"))
    kept = FillLedger()
    _refresh(kept, client)
    _orders(client, ("beta", OrderSide.SELL, "4"), ("alpha", OrderSide.SELL, "1"))
    warm = _refresh(kept, client)
    cold = _plain(client)
    assert warm == cold
    books = _books(cold)
    assert set(books) == {A, B}
    assert books[B][0] == -1  # 3 of beta's 4 closed the old position, 1 opened this one
    assert books[A][0] == -1
    (share,) = cold
    assert share.complete
    assert share.fills == 2


class _Hiding:
    """The client's fills, but the next page asked for loses the fill ``hide`` (a missed
    fill)."""

    def __init__(self, client: ExchangeClient) -> None:
        self.client = client
        self.hide: str | None = None

    def fills(self, query: FillQuery) -> Sequence[Fill]:
        hide, self.hide = self.hide, None
        return [f for f in self.client.fills(query) if f.id != hide]


def test_fills_that_stop_adding_up_to_the_positions_start_the_ledger_over(
    sim: tuple[SimHandle, ManualClock, ExchangeClient],
) -> None:
    _sim, _clock, client = sim
    _many(client, 30)
    ledger = FillLedger()
    hiding = _Hiding(client)
    ct = {i.symbol: i.ctVal for i in client.instruments()}
    ledger.refresh(hiding.fills, client.open_positions, ct)
    _many(client, 5)
    newest = client.fills(FillQuery(limit=3))
    hiding.hide = newest[1].id  # not the newest: the cursor goes past it
    ledger.refresh(hiding.fills, client.open_positions, ct)  # the check sees it: over again
    assert ledger.restarts == 1
    assert ledger.shares() == _plain(client)
    ledger.refresh(hiding.fills, client.open_positions, ct)
    assert ledger.restarts == 1


def test_a_position_back_at_zero_ends_its_rows_and_the_next_fill_opens_new_ones(
    sim: tuple[SimHandle, ManualClock, ExchangeClient],
) -> None:
    _sim, clock, client = sim
    kept = FillLedger()
    _orders(client, ("alpha", OrderSide.BUY, "2"))
    _refresh(kept, client)
    _orders(client, ("beta", OrderSide.SELL, "2"))
    assert _refresh(kept, client) == []  # at zero: no open position, no rows
    clock.advance(60_000)
    _orders(client, ("beta", OrderSide.BUY, "1"))
    (share,) = _refresh(kept, client)
    assert _books([share]) == {
        B: (Decimal(1), Decimal(60000), Decimal(0), share.books[0][1].fees, 1)
    }
    assert (share.fills, share.since_ms, share.complete) == (1, T0 + 60_000, True)
    assert [share] == _plain(client)


def test_the_answer_says_what_the_figures_cover_when_they_fall_short(
    sim: tuple[SimHandle, ManualClock, ExchangeClient], tmp_path: Path
) -> None:
    handle, clock, client = sim
    _many(client, 400)
    (tmp_path / "botkit.toml").write_text("")
    settings = load_settings(config=tmp_path / "botkit.toml", env_file=None)

    def connect() -> ExchangeClient:
        return client_for(
            "http://sim", static_config(), local=clock.now_ms, transport=handle.transport
        )

    reads = ExchangeReads(settings, ttl_s=0, client=connect)
    reads.ledger = FillLedger(pages_per_read=1, max_history_fills=250)
    names = {A: "alpha", B: "beta"}
    reading = positions_json(reads.account(), names)
    assert reading["by_strategy"] == []
    assert reading["by_strategy_from"].startswith("still reading the exchange's fill history (200")
    body = positions_json(reads.account(), names)
    (coverage,) = body["coverage"]
    assert coverage["complete"] is False
    assert coverage["fills"] == 300  # whole pages: the first past 250 ends the walk
    assert coverage["short_of_it"].startswith("serve reads at most the newest 250 fills (back to")
    assert body["by_strategy_from"].endswith(
        f"; short of it: {SYMBOL} BOTH: {coverage['short_of_it']}"
    )
    assert {r["strategy"]: r["complete"] for r in body["by_strategy"]} == {
        "alpha": False,
        "beta": False,
    }
