"""A real headless Chromium (Debian's `chromium`, driven by Playwright for Python) for the web
app's end-to-end tests: console errors collected, screenshots at desktop and 360 px."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

# Git-ignored: the tests write each page here, desktop and 360 px, light and dark.
SCREENSHOTS = Path(os.environ.get("BUNKO_SCREENSHOTS", Path(__file__).parent / "screenshots"))
DESKTOP = {"width": 1280, "height": 800}
# What a strict same-origin deployment sends (issue 16 adds it to the server; CloudFront sends
# the same with the API's URL in connect-src). Chromium reports any violation as a console
# error, which the tests fail on: no inline script or handler, no eval, no other host.
STRICT_CSP = "; ".join([
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'",
    "frame-ancestors 'none'",
])  # fmt: skip
PHONE = {"width": 360, "height": 740}


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


needs_chromium = pytest.mark.skipif(
    chromium_path() is None, reason="Debian's chromium is not installed (make system)"
)


@dataclass
class Tab:
    page: sync_api.Page
    errors: list[str] = field(default_factory=list)

    def shoot(self, name: str, *, dark: bool = False) -> None:
        """The page as it looks now, on a desktop and on a 360 px phone."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        if dark:
            self.page.emulate_media(color_scheme="dark")
        for label, size in (("desktop", DESKTOP), ("360px", PHONE)):
            self.page.set_viewport_size(size)
            suffix = "-dark" if dark else ""
            self.page.screenshot(path=SCREENSHOTS / f"{name}-{label}{suffix}.png", full_page=True)
        self.page.set_viewport_size(DESKTOP)
        if dark:
            self.page.emulate_media(color_scheme="light")

    def unexpected_errors(self, *allowed: str) -> list[str]:
        return [e for e in self.errors if not any(re.search(a, e) for a in allowed)]


def enter(page: sync_api.Page, username: str, password: str, *, new: bool = False) -> None:
    """Sign in on the web app's first screen (`new`: create the account), then wait for the
    Library page, which the app opens after either (its password hash takes seconds on a
    loaded machine: the tab's 30 s, not expect's 5 s default)."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Create account" if new else "Sign in").click()
    library = page.get_by_role("heading", name="Library")
    sync_api.expect(library).to_be_visible(timeout=30_000)


def switch_to(page: sync_api.Page, name: str) -> None:
    """Pick the library named `name` in the header's Library picker, and wait until it is
    the one shown."""
    picker = page.get_by_role("combobox", name="Library")
    option = picker.locator("option", has_text=name)
    sync_api.expect(option).to_have_count(1)
    picker.select_option(option.get_attribute("value"))
    sync_api.expect(page.get_by_role("combobox", name="Library")).to_have_value(
        option.get_attribute("value")
    )


def shoot(page: sync_api.Page, name: str) -> None:
    """A full-page screenshot in SCREENSHOTS, named for what it shows."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)


@contextmanager
def browser() -> Iterator[sync_api.Browser]:
    with sync_api.sync_playwright() as playwright:
        # --no-sandbox: the tests may run as root (CI), where Chromium's sandbox cannot start.
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), args=["--no-sandbox"]
        )
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def tab(
    chromium: sync_api.Browser, url: str, *, locale: str = "en-US", routed: bool = True
) -> Iterator[Tab]:
    """A fresh browser context (its own storage) on `url`, collecting console errors.
    `routed=False` leaves requests alone (no strict CSP put on the page): Playwright would
    answer CORS preflights itself, where a bucket's CORS rule is what is under test."""
    context = chromium.new_context(locale=locale, viewport=DESKTOP)
    context.set_default_timeout(30_000)
    page = context.new_page()
    if routed:
        page.route("**/*", _with_strict_csp)
    opened = Tab(page)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: opened.errors.append(f"uncaught: {exc}"))
    page.goto(url)
    try:
        yield opened
    finally:
        context.close()


def _with_strict_csp(route) -> None:
    """The page itself gets STRICT_CSP; every other request goes through untouched (so the
    chat's event stream still streams)."""
    if route.request.resource_type != "document":
        route.continue_()
        return
    response = route.fetch()
    route.fulfill(
        response=response, headers={**response.headers, "content-security-policy": STRICT_CSP}
    )
