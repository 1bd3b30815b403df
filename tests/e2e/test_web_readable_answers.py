"""Issue 45, points 4 and 5, in a real Chromium against a real server: search marks the whole
words it matched (never "Onboard[i]ng", "Fr[i]day", "[to]gether"), Japanese words without
their particles; an offline answer reads as plain sentences, and its passage dialog marks
every sentence the answer quoted from it, opening at the one quoted first."""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser import DESKTOP, PHONE, SCREENSHOTS, needs_chromium, tab
from tests.e2e.company_files import upload_company_files
from tests.e2e.web_chat import ask, sign_in

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

STOP_OR_LETTER = re.compile(r"^(?:.|to|on|the|can|my|do|what|is|and)$", re.IGNORECASE)


@pytest.fixture(scope="module")
def web_company_reader(rest):
    user = rest.new_user()
    upload_company_files(user.client)
    return user


def search(page, query: str, name: str):
    page.get_by_role("link", name="Search").click()
    page.get_by_role("searchbox", name="Search").fill(query)
    page.get_by_role("searchbox", name="Search").press("Enter")
    hit = page.locator(".hit").filter(has=page.get_by_role("link", name=name))
    expect(hit).to_be_visible()
    return hit


def test_search_marks_whole_words_it_matched(rest, chromium, web_company_reader):
    with tab(chromium, rest.url + "/") as browsing:
        page = browsing.page
        sign_in(page, web_company_reader)
        hit = search(page, "Can I join the onboarding on Friday to meet the team?", "handbook.md")
        marks = hit.locator("mark")
        expect(marks.first).to_be_visible()
        found = marks.all_inner_texts()
        assert {"Onboarding", "Friday", "team"} <= set(found), found
        assert not [m for m in found if STOP_OR_LETTER.match(m)], found
        passage = hit.locator(".passage").inner_text()
        assert "together" in passage and "together" not in found
        browsing.shoot("45-search-whole-words")

        hit = search(page, "有給休暇は何日ですか", "就業規則.md")
        expect(hit.locator("mark")).to_have_text(["有給休暇", "有給休暇"])  # heading, sentence
        browsing.shoot("45-search-japanese")
        assert browsing.unexpected_errors() == []


def test_the_answer_reads_plainly_and_its_passage_marks_every_quote(
    rest, chromium, web_company_reader
):
    with tab(chromium, rest.url + "/") as browsing:
        page = browsing.page
        sign_in(page, web_company_reader)  # opens the chat
        answer = ask(page, "What do I do for a SEV1 incident?", "runbook.md")
        body = answer.inner_text()
        assert "SEV1: A full outage for all customers." in body, body
        assert "**" not in body and "last reviewed" not in body and "- - " not in body
        browsing.shoot("45-chat-plain-answer")

        answer.get_by_role("region", name="Sources").get_by_role(
            "button", name=re.compile("runbook.md")
        ).first.click()
        dialog = page.get_by_role("dialog")
        marks = dialog.locator("mark.quote")
        expect(marks).to_have_count(3)  # three bullets cite [1]: all three marked
        first = dialog.locator("mark.quote.first")
        expect(first).to_have_count(1)
        expect(first).to_contain_text("SEV1**: A full outage for all customers.")
        expect(first).to_be_in_viewport()
        browsing.shoot("45-chat-passage-every-quote")
        page.keyboard.press("Escape")

        # on a phone the passage box is short: it opens at the sentence quoted first
        page.set_viewport_size(PHONE)
        answer.get_by_role("region", name="Sources").get_by_role(
            "button", name=re.compile("runbook.md")
        ).first.click()
        expect(first).to_be_in_viewport()
        page.screenshot(path=SCREENSHOTS / "45-chat-passage-first-quote-phone.png")
        page.set_viewport_size(DESKTOP)
        assert browsing.unexpected_errors() == []
