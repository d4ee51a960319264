"""The browser harness itself: a page served on loopback loads, and an error it raises reaches
``page_errors`` (so an empty ``page_errors`` in the report and dashboard tests means something)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

PAGES = {
    "/ok": b"<!doctype html><title>ok</title><p id='p'>fine</p>",
    "/broken": b"<!doctype html><title>broken</title><script>console.error('boom');"
    b"undefinedFunction();</script>",
}


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/favicon.ico":  # Chromium asks every site; a 404 is a console error
            self.send_response(204)
            self.end_headers()
            return
        body = PAGES.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_clean_page_loads_without_errors(page: Page, page_errors: list[str], site: str) -> None:
    page.goto(f"{site}/ok")
    assert page.text_content("#p") == "fine"
    assert page_errors == []


def test_console_and_page_errors_are_caught(page: Page, page_errors: list[str], site: str) -> None:
    page.goto(f"{site}/broken")
    page.wait_for_load_state("load")
    assert any("boom" in e for e in page_errors)
    assert any("undefinedFunction" in e for e in page_errors)
