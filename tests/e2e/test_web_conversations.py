"""Kept conversations in the web app, in a real Chromium against a real server: a conversation
made in one browser context is listed in a second one and resumes there (from the list and
from its address), is renamed and deleted there; and after every question the newest answer
is in view above the pinned message box, on a desktop and on a 360 px phone."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from tests.e2e.browser import PHONE, SCREENSHOTS, needs_chromium, tab
from tests.e2e.chat_harness import load_documents
from tests.e2e.web_chat import ask, sign_in

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

FIRST = "When was the lighthouse built?"
QUESTIONS = [  # (question, the file its answer cites); four outgrow either screen
    (FIRST, "lighthouse.txt"),
    ("When does the village bakery open?", "bakery.txt"),
    ("rye bread oven", "bakery.txt"),
    ("What happened to the lighthouse in 2023?", "lighthouse.txt"),
]


@pytest.fixture
def chatting_user(rest):
    user = rest.new_user()
    load_documents(user)
    return user


def assert_in_view(page) -> None:
    """The newest answer whole on screen: below the top, above the pinned message box."""
    answer = page.locator(".msg.assistant").last.bounding_box()
    pinned = page.locator("form.chat-input").bounding_box()
    height = page.viewport_size["height"]
    assert answer["y"] >= 0, (answer, pinned)
    assert answer["y"] + answer["height"] <= pinned["y"] + 0.5, (answer, pinned)
    assert pinned["y"] + pinned["height"] <= height + 0.5, (pinned, height)


def conversations(page):
    return page.get_by_role("navigation", name="Conversations")


def test_a_conversation_made_in_one_browser_resumes_in_another(rest, chromium, chatting_user):
    with tab(chromium, rest.url + "/") as first:
        page = first.page
        sign_in(page, chatting_user)
        for question, cited in QUESTIONS:
            ask(page, question, cited)
            assert_in_view(page)
        assert page.evaluate("window.scrollY") > 0  # the log outgrew the screen
        made = parse_qs(urlparse(page.url).query)["conversation"][0]
        listed = conversations(page).get_by_role("link", name=FIRST)
        expect(listed).to_have_attribute("aria-current", "page")
        page.screenshot(path=SCREENSHOTS / "12-chat-in-view-desktop.png")
        first.shoot("12-chat-conversations")
        first.shoot("12-chat-conversations", dark=True)
        assert first.errors == []

    with tab(chromium, rest.url + "/") as second:  # another context: nothing in its storage
        page = second.page
        sign_in(page, chatting_user)
        expect(page.locator(".msg")).to_have_count(0)
        conversations(page).get_by_role("link", name=FIRST).click()
        expect(page.locator(".msg.assistant")).to_have_count(4)
        expect(page.locator(".msg.user").first).to_have_text(FIRST)
        expect(page.locator(".msg.assistant").first.locator(".answer")).to_contain_text("1872")
        assert parse_qs(urlparse(page.url).query)["conversation"] == [made]
        ask(page, "Who trims the lamp?", "lighthouse.txt")
        assert_in_view(page)
        page.goto(f"{rest.url}/?conversation={made}#/chat")  # its address opens it
        expect(page.locator(".msg.assistant")).to_have_count(5)

        conversations(page).get_by_role("button", name=f"Rename “{FIRST}”").click()
        page.get_by_role("textbox", name="Conversation title").fill("Coast and bakery")
        page.screenshot(path=SCREENSHOTS / "13-chat-rename-desktop.png")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("heading", name="Coast and bakery")).to_be_visible()
        expect(conversations(page).get_by_role("link", name="Coast and bakery")).to_be_visible()

        page.get_by_role("button", name="New conversation").click()
        expect(page.locator(".msg")).to_have_count(0)
        ask(page, "Which shore is the lighthouse on?", "lighthouse.txt")
        expect(conversations(page).get_by_role("link")).to_have_count(2)
        second.shoot("13-chat-two-conversations")
        page.once("dialog", lambda dialog: dialog.accept())
        conversations(page).get_by_role(
            "button", name="Delete “Which shore is the lighthouse on?”"
        ).click()
        expect(conversations(page).get_by_role("link")).to_have_count(1)
        expect(page.locator(".msg")).to_have_count(0)  # the open one went: a new one starts
        assert "conversation=" not in page.url
        assert second.errors == []

    with httpx.Client(base_url=rest.url, headers=chatting_user.client.headers) as http:
        kept = http.get("/conversations").json()
        assert [(c["id"], c["title"], c["messageCount"]) for c in kept] == [
            (made, "Coast and bakery", 10)
        ]


def test_the_newest_answer_is_in_view_on_a_phone(rest, chromium, chatting_user):
    with tab(chromium, rest.url + "/") as phone:
        page = phone.page
        page.set_viewport_size(PHONE)
        sign_in(page, chatting_user)
        for question, cited in QUESTIONS:
            ask(page, question, cited)
            assert_in_view(page)
        assert page.evaluate("window.scrollY") > 0  # the log outgrew the screen
        page.screenshot(path=SCREENSHOTS / "12-chat-in-view-360px.png")
        page.locator(".conversations summary").click()  # folded above the chat on a phone
        expect(conversations(page).get_by_role("link", name=FIRST)).to_be_visible()
        page.screenshot(path=SCREENSHOTS / "12-chat-list-360px.png")
        assert phone.errors == []
