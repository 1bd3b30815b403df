"""The first minute in the web app (issue: the relevance gate), in a real Chromium: a new
account, one file dropped into the library, a question about it in plain words in chat. The
answer cites the file, as it did not when the gate refused every natural question."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.browser import enter, needs_chromium, tab
from tests.e2e.rest_harness import PASSWORD

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"embedder": "use"}

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

PROBE = Path(__file__).resolve().parents[1] / "data" / "first_library" / "probe.txt"


def test_the_code_word_question_cites_the_only_file(rest, chromium):
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, "first-minute", PASSWORD, new=True)
        page.locator("input[type=file]").set_input_files([str(PROBE)])
        page.get_by_role("button", name="Upload").click()
        row = page.get_by_role("row").filter(has=page.get_by_role("link", name="probe.txt"))
        expect(row.get_by_text("completed")).to_be_visible(timeout=90_000)
        # the status line counts the one file in the singular
        expect(page.locator("footer")).to_contain_text(
            re.compile(r"\b1 document\b"), timeout=15_000
        )

        page.get_by_role("link", name="Chat").click()
        question = "What is the code word gifunebax about? Answer from my files."
        page.get_by_role("textbox", name="Message").fill(question)
        page.get_by_role("button", name="Send").click()
        answer = page.locator(".msg.assistant").last
        expect(answer.get_by_role("region", name="Sources")).to_contain_text(
            "probe.txt", timeout=60_000
        )
        expect(answer.locator(".answer")).to_contain_text("gifunebax")
        expect(answer.locator("button.cite").first).to_be_visible()
        t.shoot("first-question-chat")
        answer.locator("button.cite").first.click()
        expect(page.get_by_role("dialog").locator("blockquote")).to_contain_text("gifunebax")
        t.shoot("first-question-passage")
        assert t.errors == []
