"""The library page's live status, in a real headless Chromium against a real Bunko server:
while a file is pending or indexing it polls GET /knowledge-bases, waiting twice as long
each time nothing changed (1 s, 2 s, 4 s … at most 15 s; on AWS each poll is an API Gateway +
Lambda + DynamoDB call), from 1 s again after a change, not at all while the tab is hidden
or after the person left the page, and no more once every file is done.

The browser's clock is Playwright's fake one, moved on by hand, and the list is answered by
the test, so no assertion depends on how fast the machine is: each step reads the delay the
page scheduled (`data-poll-ms` on the file list) and counts the requests it sent."""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser import enter, needs_chromium, tab
from tests.e2e.rest_harness import PASSWORD

pytestmark = [needs_chromium]
expect = pytest.importorskip("playwright.sync_api").expect

SET_VISIBILITY = """(state) => {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
}"""

# The library's list request, whatever page, search or order it asks for.
LISTING = re.compile(r"/knowledge-bases(\?.*)?$")


def record(status: str) -> dict:
    """A file record as GET /knowledge-bases lists it."""
    return {
        "id": "f-1",
        "originalName": "slow.pdf",
        "status": status,
        "chunkCount": 0,
        "size": 2048,
        "category": None,
        "error": None,
        "mode": "fast",
    }


def test_polls_back_off_pause_while_hidden_and_stop(rest, chromium):
    user = rest.new_user()
    status = {"now": "pending"}
    polls: list[str] = []

    def answer(route) -> None:
        if route.request.method != "GET":
            route.fallback()
            return
        polls.append(status["now"])
        route.fulfill(json=[record(status["now"])])

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, user.username, PASSWORD)
        page.clock.install()
        page.route(LISTING, answer)
        page.reload()
        listing = page.locator(".files")
        expect(listing).to_have_attribute("data-poll-ms", "1000")
        expect(page.get_by_text("pending")).to_be_visible()

        def next_poll() -> int:
            """Move the clock to the scheduled poll; the delay the page schedules after it."""
            waited = int(listing.get_attribute("data-poll-ms"))
            sent = len(polls)
            listing.evaluate("(el) => el.removeAttribute('data-poll-ms')")
            page.clock.run_for(waited)
            expect(listing).to_have_attribute("data-poll-ms", re.compile(r"^\d+$"))
            assert len(polls) == sent + 1
            return int(listing.get_attribute("data-poll-ms"))

        # nothing changes: each wait twice the last, up to 15 s
        assert [next_poll() for _ in range(6)] == [2000, 4000, 8000, 15000, 15000, 15000]
        # a status changes: back to 1 s, then growing again
        status["now"] = "indexing"
        assert [next_poll(), next_poll()] == [1000, 2000]
        expect(page.get_by_text("indexing")).to_be_visible()

        # hidden: the poll that falls due sends nothing, however long the tab stays hidden
        sent = len(polls)
        page.evaluate(SET_VISIBILITY, "hidden")
        page.clock.run_for(2000)
        page.clock.run_for(120_000)
        assert len(polls) == sent
        # shown again: one poll at once, and from 1 s again
        page.evaluate(SET_VISIBILITY, "visible")
        expect(listing).to_have_attribute("data-poll-ms", "1000")
        assert len(polls) == sent + 1

        # done: the list says so and no poll follows
        status["now"] = "completed"
        page.clock.run_for(1000)
        expect(page.get_by_text("completed")).to_be_visible()
        expect(listing).not_to_have_attribute("data-poll-ms", re.compile(".*"))
        sent = len(polls)
        page.clock.run_for(120_000)
        assert len(polls) == sent

        # left the page while a file indexes: its poll never fires
        status["now"] = "indexing"
        page.get_by_role("link", name="Search").click()
        page.get_by_role("link", name="Library").click()
        expect(listing).to_have_attribute("data-poll-ms", "1000")
        page.get_by_role("link", name="Search").click()
        expect(page.get_by_role("searchbox", name="Search", exact=True)).to_be_visible()
        # Counted once the page is left: a list request the page sent while it opened may
        # reach the route only now (a CI run on a busy machine saw 13 where 12 were read).
        sent = len(polls)
        page.clock.run_for(120_000)
        assert len(polls) == sent
        assert t.errors == []
