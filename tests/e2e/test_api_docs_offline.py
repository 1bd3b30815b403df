"""/docs with no network (issue 49, point 8): Swagger UI's script and style come from this
server (a package ships them, as the web app's own), so the API reference renders in a
Chromium that may reach nothing but the server."""

from __future__ import annotations

import pytest

from tests.e2e.browser import DESKTOP, SCREENSHOTS, needs_chromium
from tests.e2e.rest_harness import serve

pytest.importorskip("fastapi_offline", reason="the local extra ships Swagger UI's assets")
pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect


def test_the_api_reference_renders_offline(tmp_path, chromium):
    with serve(tmp_path / "data") as rest:
        with rest.client() as http:
            page = http.get("/docs")
            assert page.status_code == 200
            assert "/docs/assets/swagger-ui-bundle.js" in page.text
            assert "cdn.jsdelivr.net" not in page.text
            script = http.get("/docs/assets/swagger-ui-bundle.js")
            assert script.status_code == 200 and "SwaggerUIBundle" in script.text
            assert "cdn.jsdelivr.net" not in http.get("/redoc").text
        context = chromium.new_context(viewport=DESKTOP)
        try:
            browser_page = context.new_page()
            elsewhere: list[str] = []

            def only_the_server(route) -> None:
                if route.request.url.startswith(rest.url):
                    route.continue_()
                else:  # offline: any other host is out of reach
                    elsewhere.append(route.request.url)
                    route.abort()

            browser_page.route("**/*", only_the_server)
            browser_page.goto(rest.url + "/docs")
            expect(browser_page.locator(".swagger-ui .info .title")).to_contain_text("Bunko")
            expect(browser_page.get_by_text("/auth/signup").first).to_be_visible()
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            browser_page.screenshot(path=SCREENSHOTS / "49-api-docs-offline-desktop.png")
            assert elsewhere == []
        finally:
            context.close()
