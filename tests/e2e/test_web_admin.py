"""First run and the Users page, in a real Chromium against a fresh server with no admin
configured (issue 32, point 2): the first account created in the app is the admin and sees
Users; there it adds a colleague, sees each user's documents and bytes, promotes and demotes
them, and resets their password in a dialog (the colleague then signs in with the new one).
Issue 49, point 5: with sign-up closed (the default) a fresh server still lets its first
account sign up, and then offers "Create account" to nobody; a person changes their own
password in Settings."""

from __future__ import annotations

import pytest

from tests.e2e.browser import enter, needs_chromium, tab
from tests.e2e.rest_harness import PASSWORD, serve

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

NEW_PASSWORD = "the colleague's new password"
OWN_PASSWORD = "a password only I know"


def test_the_first_account_administers_the_rest(tmp_path, chromium):
    closed = {"admin_username": None, "admin_password": None, "signup": "closed"}
    with serve(tmp_path / "data", **closed) as rest:
        with tab(chromium, rest.url + "/") as t:
            page = t.page
            enter(page, "founder", PASSWORD, new=True)
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

            # a dialog with a password field, not prompt(): the password is never in clear
            page.on("dialog", lambda dialog: pytest.fail(f"a browser dialog: {dialog.message}"))
            colleague.get_by_role("button", name="Reset password colleague").click()
            reset = page.get_by_role("dialog", name="Reset the password of colleague")
            field = reset.get_by_label("New password")
            expect(field).to_have_attribute("type", "password")
            field.fill("short")
            reset.get_by_role("button", name="Reset password").click()
            expect(reset).to_be_visible()  # the browser's own check: at least 8 characters
            field.fill(NEW_PASSWORD)
            t.shoot("49-reset-password-dialog")
            reset.get_by_role("button", name="Reset password").click()
            expect(reset).to_have_count(0)
            expect(
                page.get_by_role("status").filter(has_text="Password of colleague reset")
            ).to_be_attached()
            assert t.unexpected_errors(r"status of 409") == []
        signed_in = rest.login("colleague", NEW_PASSWORD)
        assert signed_in.client.get("/knowledge-bases").status_code == 200

        # an admin exists now: sign-up is closed, in the app and at the server
        with tab(chromium, rest.url + "/") as t:
            page = t.page
            expect(page.get_by_text("New accounts are made by an admin")).to_be_visible()
            expect(page.get_by_role("button", name="Create account")).to_have_count(0)
            t.shoot("49-sign-up-closed")
            with rest.client() as anonymous:
                refused = anonymous.post(
                    "/auth/register", json={"username": "stranger", "password": PASSWORD}
                )
                assert refused.status_code == 403 and "admin" in refused.json()["message"]

            # the colleague changes their own password in Settings
            page.get_by_label("Username").fill("colleague")
            page.get_by_label("Password").fill(NEW_PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_role("link", name="Settings").click()
            mine = page.locator("form").filter(has=page.get_by_role("heading", name="My password"))
            mine.get_by_label("Current password").fill(NEW_PASSWORD)
            mine.get_by_label("New password", exact=True).fill(OWN_PASSWORD)
            mine.get_by_label("New password again").fill(OWN_PASSWORD + "!")
            mine.get_by_role("button", name="Change password").click()
            expect(mine.get_by_role("alert")).to_have_text("The two new passwords differ.")
            mine.get_by_label("New password again").fill(OWN_PASSWORD)
            t.shoot("49-change-password")
            mine.get_by_role("button", name="Change password").click()
            expect(page.get_by_role("status").filter(has_text="Password changed")).to_be_attached()
            # this tab goes on with the new token; the old password no longer signs in
            page.get_by_role("link", name="Library").click()
            expect(page.get_by_role("heading", name="Library")).to_be_visible()
            assert t.unexpected_errors() == []
        with rest.client() as anonymous:
            old = {"username": "colleague", "password": NEW_PASSWORD}
            assert anonymous.post("/auth/login", json=old).status_code == 401
        assert rest.login("colleague", OWN_PASSWORD).client.get("/libraries").status_code == 200
