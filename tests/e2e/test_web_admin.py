"""First run and the Users page, in a real Chromium against a fresh server with no admin
configured (issue 32, point 2): the first account created in the app is the admin and sees
Users; there it adds a colleague, sees each user's documents and bytes, promotes and demotes
them, and resets their password (the colleague then signs in with the new one)."""

from __future__ import annotations

import pytest

from tests.e2e.browser import needs_chromium, tab
from tests.e2e.rest_harness import PASSWORD, serve

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

NEW_PASSWORD = "the colleague's new password"


def create_account(page, username: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Library")).to_be_visible()


def test_the_first_account_administers_the_rest(tmp_path, chromium):
    with serve(tmp_path / "data", admin_username=None, admin_password=None) as rest:
        with tab(chromium, rest.url + "/") as t:
            page = t.page
            create_account(page, "founder")
            page.get_by_role("link", name="Users").click()
            founder = page.locator("main li").filter(has_text="founder")
            expect(founder.locator(".tag")).to_have_text("admin")
            expect(founder).to_contain_text("0 documents · 0 B")

            page.get_by_role("textbox", name="Username").fill("colleague")
            page.get_by_role("textbox", name="Password").fill("colleague password")
            page.get_by_role("button", name="Create user").click()
            colleague = page.locator("main li").filter(has_text="colleague")
            expect(colleague).to_contain_text("0 documents")
            expect(colleague.locator(".tag")).to_have_count(0)

            colleague.get_by_role("button", name="Make admin").click()
            expect(colleague.locator(".tag")).to_have_text("admin")
            t.shoot("15-users-roles")
            colleague.get_by_role("button", name="Remove admin").click()
            expect(colleague.locator(".tag")).to_have_count(0)
            # the last admin cannot step down: the server's reason is shown
            founder.get_by_role("button", name="Remove admin").click()
            expect(page.get_by_role("alert")).to_contain_text("last admin")

            page.once("dialog", lambda dialog: dialog.accept(NEW_PASSWORD))
            colleague.get_by_role("button", name="Reset password colleague").click()
            expect(
                page.get_by_role("status").filter(has_text="Password of colleague reset")
            ).to_be_attached()
            assert t.unexpected_errors(r"status of 409") == []
        signed_in = rest.login("colleague", NEW_PASSWORD)
        assert signed_in.client.get("/knowledge-bases").status_code == 200
