"""ClockSync: the round-trip midpoint, the schedule, and the thin layer over the real clock."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from freezegun import freeze_time

from botkit.clock import wall_ms
from botkit.errors import ConnectFailed
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync

from . import payloads as wire
from .conftest import BASE, KEY, PASSPHRASE, SECRET, ClientFactory, FakeExchange, ManualMs

FROZEN_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def _fetch_with_round_trip(local: ManualMs, *, there: int, back: int, server_ahead: int) -> int:
    local.advance(there)
    server = local() + server_ahead
    local.advance(back)
    return server


def test_offset_is_measured_from_the_round_trip_midpoint() -> None:
    local = ManualMs(1_000_000)
    sync = ClockSync(
        lambda: _fetch_with_round_trip(local, there=20, back=20, server_ahead=1_000), local=local
    )
    sample = sync.resync()
    assert (sample.offset_ms, sample.rtt_ms) == (1_000, 40)
    assert sync.now_ms() == local() + 1_000


def test_asymmetric_round_trip_assumes_the_midpoint() -> None:
    local = ManualMs(0)
    # The answer took 30 ms there and 10 back: the midpoint estimate is 10 ms off.
    sync = ClockSync(
        lambda: _fetch_with_round_trip(local, there=30, back=10, server_ahead=500), local=local
    )
    assert sync.resync().offset_ms == 510


def test_half_millisecond_offsets_round_half_away_from_zero() -> None:
    local = ManualMs(0)
    sync = ClockSync(lambda: _fetch_with_round_trip(local, there=0, back=3, server_ahead=10),
                     local=local)  # fmt: skip
    assert sync.resync().offset_ms == 9  # 10 - 1.5 = 8.5 → 9
    behind = ClockSync(lambda: _fetch_with_round_trip(local, there=0, back=3, server_ahead=-7),
                       local=local)  # fmt: skip
    assert behind.resync().offset_ms == -9  # -7 - 1.5 = -8.5 → -9


def _answers(local: ManualMs, trips: list[tuple[int, int]], *, server_ahead: int = 0) -> Any:
    """A fetch whose n-th call takes ``trips[n]`` = (ms before the server reads its clock, ms
    after), on ``local``; it counts its calls in ``.calls``."""

    def fetch() -> int:
        there, back = trips[fetch.calls]  # type: ignore[attr-defined]
        fetch.calls += 1  # type: ignore[attr-defined]
        return _fetch_with_round_trip(local, there=there, back=back, server_ahead=server_ahead)

    fetch.calls = 0  # type: ignore[attr-defined]
    return fetch


def test_a_slow_first_answer_is_measured_again_and_the_shortest_round_trip_kept() -> None:
    # the in-process simulator opens its paper account inside the first request, before it
    # reads its clock (9 s under load): the midpoint of that trip puts the clock 4.5 s ahead,
    # and a run a few seconds later evaluated in the same 1 s slot and fired nothing
    local = ManualMs(1_000_000)
    fetch = _answers(local, [(9_000, 0), (1, 1)])
    sync = ClockSync(fetch, local=local)
    sample = sync.resync()
    assert (sample.offset_ms, sample.rtt_ms) == (0, 2)
    assert sync.now_ms() == local()
    assert fetch.calls == 2


def test_slow_after_the_reading_is_measured_again_too() -> None:
    # a slow save after the server read its clock: the midpoint would put the clock behind
    local = ManualMs(0)
    fetch = _answers(local, [(0, 8_000), (3, 3)], server_ahead=250)
    sync = ClockSync(fetch, local=local)
    assert sync.resync().offset_ms == 250
    assert fetch.calls == 2


def test_slow_retries_are_bounded_and_the_shortest_of_them_is_kept() -> None:
    local = ManualMs(0)
    fetch = _answers(local, [(6_000, 0), (0, 3_000), (2_000, 0)])
    sync = ClockSync(fetch, local=local)
    sample = sync.resync()
    assert (sample.offset_ms, sample.rtt_ms) == (1_000, 2_000)  # the third: 2 s, off by 1 s
    assert fetch.calls == 3  # retry_samples = 2 more, no further


def test_a_quick_answer_is_believed_at_once() -> None:
    local = ManualMs(0)
    fetch = _answers(local, [(500, 500)], server_ahead=40)
    sync = ClockSync(fetch, local=local)
    assert sync.resync().offset_ms == 40
    assert fetch.calls == 1  # a round trip of max_rtt_ms (1 s) is not measured again


def test_a_failed_retry_keeps_the_slow_sample() -> None:
    local = ManualMs(0)
    calls = []

    def fetch() -> int:
        calls.append(local())
        if len(calls) > 1:
            raise ConnectFailed("down")
        return _fetch_with_round_trip(local, there=3_000, back=1_000, server_ahead=0)

    sync = ClockSync(fetch, local=local)
    sample = sync.resync()
    assert (sample.offset_ms, sample.rtt_ms) == (1_000, 4_000)
    assert len(calls) == 2


def test_client_measures_a_slow_first_timestamp_again(
    fake: FakeExchange, make_client: ClientFactory, clock: ManualMs
) -> None:
    fake.skew_ms = 700
    slow = [8_000]

    def timestamp(_seen: object) -> httpx.Response:
        clock.advance(slow.pop() if slow else 0)  # the first answer opens something first
        return httpx.Response(200, json={"serverTime": fake.server_now()})

    fake.on("GET", "/timestamp", timestamp)
    sample = make_client().resync_clock()
    assert sample.offset_ms == 700  # believed once: 700 + 8000 / 2
    assert len(fake.requests("/timestamp")) == 2


def test_schedule_due_before_first_sync_then_every_interval() -> None:
    local = ManualMs(0)
    sync = ClockSync(lambda: local() + 42, local=local, interval_ms=1_000)
    assert sync.due()
    assert sync.maybe_resync() is not None
    assert not sync.due()
    local.advance(999)
    assert sync.maybe_resync() is None
    local.advance(1)
    assert sync.due()


def test_interval_zero_syncs_once_then_only_on_demand() -> None:
    local = ManualMs(0)
    sync = ClockSync(lambda: local() + 5, local=local, interval_ms=0)
    sync.maybe_resync()
    local.advance(10**9)
    assert not sync.due()


def test_failed_resync_keeps_the_previous_offset() -> None:
    local = ManualMs(0)
    answers = iter([300])

    def fetch() -> int:
        for value in answers:
            return value
        raise ConnectFailed("down")

    sync = ClockSync(fetch, local=local)
    sync.resync()
    with pytest.raises(ConnectFailed):
        sync.resync()
    assert sync.offset_ms == 300


def test_resync_without_a_source_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="bind"):
        ClockSync(local=ManualMs()).resync()


def test_client_resync_measures_skew_through_http(
    fake: FakeExchange, make_client: ClientFactory
) -> None:
    fake.skew_ms, fake.latency_ms = -3_000, 100
    sample = make_client().resync_clock()
    assert (sample.offset_ms, sample.rtt_ms) == (-3_000, 100)


def test_signed_requests_resync_on_schedule(
    fake: FakeExchange, make_client: ClientFactory, clock: ManualMs
) -> None:
    fake.on("GET", "/v3/account/balance", wire.BALANCE)
    client = make_client()  # interval 60 s
    client.balance()
    client.balance()
    assert len(fake.requests("/timestamp")) == 1
    clock.advance(60_000)
    fake.skew_ms = 2_000
    client.balance()
    assert len(fake.requests("/timestamp")) == 2
    assert fake.seen[-1].timestamp == clock() + 2_000


def test_public_requests_do_not_sync(fake: FakeExchange, make_client: ClientFactory) -> None:
    fake.on("GET", "/v3/market/tickers", [])
    make_client().tickers()
    assert fake.requests("/timestamp") == []


# --- the thin real-clock layer, with freezegun ---------------------------------------------

# freezegun patches time.monotonic process-wide: an asyncio loop running in another thread
# (the contract tests' session-long loopback server) would schedule its next wake-up at the
# frozen 2024 instant and sleep for decades once the freeze ends (seen: 20 s lost in its
# teardown). Asyncio keeps the real clock.
_OTHER_THREADS = ["asyncio"]


def test_wall_ms_reads_the_real_clock() -> None:
    with freeze_time("2024-01-01T00:00:00Z", ignore=_OTHER_THREADS):
        assert wall_ms() == FROZEN_MS


def test_default_clock_stamps_headers_with_real_time_plus_offset() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/timestamp":
            return httpx.Response(200, json={"serverTime": FROZEN_MS + 2_500})
        return httpx.Response(200, json={"code": 200, "msg": "Success", "data": wire.BALANCE})

    with freeze_time("2024-01-01T00:00:00Z", ignore=_OTHER_THREADS) as frozen:
        client = ExchangeClient(
            BASE, key=KEY, secret=SECRET, passphrase=PASSPHRASE, signing="pf",
            transport=httpx.MockTransport(handler),
        )  # fmt: skip
        with client:
            client.balance()
            frozen.tick(1.5)
            client.balance()
    stamps = [r.headers["PF-API-TIMESTAMP"] for r in seen if r.url.path != "/timestamp"]
    assert stamps == [str(FROZEN_MS + 2_500), str(FROZEN_MS + 4_000)]
