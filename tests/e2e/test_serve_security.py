"""The security promises of ``botkit serve`` (docs/security.md, section 6), each through a real
``botkit serve`` process reading a journal a ``botkit run`` wrote on the simulator."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.serving import (
    BOB,
    EVERY_TEXT,
    TOKEN,
    Served,
    botkit,
    call,
    service_env,
    serving,
)

CONTROLS = ("/api/control/kill-switch", "/api/control/halt")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("served")
    done = botkit(service_env(path, taker=True), "run", "--once")
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[Served]:
    with serving(service_env(folder, taker=True), folder, "--exchange-every", "0") as s:
        yield s


def test_control_without_a_token_is_401_and_changes_nothing(served: Served, folder: Path) -> None:
    for path in CONTROLS:
        for token in (None, "wrong-token-0000000000"):
            answer = call(served.url(path), method="POST", token=token, body={"engage": True})
            assert answer.status == 401
    assert not (folder / "STOP").exists()
    assert not (folder / "HALT").exists()


@pytest.mark.parametrize(
    ("headers", "csrf", "why"),
    [
        ({}, False, "X-Botkit-Csrf"),
        ({"Origin": "http://evil.example"}, True, "Origin"),
        ({"Origin": "null"}, True, "Origin"),
        ({"Sec-Fetch-Site": "cross-site"}, True, "Sec-Fetch-Site"),
        ({"Host": "evil.example:80"}, True, "Host"),
        ({"Content-Type": "text/plain"}, True, "Content-Type"),
    ],
)
def test_a_control_request_failing_the_csrf_check_is_403_and_changes_nothing(
    served: Served, folder: Path, headers: dict[str, str], csrf: bool, why: str
) -> None:
    for path in CONTROLS:
        answer = call(
            served.url(path), method="POST", body={"engage": True}, headers=headers, csrf=csrf
        )
        assert answer.status == 403, answer.body
        assert why in answer.body["error"]
        assert "CSRF" in answer.body["error"]
    filed = call(
        served.url("/api/control/cancel"),
        method="POST",
        body={"all": True},
        headers=headers,
        csrf=csrf,
    )
    assert filed.status == 403
    assert not (folder / "STOP").exists()
    assert not (folder / "HALT").exists()
    assert not (folder / "journal.sqlite.requests").exists()


def test_the_page_s_own_origin_passes_the_csrf_check(served: Served, folder: Path) -> None:
    origin = served.base  # http://127.0.0.1:PORT
    on = call(
        served.url("/api/control/halt"),
        method="POST",
        body={"engage": True},
        headers={"Origin": origin, "Sec-Fetch-Site": "same-origin"},
    )
    off = call(served.url("/api/control/halt"), method="POST", body={"engage": False})
    assert (on.status, off.status) == (200, 200)
    assert not (folder / "HALT").exists()


def test_no_cors_preflight_is_ever_granted(served: Served) -> None:
    answer = call(
        served.url("/api/control/kill-switch"),
        method="OPTIONS",
        token=None,
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert answer.status in (401, 405)
    assert not any(h.lower().startswith("access-control-") for h in answer.headers)


def test_control_requests_beyond_the_rate_are_429_per_token(folder: Path, tmp_path: Path) -> None:
    env = service_env(folder, taker=True)
    with serving(env, tmp_path, "--control-rate", "2/3600") as served:
        url = served.url("/api/control/halt")
        codes = [
            call(url, method="POST", token=BOB, body={"engage": e}).status for e in (True, False)
        ]
        refused = call(url, method="POST", token=BOB, body={"engage": True})
        assert codes == [200, 200]
        assert refused.status == 429
        assert int(refused.headers["Retry-After"]) > 0
        assert "at most 2 per 3600 s" in refused.body["error"]
        assert not (folder / "HALT").exists()  # the refused one did nothing
        # another token has its own allowance; reads are not limited
        assert call(url, method="POST", token=TOKEN, body={"engage": False}).status == 200
        assert call(served.url("/api/health"), token=BOB).status == 200


def test_without_a_token_control_is_off_and_reads_answer_this_host_only(folder: Path) -> None:
    env = service_env(folder, taker=True)
    with serving(env, folder, tokens=False) as served:
        assert call(served.url("/api/health"), token=None).status == 200
        rebound = call(served.url("/api/health"), token=None, headers={"Host": "evil.example"})
        assert rebound.status == 403  # a page of another name rebound to 127.0.0.1 reads nothing
        answer = call(served.url("/api/control/kill-switch"), method="POST", body={"engage": True})
        assert answer.status == 403
        assert "--token-file" in answer.body["error"]
    assert not (folder / "STOP").exists()


def _every_get_path(served: Served) -> list[str]:
    """Every GET endpoint of the OpenAPI description, parameters filled from live answers."""
    paths = call(served.url("/api/openapi.json")).body["paths"]
    decisions = call(served.url("/api/decisions")).body
    cl_ord_id = decisions["orders"][0]["cl_ord_id"]
    filed = call(served.url("/api/control/cancel"), method="POST", body={"strategy": "nobody"})
    out = []
    for path, ops in paths.items():
        if "get" in ops:
            out.append(
                path.replace("{cl_ord_id}", cl_ord_id).replace(
                    "{request_id}", filed.body["request"]
                )
            )
    return out


def test_no_answer_holds_a_secret(served: Served) -> None:
    """With the API credentials set and two named tokens: every endpoint's answer (body and
    headers), with and without a token, and every refusal, holds none of them; nor does
    serve's log."""
    answers = []
    for path in [*_every_get_path(served), "/api/nothing", "/"]:
        for token in (TOKEN, BOB, None, "wrong-token-0000000000"):
            answers.append(call(served.url(path), token=token))
    for path in CONTROLS:
        answers.append(call(served.url(path), method="POST", body={"engage": "x"}))
        answers.append(call(served.url(path), method="POST", body={"engage": True}, csrf=False))
    assert {a.status for a in answers} >= {200, 400, 401, 403, 404}
    for answer in answers:
        text = answer.raw.decode() + json.dumps(answer.headers)
        for secret in EVERY_TEXT:
            assert secret not in text
    log = served.log.read_text()
    for secret in EVERY_TEXT:
        assert secret not in log


def test_a_token_file_is_checked_line_by_line_without_quoting_it(tmp_path: Path) -> None:
    env = service_env(tmp_path)
    cases = {
        "short": ("alice:short\n", "line 1", "at least 16 characters"),
        "twice": (f"alice:{TOKEN}\nalice:{BOB}\n", "line 2", "given twice"),
        "empty": ("# nothing\n\n", "tokens", "at least 16 characters"),
    }
    for name, (text, where, what) in cases.items():
        token_file = tmp_path / name
        token_file.write_text(text)
        os.chmod(token_file, 0o600)
        done = botkit(env, "serve", "--port", "0", "--token-file", str(token_file))
        lines = done.stderr.strip().splitlines()
        assert done.returncode != 0
        assert len(lines) == 1, done.stderr
        assert what in lines[0]
        assert where in lines[0] or name in lines[0]
        assert TOKEN not in done.stderr
        assert BOB not in done.stderr


def test_another_method_is_405_in_json_with_allow(served: Served) -> None:
    for method in ("PUT", "DELETE", "TRACE", "BREW"):
        answer = call(served.url("/api/health"), method=method)
        assert answer.status == 405
        assert answer.headers["Allow"] == "GET, HEAD"
        assert method in answer.body["error"]
    assert call(served.url("/api/control/halt")).headers["Allow"] == "POST"
