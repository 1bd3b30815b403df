"""A library's move in the web app, in a real Chromium against a real server (issue 50, point
4): in Settings, the owner exports a shared library and downloads its archive; imports it back
as a new library, which is listed with its documents once indexed; a file that is no archive
is refused with the server's message and nothing made; a viewer is offered no export."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.e2e.browser import enter, needs_chromium, tab

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

LIBRARY = "Moving Handbook"
MOVED = "Moved Handbook"
DOCUMENTS = {
    "lighthouse.txt": b"The Kessock lighthouse was built in 1872 on the northern shore.",
    "harbour.txt": b"Ferries leave the harbour every hour from the north pier.",
}


def test_an_owner_exports_a_library_and_imports_it_back(rest, chromium, tmp_path):
    shared = rest.shared_library(LIBRARY, "viewer", documents=DOCUMENTS)
    owner, viewer = shared.owner, shared.members["viewer"]

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, owner.username, owner.password)
        page.get_by_role("link", name="Settings").click()
        card = page.get_by_role("region", name=LIBRARY)
        card.get_by_text("Export library").click()
        card.get_by_role("checkbox", name="Include conversations").check()
        card.get_by_role("button", name="Write the archive").click()
        link = card.get_by_role("link", name=f"Download {LIBRARY}.bunko.zip")
        expect(link).to_be_visible(timeout=60_000)  # the export job ran, polled to its end
        with page.expect_download() as download:
            link.click()
        archive = tmp_path / "handbook.zip"
        download.value.save_as(archive)
        with zipfile.ZipFile(archive) as opened:
            manifest = json.loads(opened.read("manifest.json"))
        assert manifest["library"]["name"] == LIBRARY
        assert manifest["documents"] == len(DOCUMENTS) and manifest["conversations"] == 0
        t.shoot("50-settings-export-library")

        form = page.get_by_role("form", name="Import a library from an archive")
        not_archive = tmp_path / "notes.zip"
        not_archive.write_bytes(b"plain words, no archive")
        form.get_by_label("Archive (.zip)").set_input_files(not_archive)
        form.get_by_role("button", name="Import").click()
        expect(page.get_by_role("alert")).to_contain_text("is not a Bunko archive")
        assert [lib["name"] for lib in owner.client.get("/libraries").json()].count(MOVED) == 0

        form.get_by_label("Archive (.zip)").set_input_files(archive)
        form.get_by_label("Name for the imported library (optional)").fill(MOVED)
        form.get_by_role("button", name="Import").click()
        # the page polls the import through its indexing before it says so
        done = f"Imported {len(DOCUMENTS)} documents into {MOVED}"
        expect(form.get_by_role("status")).to_have_text(done, timeout=120_000)
        expect(page.get_by_role("alert")).to_be_hidden()
        moved = page.get_by_role("region", name=MOVED)
        expect(moved).to_be_visible()
        expect(moved.get_by_role("heading", name=f"{MOVED} owner")).to_be_visible()
        # its members came with it, by username
        expect(moved.get_by_label(f"Role {viewer.username}")).to_have_value("viewer")
        t.shoot("50-settings-import-library")
        assert t.unexpected_errors(r"status of 400") == []  # the refused file's answer

    mine = {lib["name"]: lib["id"] for lib in owner.client.get("/libraries").json()}
    owner.client.headers["X-Bunko-Library"] = mine[MOVED]
    files = owner.client.get("/knowledge-bases").json()
    assert sorted(f["name"] for f in files) == sorted(DOCUMENTS)
    assert {f["status"] for f in files} == {"completed"}

    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, viewer.username, viewer.password)
        page.get_by_role("link", name="Settings").click()
        card = page.get_by_role("region", name=LIBRARY)
        expect(card).to_be_visible()
        expect(card.get_by_text("Export library")).to_have_count(0)  # owners only
        expect(page.get_by_role("form", name="Import a library from an archive")).to_be_visible()
        assert t.unexpected_errors() == []
