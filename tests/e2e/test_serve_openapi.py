"""``/api/openapi.json`` is a valid OpenAPI 3.1 description of every route ``botkit serve``
has, and the live answers of a server reading a real journal match its schemas; ``botkit
status --json`` and ``botkit plan --json`` answer in the API's shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate

from botkit.app.api_routes import build_router
from botkit.settings import load_settings
from tests.e2e.serving import Served, botkit, call, service_env, serving


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("openapi")
    done = botkit(service_env(path, taker=True), "run", "--once")
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[Served]:
    with serving(service_env(folder, taker=True), folder, "--exchange-every", "0") as s:
        yield s


def _check(doc: dict[str, Any], name: str, value: Any) -> None:
    schema = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    jsonschema.Draft202012Validator(schema).validate(value)


def _schema_of(doc: dict[str, Any], path: str, method: str, code: str) -> str:
    ref: str = doc["paths"][path][method]["responses"][code]["content"]["application/json"][
        "schema"
    ]["$ref"]
    return ref.rsplit("/", 1)[1]


def test_the_description_is_valid_openapi_and_names_every_route(
    served: Served, folder: Path
) -> None:
    doc = call(served.url("/api/openapi.json")).body
    validate(doc)
    settings = load_settings(config=str(folder / "botkit.toml"), journal=folder / "journal.sqlite")
    router = build_router(settings, max_age_s=600)
    routes = {(r.path, r.method.lower()) for r in router.routes if r.path.startswith("/api/")}
    described = {(p, m) for p, ops in doc["paths"].items() for m in ops}
    assert routes == described


def test_every_answer_matches_its_schema(served: Served) -> None:
    doc = call(served.url("/api/openapi.json")).body
    decisions = call(served.url("/api/decisions")).body
    cl_ord_id = decisions["orders"][0]["cl_ord_id"]
    checked = 0
    for path, ops in doc["paths"].items():
        if "get" not in ops or "{request_id}" in path or path == "/api/openapi.json":
            continue
        answer = call(served.url(path.replace("{cl_ord_id}", cl_ord_id)))
        assert answer.status == 200, (path, answer.body)
        _check(doc, _schema_of(doc, path, "get", "200"), answer.body)
        checked += 1
    assert checked >= 10
    samples = call(served.url("/api/equity")).body["samples"]
    assert len(samples) >= 2  # one per fresh read of the account (--exchange-every 0)
    assert samples[-1]["ts_ms"] >= samples[0]["ts_ms"]
    positions = call(served.url("/api/positions")).body
    assert positions["by_strategy"][0]["strategy"] == "taker"  # its MARKET buy filled
    switched = call(served.url("/api/control/halt"), method="POST", body={"engage": True})
    _check(doc, "Switched", switched.body)
    call(served.url("/api/control/halt"), method="POST", body={"engage": False})
    filed = call(served.url("/api/control/cancel"), method="POST", body={"symbol": "NOPE"})
    assert filed.status == 202
    _check(doc, "Filed", filed.body)
    _check(doc, "Request", call(served.url(filed.body["href"])).body)
    for refused in (
        call(served.url("/api/control/cancel"), method="POST", body={"all": True, "symbol": "X"}),
        call(served.url("/api/nothing")),
        call(served.url("/api/health"), token=None),
    ):
        assert refused.status in (400, 401, 404)
        _check(doc, "Error", refused.body)


def test_status_json_is_what_api_status_answers(served: Served, folder: Path) -> None:
    env = service_env(folder, taker=True)
    done = botkit(env, "status", "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    answered = call(served.url("/api/status")).body
    for body in (printed, answered):
        body.pop("last_cycle_age_s")
    assert printed == answered


def test_plan_json_answers_in_the_api_s_shapes(served: Served, folder: Path) -> None:
    doc = call(served.url("/api/openapi.json")).body
    env = service_env(folder, taker=True)
    done = botkit(env, "plan", "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert {e["strategy"] for e in plan["evaluations"]} == {"rest", "taker"}
    for evaluation in plan["evaluations"]:
        _check(doc, "Evaluation", evaluation)
    assert plan["orders"], plan
    for order in plan["orders"]:
        _check(doc, "Order", order)
        assert order["dry"] is True
    taker = next(o for o in plan["orders"] if o["strategy"] == "taker")
    assert (taker["rule"], taker["side"], taker["type"]) == ("buy", "BUY", "MARKET")


def test_events_are_polled_by_id_and_filtered_by_kind(served: Served) -> None:
    newest = call(served.url("/api/events?limit=2")).body
    ids = [e["id"] for e in newest["events"]]
    assert len(ids) == 2
    assert ids[0] < ids[1] == newest["last_id"]
    assert call(served.url(f"/api/events?after={newest['last_id']}")).body["events"] == []
    first = call(served.url("/api/events?after=0&limit=3")).body
    assert [e["id"] for e in first["events"]] == [1, 2, 3]
    assert first["last_id"] == 3
    fires = call(served.url("/api/events?kind=fire&after=0&limit=1")).body
    assert [e["kind"] for e in fires["events"]] == ["fire"]
    more = call(served.url(f"/api/events?kind=fire&after={fires['last_id']}")).body
    assert more["events"]  # rest's and taker's fires come in one cycle: one more at least
    assert {e["kind"] for e in more["events"]} == {"fire"}
    assert more["events"][0]["id"] > fires["events"][0]["id"]
    bad = call(served.url("/api/events?limit=0"))
    assert bad.status == 400
