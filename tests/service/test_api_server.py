"""``botkit serve``'s HTTP server itself: a client that never finishes its request is cut off
(a connection that sends half a request must not hold a thread for ever)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from botkit.app.api import REQUEST_TIMEOUT_S, Router, json_response, make_server

TOKEN = "t" * 32


@contextmanager
def _serving(request_timeout_s: float) -> Iterator[int]:
    router = Router()
    router.add("GET", "/api/health", lambda _r: json_response(200, {"healthy": True}))
    router.add("POST", "/api/echo", lambda r: json_response(200, r.json()))
    server = make_server(
        router,
        host="127.0.0.1",
        port=0,
        tokens={"alice": TOKEN},
        request_timeout_s=request_timeout_s,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _closed_within(port: int, sent: bytes, seconds: float) -> bool:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(sent)
        conn.settimeout(seconds)
        start = time.monotonic()
        try:
            while conn.recv(4096):
                pass
        except TimeoutError:
            return False
        return time.monotonic() - start < seconds


def test_a_request_whose_headers_never_end_is_cut_off() -> None:
    with _serving(request_timeout_s=0.3) as port:
        assert _closed_within(port, b"GET /api/health HTTP/1.1\r\nHost: x\r\n", 5.0)


def test_a_request_whose_body_never_comes_is_cut_off() -> None:
    head = (
        "POST /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Length: 100\r\n\r\n{{"
    )
    with _serving(request_timeout_s=0.3) as port:
        assert _closed_within(port, head.encode(), 5.0)


def test_the_server_has_a_request_timeout_by_default() -> None:
    assert 0 < REQUEST_TIMEOUT_S <= 60
    router = Router()
    server = make_server(router, host="127.0.0.1", port=0, tokens={"alice": TOKEN})
    try:
        assert server.timeout_s == REQUEST_TIMEOUT_S
    finally:
        server.server_close()
