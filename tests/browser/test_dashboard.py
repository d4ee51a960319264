"""The dashboard in a real browser (headless Chromium), against real processes: ``botkit run``
paper trading on the embedded simulator (a strategy placing an order every second, and one
refused by the price band), and ``botkit serve`` with a token file, reading its journal.

The page polls every 300 ms (``?poll=300``, the injected interval); the tests wait on page
conditions (Playwright's ``expect``) and on the journal through the API, never for fixed time.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from botkit.app.dashboard import POLLED
from botkit.cli.serve_cmd import SERVE_NICE
from tests.e2e.serving import EVERY_TEXT, ROOT, TOKEN, Answer, Served, call, service_env, serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

POLL = "?poll=300"
WAIT_S = 120.0
"""A hang guard, not a timing assertion: generous, because ``botkit serve`` runs niced (10) and
a saturated machine (a parallel suite, benchmarks beside it) starves it for long stretches."""
REFUSED = """\
strategy: low
symbol: BTC_USDT_PERP
every: 1s
rules:
  - name: too-low
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}
"""


@dataclass
class Service:
    served: Served
    folder: Path
    run: subprocess.Popen[str]

    @property
    def base(self) -> str:
        return self.served.base

    @property
    def kill_file(self) -> Path:
        return self.folder / "STOP"

    def get(self, path: str) -> Any:
        answer = call(self.base + path)
        assert answer.status == 200, answer.raw
        return answer.body

    def orders(self) -> list[dict[str, Any]]:
        return list(self.get("/api/decisions?limit=200")["orders"])


def wait_for(what: str, predicate: Callable[[], Any]) -> Any:
    """Poll ``predicate`` (a real process's state: no clock to inject) until it is truthy."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """``botkit run`` paper trading (the serve tests' resting BUY every second, and a BUY the
    price band refuses) and ``botkit serve`` reading it, with alice's token."""
    folder = tmp_path_factory.mktemp("dashboard")
    env = service_env(folder)
    (folder / "strategies" / "low.yaml").write_text(REFUSED)
    with (
        (folder / "run.err").open("w") as run_err,
        subprocess.Popen(
            [sys.executable, "-m", "botkit", "run"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=run_err,
            text=True,
        ) as run,
    ):
        try:
            with serving(env, folder) as served:
                svc = Service(served, folder, run)
                wait_for("the first orders", lambda: len(_orders_or_none(svc)) >= 2)
                yield svc
        finally:
            run.send_signal(signal.SIGTERM)
            run.wait(WAIT_S)
    for name in ("run.err", "serve.err"):
        text = (folder / name).read_text()
        assert not [secret for secret in EVERY_TEXT if secret in text]


def _orders_or_none(service: Service) -> list[dict[str, Any]]:
    answer = call(service.base + "/api/decisions?limit=5")
    return list(answer.body["orders"]) if answer.status == 200 else []


def test_serve_yields_the_cpu_to_the_service(service: Service) -> None:
    """botkit serve lowers its own priority (--nice, default 10): on a busy machine the page's
    polling takes CPU from other work before it takes it from trading."""
    assert os.getpriority(os.PRIO_PROCESS, service.served.proc.pid) == min(
        19, os.getpriority(os.PRIO_PROCESS, 0) + SERVE_NICE
    )
    assert os.getpriority(os.PRIO_PROCESS, service.run.pid) == os.getpriority(os.PRIO_PROCESS, 0)


def test_the_bench_polls_what_the_page_polls() -> None:
    """bench/bench_dashboard.py measures a poller asking for POLLED: the page's own list."""
    source = (ROOT / "frontend" / "src" / "dashboard.js").read_text()
    block = source.split("const ENDPOINTS = {", 1)[1].split("};", 1)[0]
    assert tuple(re.findall(r'"(/api/[^"]+)"', block)) == POLLED


def test_the_page_and_its_assets_are_public_and_hold_no_data(service: Service) -> None:
    """The page needs no token (it asks for one); every figure comes from /api/, behind it."""
    page = call(service.base + "/", token=None)
    assert page.status == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert b'<script src="/static/dashboard.js"' in page.raw
    assert b"BTC_USDT_PERP" not in page.raw
    for name, kind in (("dashboard.js", "text/javascript"), ("dashboard.css", "text/css")):
        asset = call(f"{service.base}/static/{name}", token=None)
        assert asset.status == 200
        assert asset.headers["Content-Type"].startswith(kind)
        assert b"uPlot" in asset.raw  # the chart library is bundled: nothing from a CDN
        assert b"https://cdn" not in asset.raw
    answers: list[Answer] = [page, asset]
    for path in ("/static/nothing.js", "/static/..%2fapi.py", "/static/index.html"):
        answers.append(call(service.base + path, token=None))
        assert answers[-1].status == 404, path
    answers.append(call(service.base + "/api/equity", token=None))
    assert answers[-1].status == 401
    answers.append(call(service.base + "/api/equity"))
    assert answers[-1].status == 200
    assert answers[-1].body["samples"][0]["eq"]
    for answer in answers:
        assert not [secret for secret in EVERY_TEXT if secret.encode() in answer.raw]


def sign_in(page: Page, service: Service) -> None:
    from playwright.sync_api import expect

    page.goto(service.base + "/" + POLL)
    page.fill("#token", TOKEN)
    page.click("#login-form button[type=submit]")
    expect(page.locator("body")).to_have_attribute("data-refreshes", re.compile(r"\d"))


def refreshes(page: Page) -> int:
    return int(page.locator("body").get_attribute("data-refreshes") or 0)


def test_the_page_loads_offline_without_console_errors(
    page: Page, page_errors: list[str], service: Service
) -> None:
    from playwright.sync_api import expect

    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    sign_in(page, service)
    expect(page.locator("#health")).to_have_text("healthy")
    expect(page.locator("#open-orders")).to_contain_text("rest · rest-one")
    expect(page.locator("#problems")).to_contain_text("px_below_band")
    expect(page.locator("#strategies")).to_contain_text("rest")
    expect(page.locator("#chart canvas")).to_have_count(1)
    expect(page.locator("#pnl")).to_have_text("no open position holds a strategy's fills")
    expect(page.locator("#pnl-note")).to_have_text("")  # nothing falls short: no note
    assert page_errors == []
    assert asked, "the page asked for nothing"
    assert all(url.startswith(service.base + "/") for url in asked), asked  # no CDN


def test_the_page_fits_a_phone(browser: Browser, service: Service) -> None:
    """At phone width the page is one column: nothing wider than the screen (wide tables scroll
    inside their card), the kill switch in reach."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = context.new_page()
        sign_in(page, service)
        expect(page.locator("#feed tr[data-order]").first).to_be_visible()
        expect(page.locator("#kill-button")).to_be_in_viewport()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        cards = page.locator("section.card")
        for i in range(cards.count()):
            box = cards.nth(i).bounding_box()
            assert box is not None
            assert box["x"] >= 0
            assert box["x"] + box["width"] <= 390
    finally:
        context.close()


TICKS = """async (spans) => {
  const out = [];
  for (const [seconds, step] of spans) {
    const host = document.createElement('div');
    host.style.width = document.getElementById('chart').clientWidth + 'px';
    document.getElementById('chart').after(host);
    const start = 1764000000000;
    const samples = [];
    for (let t = 0; t <= seconds; t += step) {
        samples.push({ts_ms: start + t * 1000, eq: String(10000 + Math.sin(t)), upl: '0'});
    }
    window.botkitDashboard.drawChart({samples}, host);
    await new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn)));
    const {font, ticks} = JSON.parse(host.querySelector('.uplot').dataset.xTicks);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = font;
    host.remove();
    out.push(ticks.map(([x, label]) => [x, label, ctx.measureText(label).width]));
  }
  return out;
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_the_chart_s_time_labels_never_run_into_each_other(
    browser: Browser, service: Service, width: int
) -> None:
    """The chart's time axis, drawn as the page draws it over spans of 40 s, 10 min, 6 h and
    3 days, at phone and desktop width: one row of labels, none running into the next
    (measured in the axis' own font, at the places the chart put them). uPlot's default labels
    add a row with the date that ran together at phone width."""
    context = browser.new_context(viewport={"width": width, "height": 844})
    try:
        page = context.new_page()
        sign_in(page, service)
        spans = [[40, 1], [600, 10], [6 * 3600, 60], [3 * 86400, 600]]
        for (seconds, _step), drawn in zip(spans, page.evaluate(TICKS, spans), strict=True):
            assert len(drawn) >= 2, (seconds, drawn)
            assert all("\n" not in label for _x, label, _w in drawn), (seconds, drawn)
            for (x1, _a, w1), (x2, _b, w2) in pairwise(drawn):
                assert x2 - x1 >= (w1 + w2) / 2 + 4, (seconds, drawn)  # centred, with some air
    finally:
        context.close()


def test_a_wrong_token_is_refused_and_the_page_asks_again(page: Page, service: Service) -> None:
    from playwright.sync_api import expect

    page.goto(service.base + "/" + POLL)
    page.fill("#token", "not-the-token-0000000000")
    page.click("#login-form button[type=submit]")
    expect(page.locator("#login-error")).to_have_text("that token was refused")
    expect(page.locator("#app")).to_be_hidden()


def test_an_order_appears_within_one_refresh_and_its_explanation_opens(
    page: Page, page_errors: list[str], service: Service
) -> None:
    from playwright.sync_api import expect

    sign_in(page, service)
    before = refreshes(page)
    newest = service.orders()[0]  # exists now: the refresh after the next one started later
    row = page.locator(f'tr[data-order="{newest["cl_ord_id"]}"]')
    expect(row).to_be_visible()
    assert int(row.get_attribute("data-first-refresh") or 0) <= before + 2
    row.locator("[data-explain]").click()
    explained = page.locator(f'tr[data-explanation="{newest["cl_ord_id"]}"]')
    expect(explained).to_contain_text(f"{newest['strategy']} · {newest['rule']}")
    expect(explained).to_contain_text("price.mark = ")  # what the rule saw
    expect(explained).to_contain_text(f"{newest['side']} {newest['type']}")  # what it asked
    expect(explained).to_contain_text("outcome")
    assert page_errors == []


def test_the_kill_switch_asks_first_then_engages_and_nothing_new_is_placed(
    page: Page, page_errors: list[str], service: Service
) -> None:
    from playwright.sync_api import expect

    sign_in(page, service)
    button = page.locator("#kill-button")
    expect(button).to_be_enabled()
    button.click()
    dialog = page.locator("#confirm-kill")
    expect(dialog).to_be_visible()
    page.click("#kill-cancel")  # asking is not engaging
    expect(dialog).to_be_hidden()
    assert not service.kill_file.exists()

    button.click()
    page.click("#kill-confirm")
    expect(dialog).to_be_hidden()
    expect(page.locator("#kill-state")).to_have_text("kill switch ENGAGED")
    expect(button).to_be_disabled()
    assert "api:alice" in service.kill_file.read_text()  # who asked: the token's name

    def noticed() -> int | None:
        events = service.get("/api/events?kind=controls&limit=5")["events"]
        engaged = [e for e in events if "kill switch: ENGAGED" in e["text"]]
        return engaged[-1]["cycle_id"] if engaged else None

    engaged_at = int(wait_for("the service to see the kill switch", noticed))
    wait_for(
        "the next cycle's decisions",
        lambda: [o for o in service.orders() if o["cycle_id"] > engaged_at and o["outcome"]],
    )
    since = [o for o in service.orders() if o["cycle_id"] >= engaged_at]
    assert [o for o in since if o["outcome"] != "rejected_local"] == []  # nothing sent
    stopped = [o for o in since if o["rule"] == "rest-one"]
    assert stopped
    assert all(any(r.startswith("kill_switch:") for r in o["reasons"]) for o in stopped)
    assert page_errors == []
