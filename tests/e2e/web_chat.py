"""The web app's chat page in a real Chromium (tests/e2e/browser.py): sign in and open the
chat, ask a question and wait for its answer to cite a file."""

from __future__ import annotations

import pytest

from tests.e2e.browser import enter

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").expect


def sign_in(page, user) -> None:
    """Sign in, then open Chat."""
    enter(page, user.username, user.password)
    page.get_by_role("link", name="Chat").click()
    expect(page.get_by_role("heading", name="Chat")).to_be_visible()


def ask(page, question: str, cited: str):
    page.get_by_role("textbox", name="Message").fill(question)
    page.get_by_role("button", name="Send").click()
    answer = page.locator(".msg.assistant").last
    expect(answer.get_by_role("region", name="Sources")).to_contain_text(cited, timeout=60_000)
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    return answer
