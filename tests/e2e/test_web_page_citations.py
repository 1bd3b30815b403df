"""Page citations in the web app, in a real Chromium against a real server (issue 31): the
sources of an answer are gathered under their file with the page of each passage's quoted
sentence ("report.pdf — [1] p.4 [2] p.4"), a passage opens with that sentence marked, and
the original opens in a new tab at that page."""

from __future__ import annotations

import pytest

from tests.e2e.browser import DESKTOP, PHONE, SCREENSHOTS, needs_chromium, tab
from tests.e2e.citation_files import REPORT, SLIDES
from tests.e2e.rest_harness import wait_until_done
from tests.e2e.web_chat import ask, sign_in

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def web_citations_reader(rest):
    user = rest.new_user()
    for name, data, fields in (
        ("report.pdf", REPORT, {"chunkSize": "1000"}),  # one chunk runs from page 1 to 5
        ("ferry.pptx", SLIDES, {}),
    ):
        response = user.client.post("/upload", files={"file": (name, data)}, data=fields)
        assert response.status_code == 201, response.text
        assert wait_until_done(user.client, response.json()["id"])["status"] == "completed"
    return user


def test_sources_show_the_page_mark_the_sentence_and_open_the_original_there(
    rest, chromium, web_citations_reader
):
    with tab(chromium, rest.url + "/") as browsing:
        page = browsing.page
        sign_in(page, web_citations_reader)
        answer = ask(page, "How much came from the grant?", "report.pdf")
        sources = answer.get_by_role("region", name="Sources")
        # Two passages of one file, listed once under its name, each with its page.
        expect(sources.locator(".source-name")).to_have_text(["report.pdf"])
        expect(sources.get_by_role("button")).to_have_text(["[1] p.4", "[2] p.4"])
        browsing.shoot("14-chat-page-citations")

        sources.get_by_role("button", name="Source 2: report.pdf p.4").click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_role("heading")).to_have_text("[2] report.pdf p.4")
        marked = dialog.locator("mark.quote")
        expect(marked).to_contain_text("A grant of $120,000 came from the Maritime Heritage Fund")
        expect(marked).to_be_in_viewport()
        browsing.shoot("14-chat-passage-marked")
        page.set_viewport_size(PHONE)  # on a phone too, the marked sentence is in view
        marked.scroll_into_view_if_needed()
        expect(marked).to_be_in_viewport()
        page.screenshot(path=SCREENSHOTS / "14-chat-passage-marked-phone-view.png")
        page.set_viewport_size(DESKTOP)

        with page.context.expect_page() as opened:
            dialog.get_by_role("button", name="Open the original at p.4").click()
        original = opened.value
        original.wait_for_url("**/original?*#page=4")
        assert "link=" in original.url
        # The link works without the page's token (a new tab sends none).
        fetched = page.context.request.get(original.url.split("#")[0])
        assert fetched.ok and fetched.body() == REPORT
        assert browsing.unexpected_errors() == []

    shots = sorted(p.name for p in SCREENSHOTS.glob("14-chat-*"))
    assert "14-chat-passage-marked-360px.png" in shots


def test_a_slide_is_cited_by_its_number(rest, chromium, web_citations_reader):
    with tab(chromium, rest.url + "/") as browsing:
        page = browsing.page
        sign_in(page, web_citations_reader)
        answer = ask(page, "Which colour was the ferry Aurora repainted?", "ferry.pptx")
        sources = answer.get_by_role("region", name="Sources")
        expect(sources.get_by_role("button", name="Source 1: ferry.pptx slide 3")).to_be_visible()
        assert browsing.unexpected_errors() == []
