"""The web app's first screen: JS + CSS payload (uncompressed bytes) and time to first render
on loopback, in Debian's headless Chromium against the real REST server.

    .venv/bin/python tests/bench/bench_web.py [--runs 5]

Per run, a fresh browser context (empty cache) opens `/` and waits for the sign-in form.
Reports each script and stylesheet the first screen loaded with its size, their total, and
the median of: first contentful paint (the browser's own `paint` entry) and the app's
`bunko:first-render` mark (set once the first screen, the sign-in form, is in the page),
both from the start of navigation. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.e2e.browser import browser, chromium_path  # noqa: E402
from tests.e2e.rest_harness import serve  # noqa: E402

SIGNED_IN_FORM = "form button[type=submit]"


def measure(chromium, url: str) -> dict:
    context = chromium.new_context(locale="en-US")
    page = context.new_page()
    assets: dict[str, int] = {}

    def record(response) -> None:
        kind = response.request.resource_type
        if kind in ("script", "stylesheet"):
            assets[response.url.removeprefix(url)] = len(response.body())

    page.on("response", record)
    page.goto(url + "/")
    page.wait_for_selector(SIGNED_IN_FORM)
    ready = page.evaluate("performance.getEntriesByName('bunko:first-render')[0].startTime")
    page.wait_for_load_state("networkidle")
    fcp = page.evaluate(
        "performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint')"
        "?.startTime ?? null"
    )
    context.close()
    return {"assets": assets, "fcp_ms": fcp, "form_ms": ready}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if chromium_path() is None:
        sys.exit("Debian's chromium is not installed (make system)")
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp) / "data") as rest, browser() as b:
        runs = [measure(b, rest.url) for _ in range(args.runs)]
    assets = runs[0]["assets"]
    print(json.dumps({
        "first_screen_assets": dict(sorted(assets.items())),
        "js_bytes": sum(v for k, v in assets.items() if k.endswith(".js")),
        "css_bytes": sum(v for k, v in assets.items() if k.endswith(".css")),
        "js_plus_css_bytes": sum(assets.values()),
        "runs": args.runs,
        "first_contentful_paint_ms_median": statistics.median(r["fcp_ms"] for r in runs),
        "first_render_ms_median": statistics.median(r["form_ms"] for r in runs),
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
