"""Group commit in the simulator's HTTP server (``botkit sim serve --state``): the requests
handled in one turn of the event loop are saved in one transaction, and no answer leaves before
what it reports is in the state file. Driven through the ASGI app itself (several requests in
one event loop) over a real kept paper account; each answer's moment of leaving is when the
app sends its response start, and the file is read then, as another process would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from botkit.clock import ManualClock
from botkit.sim.config import load_sim_config
from botkit.sim.inprocess import SimHandle, make_sim
from botkit.sim.server import SimAsgiApp
from botkit.sim.state import PaperFile, read_copy
from tests.sim_http.support import T0, sign_request

BTC = "BTC_USDT_PERP"


def _kept(path: Path) -> SimHandle:
    return make_sim(load_sim_config(None), ManualClock(T0), paper=PaperFile(path))


def _order(px: int) -> dict[str, str]:
    return {"symbol": BTC, "side": "BUY", "type": "LIMIT", "sz": "1", "px": str(px)}


def _open_in_file(path: Path) -> set[int]:
    """The open orders the state file holds (read as a copy, as another process reads it)."""
    copy = make_sim(load_sim_config(None), ManualClock(T0))
    read_copy(path, copy.engine)
    return set(copy.engine.matcher.open)


Seen = list[tuple[int, Any, set[int]]]
"""Per answer, in the order they left: status, body, the open orders in the file then."""


async def _request(
    app: SimAsgiApp, state: Path, method: str, path: str, body: Any, seen: Seen
) -> None:
    """One request through the ASGI app; at its response start, the open orders in the file."""
    signed = sign_request(method, path, body=body)
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": signed.raw_query.encode(),
        "headers": [(k.encode(), v.encode()) for k, v in signed.headers.items()],
    }
    at = -1

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": signed.body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal at
        if message["type"] == "http.response.start":
            at = len(seen)
            seen.append((message["status"], None, _open_in_file(state)))
        else:
            status, _, in_file = seen[at]
            seen[at] = (status, json.loads(message["body"]), in_file)

    await app(scope, receive, send)


def _together(app: SimAsgiApp, state: Path, requests: list[tuple[str, str, Any]]) -> Seen:
    """The requests sent at once: each handled in its own task of one event loop."""
    seen: Seen = []

    async def all_of_them() -> None:
        await asyncio.gather(*(_request(app, state, m, p, b, seen) for m, p, b in requests))

    asyncio.run(all_of_them())
    return seen


def test_concurrent_orders_are_saved_together_before_any_answer_leaves(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _kept(path)
    app = SimAsgiApp(sim.http, group_commit=True)
    placed = [("POST", "/v3/trade/order", _order(59_000 + i)) for i in range(3)]
    seen = _together(app, path, placed)
    ids = {int(body["data"]["ordId"]) for _, body, _ in seen}
    assert [status for status, _, _ in seen] == [200, 200, 200]
    assert len(ids) == 3
    # every answer, the first included, left with all three orders already in the file
    assert all(in_file == ids for _, _, in_file in seen)
    assert not sim.http.unsaved()


def test_a_read_waits_for_the_save_of_the_changes_it_shows(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _kept(path)
    app = SimAsgiApp(sim.http, group_commit=True)
    seen = _together(
        app,
        path,
        [("POST", "/v3/trade/order", _order(59_000)), ("GET", "/v3/trade/order/opens", None)],
    )
    placed, listed = seen
    shown = {int(o["ordId"]) for o in listed[1]["data"]}
    assert shown == {int(placed[1]["data"]["ordId"])}
    assert shown <= listed[2]  # in the file when the read's answer left


def test_without_group_commit_each_answer_is_saved_alone(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _kept(path)
    app = SimAsgiApp(sim.http, group_commit=False)
    placed = [("POST", "/v3/trade/order", _order(59_000 + i)) for i in range(3)]
    seen = _together(app, path, placed)
    assert [len(in_file) for _, _, in_file in seen] == [1, 2, 3]
    for _, body, in_file in seen:
        assert int(body["data"]["ordId"]) in in_file


def test_a_failed_group_save_answers_500_to_every_waiting_request(tmp_path: Path) -> None:
    path = tmp_path / "paper.sqlite"
    sim = _kept(path)
    app = SimAsgiApp(sim.http, group_commit=True)
    assert sim.state is not None
    sim.state.close()  # the file can no longer be written
    nowhere = tmp_path / "none.sqlite"
    placed = [("POST", "/v3/trade/order", _order(59_000 + i)) for i in range(2)]
    seen = _together(app, nowhere, placed)
    assert [(status, body["code"]) for status, body, _ in seen] == [(500, 500), (500, 500)]
    later = _together(app, nowhere, [("POST", "/v3/trade/order", _order(58_900))])
    assert later[0][0] == 503
