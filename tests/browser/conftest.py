"""Shared fixtures for the tests that drive a real browser (headless Chromium via Playwright).

The browser is Debian's Chromium (``/usr/bin/chromium``; ``.ci/run`` installs it with apt-get,
``BOTKIT_CHROMIUM`` names another binary); Playwright's own browser download is not used (its CDN
is unreachable from the build machines), so ``playwright`` only drives the binary. Where no
browser or no ``playwright`` package is available the tests are skipped with the reason.

``page`` is a fresh page per test; every console error and uncaught page error it sees is kept in
``page_errors`` (a test asserts it is empty once its page has loaded). Note that Chromium asks
every http site for ``/favicon.ico`` and logs a 404 as a console error: a served page answers it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_binary() -> Path | None:
    named = os.environ.get("BOTKIT_CHROMIUM")
    if named:
        return Path(named) if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One browser per test module: Playwright's sync API keeps an asyncio event loop running
    in this thread while it is open, so a longer scope would break every later test of the
    same process that calls ``asyncio.run`` ("cannot be called from a running event loop");
    pytest tears a module's fixtures down before it runs another module's test."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (make install brings it)")
    binary = chromium_binary()
    if binary is None:
        pytest.skip(
            "no Chromium found (apt-get install chromium, or set BOTKIT_CHROMIUM=/path/to/chrome)"
        )
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(binary), args=LAUNCH_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page_errors() -> list[str]:
    return []


@pytest.fixture
def page(browser: Browser, page_errors: list[str]) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()

    def on_console(message: Any) -> None:
        if message.type == "error":
            page_errors.append(f"console: {message.text}")

    def on_error(error: Any) -> None:
        page_errors.append(f"page error: {error}")

    opened.on("console", on_console)
    opened.on("pageerror", on_error)
    try:
        yield opened
    finally:
        context.close()
