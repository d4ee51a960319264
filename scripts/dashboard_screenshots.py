"""Take the dashboard screenshots of docs/operations.md (docs/img/dashboard-*.png).

``.venv/bin/python scripts/dashboard_screenshots.py [SECONDS]``: paper trading on the embedded
simulator in a temporary folder (the shipped grid strategy, a taker that buys twice, and a rule
the price band refuses), ``botkit serve`` reading it, and headless Chromium showing the page at
desktop and phone width once SECONDS (default 40) of equity samples are in.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "screenshot-token-0123456789abcdef"  # noqa: S105 - a throwaway token, loopback only
EXTRA = """\
strategy: taker
symbol: BTC_USDT_PERP
every: 2s
rules:
  - name: buy-twice
    when: price.mark > 0
    max_fires: {count: 2, per: 1d}
    place:
      order: {side: BUY, type: MARKET, sz: 2}
  - name: far-below
    when: price.mark > 0
    max_fires: {count: 2, per: 1d}
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.5, sz: 1}
"""


def main(seconds: float) -> None:
    out = ROOT / "docs" / "img"
    with tempfile.TemporaryDirectory(prefix="dashboard-shots-") as tmp:
        folder = Path(tmp)
        strategies = folder / "strategies"
        strategies.mkdir()
        grid = (ROOT / "strategies" / "btc-grid-keep.yaml").read_text()
        (strategies / "btc-grid-keep.yaml").write_text(grid.replace("every: 1m", "every: 2s"))
        (strategies / "taker.yaml").write_text(EXTRA)
        (folder / "botkit.toml").write_text("")
        tokens = folder / "tokens"
        tokens.write_text(f"operator:{TOKEN}\n")
        tokens.chmod(0o600)
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOTKIT_")}
        env.update(
            BOTKIT_CONFIG=str(folder / "botkit.toml"),
            BOTKIT_STRATEGIES_DIR=str(strategies),
            BOTKIT_JOURNAL=str(folder / "journal.sqlite"),
            BOTKIT_KILL_SWITCH_FILE=str(folder / "KILL"),
            BOTKIT_LOG_FORMAT="json",
        )
        argv = [sys.executable, "-m", "botkit"]
        with (folder / "err").open("w") as err:
            run = subprocess.Popen([*argv, "run"], cwd=ROOT, env=env, stderr=err)  # noqa: S603
            serve = subprocess.Popen(  # noqa: S603
                [*argv, "serve", "--port", "0", "--token-file", str(tokens)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
            try:
                assert serve.stdout is not None
                found = re.search(r"http://127\.0\.0\.1:\d+", serve.stdout.readline())
                assert found, "botkit serve did not start"
                base = found.group(0)
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(
                        executable_path=os.environ.get("BOTKIT_CHROMIUM", "/usr/bin/chromium"),
                        args=["--headless", "--no-sandbox", "--disable-gpu"],
                    )
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    page.goto(f"{base}/?poll=1000")
                    page.fill("#token", TOKEN)
                    page.click("#login-form button[type=submit]")
                    time.sleep(seconds)  # let the equity series grow (a picture, not a test)
                    page.locator("[data-explain]").first.click()
                    page.locator("[data-explanation]").first.wait_for()
                    page.screenshot(path=str(out / "dashboard-desktop.png"), full_page=True)
                    phone = browser.new_page(viewport={"width": 390, "height": 844})
                    phone.goto(f"{base}/?poll=1000")
                    phone.fill("#token", TOKEN)
                    phone.click("#login-form button[type=submit]")
                    phone.locator("#feed tr[data-order]").first.wait_for()
                    phone.screenshot(path=str(out / "dashboard-phone.png"), full_page=False)
                    browser.close()
            finally:
                for proc in (run, serve):
                    proc.send_signal(signal.SIGTERM)
                for proc in (run, serve):
                    proc.wait(60)
                if serve.stdout is not None:
                    serve.stdout.close()
    print(f"wrote {out / 'dashboard-desktop.png'} and {out / 'dashboard-phone.png'}")  # noqa: T201


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 40.0)
