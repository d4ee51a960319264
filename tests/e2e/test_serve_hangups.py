"""A client that resets its connection mid-request costs ``botkit serve`` one debug line, not
a traceback on the operator's terminal, and the server goes on answering."""

from __future__ import annotations

import socket
import struct
from pathlib import Path

from tests.e2e.serving import call, service_env, serving


def test_a_reset_mid_request_writes_no_traceback_and_the_server_answers_on(
    tmp_path: Path,
) -> None:
    with serving(service_env(tmp_path), tmp_path) as served:
        host, port = served.base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as client:
            client.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers unfinished
            assert call(served.url("/api/health")).status == 200  # ours is accepted by now
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # closed with SO_LINGER 0: a reset, which the handler's read of the headers meets
        assert call(served.url("/api/health")).status == 200
        served.proc.terminate()
        served.proc.wait(10)
    log = served.log.read_text()
    assert "Traceback" not in log, log
    assert "ConnectionResetError" not in log, log
