"""Random requests against a real ``botkit serve`` reading a real journal: any method, path
(the described ones, their parameters and garbage), query, headers (tokens, CSRF headers, Host,
Origin, content types) and body. Every answer is a JSON object with an expected status — never
a 500, never a hang — and none holds a secret."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.e2e.serving import BOB, EVERY_TEXT, TOKEN, WAIT_S, Served, botkit, service_env, serving
from tests.fuzz.profiles import FUZZ

PATHS = [
    "/api/health",
    "/api/status",
    "/api/controls",
    "/api/strategies",
    "/api/positions",
    "/api/equity",
    "/api/orders",
    "/api/orders/{x}",
    "/api/decisions",
    "/api/events",
    "/api/openapi.json",
    "/api/control/kill-switch",
    "/api/control/halt",
    "/api/control/cancel",
    "/api/control/flatten",
    "/api/control/requests/{x}",
    "/",
    "/static/{x}",
    "/static/dashboard.js",
    "/favicon.ico",
    "/api",
    "/api/{x}",
]
EXPECTED = {200, 202, 400, 401, 403, 404, 405, 409, 413, 429}
_TEXT = st.text(alphabet=st.characters(codec="ascii", exclude_characters="\r\n\x00"), max_size=30)
_SEGMENT = st.one_of(_TEXT.map(lambda t: quote(t, safe="")), st.just(".."), st.just("%00"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("fuzz-serve")
    env = service_env(folder, taker=True)
    assert botkit(env, "run", "--once").returncode == 0
    with serving(env, folder, "--control-rate", "1000000/1") as s:
        yield s


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], bytes]:
    method = draw(st.sampled_from(["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH"]))
    path = draw(st.sampled_from(PATHS)).replace("{x}", draw(_SEGMENT) or "x")
    query = draw(
        st.dictionaries(
            st.sampled_from(["limit", "after", "kind", "strategy", "x"]),
            st.one_of(_TEXT, st.integers(-(10**20), 10**20).map(str)),
            max_size=3,
        )
    )
    if query:
        path += "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items())
    headers: dict[str, str] = {}
    token = draw(st.sampled_from([TOKEN, BOB, None, "x" * 20, TOKEN[:-1]]))
    if token is not None:
        headers["Authorization"] = draw(st.sampled_from(["Bearer ", "bearer ", ""])) + token
    if draw(st.booleans()):
        headers["X-Botkit-Csrf"] = draw(_TEXT)
    headers["Content-Type"] = draw(
        st.sampled_from(["application/json", "text/plain", "application/json; charset=utf-8"])
    )
    for name in ("Origin", "Sec-Fetch-Site", "Host"):
        if draw(st.integers(0, 3)) == 0:
            headers[name] = draw(_TEXT)
    body = draw(
        st.one_of(
            st.binary(max_size=200),
            st.recursive(
                st.none() | st.booleans() | st.integers() | _TEXT,
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(
                        st.sampled_from(["engage", "strategy", "symbol", "all", "x"]),
                        inner,
                        max_size=3,
                    )
                ),
                max_leaves=6,
            ).map(lambda v: json.dumps(v).encode()),
        )
    )
    return method, path, headers, body


@FUZZ
@given(request=requests())
def test_any_request_is_answered_in_json_without_a_secret(
    served: Served, request: tuple[str, str, dict[str, str], bytes]
) -> None:
    method, path, headers, body = request
    where = urlsplit(served.base)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=WAIT_S)
    try:
        conn.putrequest(method, path, skip_host="Host" in headers)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        answer = conn.getresponse()
        raw = answer.read()
        got = dict(answer.getheaders())
    finally:
        conn.close()
    assert answer.status in EXPECTED, (answer.status, raw[:300])
    page = path.split("?", 1)[0] in ("/", "/favicon.ico") or path.startswith("/static/")
    if method != "HEAD" and not (page and answer.status == 200):  # the dashboard's page
        assert isinstance(json.loads(raw), dict)
    text = raw.decode("utf-8", "replace") + json.dumps(got)
    for secret in EVERY_TEXT:
        assert secret not in text
