"""Answers people mark, in the web app in a real Chromium against a real server (issue 50,
points 2 and 3): a viewer marks an answer up with a comment and a refused one down, under
each answer in Chat; the library's owner reads both in Settings (Marked answers) and the
refused question on the missing list with the passages Bunko had; the viewer's Settings
offers neither."""

from __future__ import annotations

import pytest

from tests.e2e.browser import enter, needs_chromium, switch_to, tab

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

REST_SETTINGS = {"embedder": "use"}
LIBRARY = "Marked Handbook"
ANSWERED = "When was the Kessock lighthouse built?"
REFUSED = "Where do employees park their cars?"
LIGHTHOUSE = (
    b"The Kessock lighthouse was built in 1872 on the northern shore. "
    b"Its keeper trims the lamp every night."
)


def test_a_viewer_marks_answers_and_the_owner_reads_them(rest, chromium):
    shared = rest.shared_library(LIBRARY, "viewer", documents={"lighthouse.txt": LIGHTHOUSE})
    owner, viewer = shared.owner, shared.members["viewer"]

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, viewer.username, viewer.password)
        switch_to(page, LIBRARY)
        page.get_by_role("link", name="Chat").click()
        for question in (REFUSED, ANSWERED):  # the refused one first: no follow-up
            page.get_by_role("textbox", name="Message").fill(question)
            page.get_by_role("button", name="Send").click()
            expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=60_000)
        refused, answered = page.locator(".msg.assistant").all()
        expect(answered.get_by_role("region", name="Sources")).to_contain_text("lighthouse.txt")
        expect(refused.get_by_role("region", name="Sources")).to_contain_text("No sources.")
        answered.get_by_role("textbox", name="Comment (optional)").fill("Clear and cited.")
        answered.get_by_role("button", name="Helpful", exact=True).click()
        expect(answered.get_by_role("status")).to_contain_text("Thank you")
        expect(answered.get_by_role("button", name="Helpful", exact=True)).to_have_attribute(
            "aria-pressed", "true")  # fmt: skip
        refused.get_by_role("button", name="Not helpful").click()
        expect(refused.get_by_role("status")).to_contain_text("Thank you")
        t.shoot("50-chat-answer-marks")
        page.get_by_role("link", name="Settings").click()
        card = page.get_by_role("region", name=LIBRARY)
        expect(card).to_be_visible()
        expect(card.get_by_text("Marked answers")).to_have_count(0)  # owners only
        assert t.unexpected_errors() == []

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, owner.username, owner.password)
        page.get_by_role("link", name="Settings").click()
        card = page.get_by_role("region", name=LIBRARY)
        card.get_by_text("Marked answers").click()
        marks = card.locator(".marked-answers li")
        expect(marks).to_have_count(2)
        expect(marks.filter(has_text=ANSWERED)).to_contain_text("Clear and cited.")
        expect(marks.filter(has_text=ANSWERED)).to_contain_text("lighthouse.txt")
        expect(marks.filter(has_text=REFUSED)).to_have_class("marked down")
        card.get_by_text("Questions it could not answer").click()
        missing = card.locator(".missing-questions li.missing")
        expect(missing).to_have_count(1)
        expect(missing.first).to_contain_text(REFUSED)
        expect(missing.first).to_contain_text("asked 1× · 1 found nothing · 1 marked down")
        expect(
            card.get_by_role("checkbox", name="Collect questions it could not answer")
        ).to_be_checked()
        missing.first.get_by_text("Nearest passages it had").click()
        expect(missing.first.locator(".nearest li")).to_contain_text("lighthouse.txt")
        t.shoot("50-settings-marked-and-missing")
        assert t.unexpected_errors() == []
