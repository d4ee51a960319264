"""TLS verification is always on: the client refuses a server whose certificate it cannot
verify, and no code in the package turns verification off."""

from __future__ import annotations

import ast
import http.server
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from botkit.errors import ConnectFailed
from botkit.live.client import ExchangeClient

PACKAGE = Path(__file__).resolve().parents[2] / "botkit"


def test_no_code_in_the_package_disables_certificate_checks() -> None:
    offenders: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg in {"verify", "cert_reqs"}:
                offenders.append(f"{path.name}:{node.value.lineno}")
            if isinstance(node, ast.Attribute) and node.attr in {
                "CERT_NONE",
                "_create_unverified_context",
                "check_hostname",
            }:
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"serverTime": 1700000000000}'
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def self_signed_https(tmp_path: Path) -> Iterator[str]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = http.server.HTTPServer(("127.0.0.1", 0), _Answer)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_certificate_that_cannot_be_verified_is_refused(self_signed_https: str) -> None:
    with (
        ExchangeClient(self_signed_https, key="k", secret="s", timeout=5.0) as client,
        pytest.raises(ConnectFailed, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify"),
    ):
        client.server_time()
