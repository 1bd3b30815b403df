"""Shared libraries in the web app, in a real Chromium against a real server (issue 32): an
owner creates a library in Settings and adds a viewer and an editor by name; the editor
uploads to it; the viewer switches to it in the header, finds and chats over the file (with
no upload or delete offered); a
non-member's app shows no such library and a direct link to the file opens nothing. A file
dropped into the drop folder shows in the admins' default library."""

from __future__ import annotations

import pytest

from tests.e2e.browser import enter, needs_chromium, switch_to, tab
from tests.e2e.rest_harness import wait_until_done, watching

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

LIBRARY = "Team Handbook"


def test_an_owner_shares_a_library_that_a_viewer_reads_and_an_outsider_never_sees(rest, chromium):
    owner, viewer, editor, outsider = (rest.new_user() for _ in range(4))
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, owner.username, owner.password)
        page.get_by_role("link", name="Settings").click()
        page.get_by_label("New library name").fill(LIBRARY)
        page.get_by_role("button", name="Create library").click()
        card = page.get_by_role("region", name=LIBRARY)
        for user, role in ((viewer, "viewer"), (editor, "editor")):
            card.get_by_label("Username").fill(user.username)
            card.get_by_label("Role", exact=True).select_option(role)
            card.get_by_role("button", name="Add member").click()
            expect(card.get_by_role("combobox", name=f"Role {user.username}")).to_have_value(role)
        t.shoot("16-settings-libraries")
        assert t.unexpected_errors() == []

    library = next(
        lib for lib in rest.client(owner.token).get("/libraries").json() if lib["name"] == LIBRARY
    )
    editor.client.headers["X-Bunko-Library"] = library["id"]
    uploaded = editor.client.post(
        "/upload",
        files={
            "file": (
                "travel.txt",
                b"The meal allowance outside Europe is 60 euros a day.",
                "text/plain",
            )
        },
    )
    file_id = uploaded.json()["id"]
    wait_until_done(editor.client, file_id)

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, viewer.username, viewer.password)
        expect(page.get_by_role("row")).to_have_count(0)  # their own library is empty
        switch_to(page, LIBRARY)
        expect(page.get_by_role("link", name="travel.txt")).to_be_visible()
        expect(page.get_by_role("heading", level=1)).to_have_text(f"Library · {LIBRARY}")
        # a viewer reads: no upload, no delete (the server would refuse them too)
        expect(page.get_by_text("You can search and chat over")).to_be_visible()
        expect(page.get_by_role("button", name="Upload")).to_have_count(0)
        expect(page.get_by_role("button", name="Delete travel.txt")).to_have_count(0)
        expect(page.get_by_role("button", name="Download travel.txt")).to_be_visible()
        t.shoot("16-library-as-viewer")
        page.get_by_role("link", name="Chat").click()
        page.get_by_role("textbox", name="Message").fill(
            "What is the meal allowance outside Europe?"
        )
        page.get_by_role("button", name="Send").click()
        answer = page.locator(".msg.assistant").last
        expect(answer.get_by_role("region", name="Sources")).to_contain_text(
            "travel.txt", timeout=60_000
        )
        expect(answer.locator(".answer")).to_contain_text("60 euros")
        assert t.unexpected_errors() == []
        viewer_settings(t, rest, library["id"])

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, outsider.username, outsider.password)
        picker = page.get_by_role("combobox", name="Library")
        expect(picker.locator("option")).to_have_count(1)  # only their own
        page.goto(f"{rest.url}/#/files/{file_id}")  # a direct link to the file
        expect(page.get_by_role("alert")).to_contain_text("not found")
        assert t.unexpected_errors(r"status of 404") == []


def viewer_settings(t, rest, library_id: str) -> None:
    """Issue 49, point 3: a viewer's Settings offers only what they may change, says whose
    each setting is, and makes a read-only key for the library; Users is not theirs."""
    page = t.page
    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_text("Yours: they apply to you in every library.")).to_be_visible()
    expect(page.get_by_text(f"Only editors and owners of {LIBRARY} change these.")).to_be_visible()
    expect(page.get_by_role("list", name="In use")).to_contain_text("Chat model")
    for absent in ("Use these models", "Add model"):
        expect(page.get_by_role("button", name=absent)).to_have_count(0)
    page.get_by_label("Top K").fill("7")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="Saved")).to_be_attached()
    keys = page.locator("form").filter(has=page.get_by_role("heading", name="API keys"))
    expect(keys).to_contain_text(f"A read-only key (kb:read) for {LIBRARY}")
    expect(keys.get_by_role("checkbox")).to_have_count(1)
    keys.get_by_label("Key name").fill("reader for my agent")
    keys.get_by_role("button", name="Create key").click()
    secret = keys.get_by_role("textbox", name="New API key")
    expect(secret).not_to_have_value("")
    t.shoot("49-settings-as-viewer")
    with rest.client(secret.input_value()) as agent:
        found = agent.get("/search", params={"q": "meal allowance"})
        assert found.status_code == 200 and "60 euros" in found.text
        refused = agent.post("/upload", files={"file": ("x.txt", b"x", "text/plain")})
        assert refused.status_code == 403
    page.goto(page.url.split("#")[0] + "#/admin")
    expect(page.get_by_text("Only admins manage users.")).to_be_visible()
    expect(page.get_by_role("button", name="Create user")).to_have_count(0)
    assert t.unexpected_errors() == []


def test_a_dropped_file_appears_in_the_admins_default_library_in_the_app(rest, chromium, tmp_path):
    drop = tmp_path / "drop"
    drop.mkdir()
    with watching(rest, drop):
        (drop / "dropped-runbook.md").write_text("Restart the pump with the red switch.", "utf-8")
        with tab(chromium, rest.url + "/") as t:
            page = t.page
            admin = rest.admin()
            enter(page, admin.username, admin.password)
            switch_to(page, "default")
            expect(page.get_by_role("link", name="dropped-runbook.md")).to_be_visible(
                timeout=30_000
            )
            assert t.unexpected_errors() == []
