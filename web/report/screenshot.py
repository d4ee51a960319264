"""Screenshot a report page for the docs: ``python web/report/screenshot.py REPORT.html OUT.png
[--trade N]`` (headless Chromium via Playwright, as tests/browser does; the PNG is reduced to
a 192-colour palette to stay small). With ``--trade N`` the N-th trade row is clicked first and
the pointer rests on its first fill, so the picture shows the hover card."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--trade", type=int)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 860})
        page.goto(args.page.resolve().as_uri())
        page.wait_for_function("window.botkitReport !== undefined")
        if args.trade is not None:
            page.click(f"#trades tbody tr:nth-child({args.trade})")
            row = page.get_attribute(f"#trades tbody tr:nth-child({args.trade})", "data-row")
            first = page.evaluate(f"botkitReport.fill(botkitReport.tradeFills({row})[0])")
            page.evaluate("window.scrollTo(0, 0)")
            x = page.evaluate(f"botkitReport.chart.timeScale().timeToCoordinate({first['bucket']})")
            box = page.locator("#chart").bounding_box()
            assert box is not None
            page.mouse.move(box["x"] + x, box["y"] + 160)
            page.wait_for_selector("#tip:not([hidden])")
        page.wait_for_timeout(300)
        shot = page.screenshot(full_page=False)
        browser.close()
    image = Image.open(io.BytesIO(shot)).convert("RGB").quantize(colors=192)
    image.save(args.out, optimize=True)
    print(f"{args.out}: {args.out.stat().st_size:,} bytes")  # noqa: T201 (a tool's output)


if __name__ == "__main__":
    main()
