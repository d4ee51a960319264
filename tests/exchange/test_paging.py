"""History paging: windows over long ranges, ``from`` / ``limit`` pages, no record twice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from botkit.errors import RequestValidationError
from botkit.exchange.paging import DEFAULT_WINDOW_MS, iter_history, iter_pages, time_windows
from botkit.exchange.queries import FillQuery, HistoryQuery
from botkit.live.client import ExchangeClient

from . import payloads as wire
from .conftest import FakeExchange, Seen

DAY = 24 * 3600 * 1000


@dataclass(frozen=True)
class Rec:
    id: str
    t: int


class History:
    """A page function over records with ids 1..n at times ``t``; newest id first per page."""

    def __init__(self, times: list[int], ignore_from: bool = False) -> None:
        self.records = [Rec(str(i + 1), t) for i, t in enumerate(times)]
        self.calls: list[dict[str, Any]] = []
        self.ignore_from = ignore_from

    def __call__(self, query: HistoryQuery) -> list[Rec]:
        start, end, from_id, limit = query.start, query.end, query.from_id, query.limit
        self.calls.append({"start": start, "end": end, "from_id": from_id, "limit": limit})
        assert start is not None
        assert end is not None
        assert limit is not None
        inside = [r for r in reversed(self.records) if start <= r.t <= end]
        if from_id is not None and not self.ignore_from:
            inside = [r for r in inside if int(r.id) < int(from_id)]
        return inside[:limit]


def test_windows_split_a_long_range_oldest_first() -> None:
    assert list(time_windows(0, 250, 100)) == [(0, 100), (100, 200), (200, 250)]
    assert list(time_windows(5, 5, 100)) == [(5, 5)]


def test_range_shorter_than_a_window_is_one_window() -> None:
    history = History([10, 20, 30])
    records = list(iter_history(history, HistoryQuery(start=0, end=100, limit=10)))
    assert [r.id for r in records] == ["3", "2", "1"]
    assert len(history.calls) == 1  # a short page ends the window


def test_pages_follow_from_until_a_short_page() -> None:
    history = History(list(range(25)))
    records = list(iter_history(history, HistoryQuery(start=0, end=100, limit=10)))
    assert sorted(int(r.id) for r in records) == list(range(1, 26))
    assert [c["from_id"] for c in history.calls] == [None, "16", "6"]


def test_a_full_last_page_costs_one_empty_page() -> None:
    history = History(list(range(20)))
    assert len(list(iter_history(history, HistoryQuery(start=0, end=100, limit=10)))) == 20
    assert [c["from_id"] for c in history.calls] == [None, "11", "1"]


def test_long_range_is_split_into_90_day_windows_and_boundary_records_come_once() -> None:
    boundary = DEFAULT_WINDOW_MS
    history = History([DAY, boundary, boundary + DAY, 2 * boundary + 5])
    records = list(iter_history(history, HistoryQuery(start=0, end=2 * boundary + 10)))
    assert [r.t for r in records] == [boundary, DAY, boundary + DAY, 2 * boundary + 5]
    windows = [(c["start"], c["end"]) for c in history.calls]
    assert windows == [(0, boundary), (boundary, 2 * boundary), (2 * boundary, 2 * boundary + 10)]


def test_a_server_ignoring_from_cannot_trap_the_loop() -> None:
    history = History(list(range(10)), ignore_from=True)
    assert len(list(iter_history(history, HistoryQuery(start=0, end=100, limit=5)))) == 5
    assert len(history.calls) == 2


@pytest.mark.parametrize(
    ("query", "kwargs", "message"),
    [
        (HistoryQuery(start=5, end=1), {}, "after end"),
        (HistoryQuery(start=0, end=1), {"window_ms": 0}, "window_ms 0"),
        (HistoryQuery(start=0, end=1, limit=101), {}, "limit 101"),
        (HistoryQuery(end=1), {}, "needs a start and an end"),
    ],
)
def test_bad_paging_arguments(query: HistoryQuery, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(RequestValidationError, match=message):
        list(iter_history(History([1]), query, **kwargs))


def test_iter_pages_respects_max_pages() -> None:
    counter = iter(range(10**6))

    def endless(_from: str | None, limit: int) -> list[Rec]:
        return [Rec(str(next(counter)), 0) for _ in range(limit)]

    assert len(list(iter_pages(endless, limit=2, max_pages=3))) == 6


def test_iter_history_drives_the_client_over_http(
    fake: FakeExchange, client: ExchangeClient
) -> None:
    def fills(seen: Seen) -> list[dict[str, Any]]:
        top = int(seen.query.get("from", "251"))
        ids = range(top - 1, max(top - 1 - int(seen.query["limit"]), 0), -1)
        return [{**wire.FILL, "id": str(i)} for i in ids]

    fake.on("GET", "/v3/trade/order/trades", fills)
    query = FillQuery(symbol="BTC_USDT_PERP", start=0, end=DAY, limit=100)
    got = list(iter_history(client.fills, query))
    assert [f.id for f in got] == [str(i) for i in range(250, 0, -1)]
    queries = [s.query for s in fake.requests("/v3/trade/order/trades")]
    assert [q.get("from") for q in queries] == [None, "151", "51"]
    assert queries[0] == {
        "symbol": "BTC_USDT_PERP",
        "sTime": "0",
        "eTime": str(DAY),
        "limit": "100",
        "direct": "NEXT",
    }
