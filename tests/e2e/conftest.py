"""The web app as deployed on AWS, for the Chromium tests that need the bucket's own CORS rule
(signed uploads): moto's server, the api function's app served with the stack's resources
(each module sets its `THRESHOLD`, config.json's presignUploadsAbove, and
the `PASSWORD` it signs up with), and a signed-up tab."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    from tests.e2e.aws_web import moto_server

    with moto_server() as url:
        yield url


@pytest.fixture
def deployed_shape(request: pytest.FixtureRequest, moto_url, osmem_clone, monkeypatch):
    from tests.e2e.aws_web import serve_as_deployed

    with serve_as_deployed(
        moto_url=moto_url,
        opensearch_url=osmem_clone.url,
        monkeypatch=monkeypatch,
        presign_above=request.module.THRESHOLD,
    ) as served:
        yield served


@pytest.fixture
def tab(request: pytest.FixtureRequest, chromium, deployed_shape):
    """A fresh context on the app, signed up as hanako. No request routing (browser.tab routes
    every request for its CSP): Playwright would answer CORS preflights itself, and the
    bucket's CORS rule is what is under test."""
    from tests.e2e.browser import DESKTOP, Tab, enter

    context = chromium.new_context(locale="en-US", viewport=DESKTOP)
    context.set_default_timeout(30_000)
    opened = Tab(context.new_page())
    page = opened.page
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: opened.errors.append(f"uncaught: {exc}"))
    page.goto(deployed_shape.url + "/")
    enter(page, "hanako", request.module.PASSWORD, new=True)
    try:
        yield opened
    finally:
        context.close()
