"""A library's activity in the web app, in a real Chromium against a real server (issue 50,
point 1): in Settings, the owner opens a shared library's Activity and sees its audit trail
(an editor's upload, a viewer's refused delete, by name); the viewer's Settings offers none."""

from __future__ import annotations

import pytest

from tests.e2e.browser import enter, needs_chromium, tab

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

LIBRARY = "Audited Handbook"


def test_an_owner_reads_the_librarys_activity_and_a_viewer_sees_none(rest, chromium):
    shared = rest.shared_library(LIBRARY, "viewer", "editor")
    owner, viewer, editor = shared.owner, shared.members["viewer"], shared.members["editor"]
    uploaded = editor.client.post("/upload", files={"file": ("travel.txt", b"60 euros a day.")})
    assert uploaded.status_code == 201
    refused = viewer.client.delete(f"/knowledge-bases/{uploaded.json()['id']}")
    assert refused.status_code == 403

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, owner.username, owner.password)
        page.get_by_role("link", name="Settings").click()
        card = page.get_by_role("region", name=LIBRARY)
        card.get_by_text("Activity").click()
        rows = card.locator("table.activity-table tr")
        expect(rows.first).to_be_visible()
        refusal = rows.filter(has_text="DELETE /knowledge-bases/{file_id}")
        expect(refusal).to_contain_text("refused 403")
        expect(refusal).to_contain_text(viewer.username)
        expect(rows.filter(has_text="POST /upload")).to_contain_text(editor.username)
        # adding members, made from the owner's own library, is this library's event too
        expect(rows.filter(has_text="PUT /libraries/{library_id}/members")).to_have_count(2)
        t.shoot("50-settings-library-activity")
        assert t.unexpected_errors() == []

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, viewer.username, viewer.password)
        page.get_by_role("link", name="Settings").click()
        card = page.get_by_role("region", name=LIBRARY)
        expect(card).to_be_visible()
        expect(card.get_by_text("Activity")).to_have_count(0)  # owners only
        assert t.unexpected_errors() == []
