"""A new team's first week with the web app (issue 49), in a real Chromium against a real
server: where files land (the drop folder's library, said on the library page, chosen by an
admin, followed by the CLI), metadata from the form and from front matter, a session that
spans tabs."""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser import DESKTOP, Tab, _with_strict_csp, enter, needs_chromium, switch_to, tab
from tests.e2e.cli_harness import run
from tests.e2e.rest_harness import JWT_SECRET, PASSWORD, wait_until_done, watching
from tests.waiting import wait_for

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

SAME_SECRET = {"BUNKO_JWT_SECRET": JWT_SECRET}
FED = "The server’s drop folder fills this library"
NOT_FED = "the server’s drop folder fills another library"


def test_the_library_page_says_what_fills_it_and_an_admin_points_the_drop_folder(
    rest, chromium, tmp_path
):
    admin = rest.admin()
    assert admin.client.post("/libraries", json={"name": "Ops"}).status_code == 201
    assert admin.client.post("/libraries", json={"name": "Legal"}).status_code == 201
    drop = tmp_path / "drop"
    drop.mkdir()
    with watching(rest, drop) as monitor, tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, admin.username, admin.password)
        expect(page.get_by_text(NOT_FED)).to_be_visible()  # one's own library
        switch_to(page, "default")
        expect(page.get_by_text(FED)).to_be_visible()

        page.get_by_role("link", name="Users").click()
        card = page.get_by_role("region", name="Drop folder")
        card.get_by_label("Fills the library", exact=True).select_option(label="Ops")
        t.shoot("49-drop-folder-target")
        card.get_by_role("button", name="Save").click()
        expect(page.get_by_role("status").filter(has_text="now fills Ops")).to_be_attached()

        # point 1: a sub-folder fills a library of its own (issue 49, rest of point 1)
        expect(card.get_by_text("No sub-folder fills a library of its own.")).to_be_visible()
        card.get_by_label("Sub-folder", exact=True).fill("legal")
        card.get_by_label("Goes to the library", exact=True).select_option(label="Legal")
        card.get_by_role("button", name="Point it there").click()
        expect(
            page.get_by_role("status").filter(has_text="legal/ now fills Legal")
        ).to_be_attached()
        expect(card.get_by_role("listitem").filter(has_text="legal/")).to_contain_text("Legal")
        t.shoot("49-drop-subfolder-mapped")

        (drop / "pump-runbook.md").write_text("Restart the pump with the red switch.", "utf-8")
        (drop / "legal").mkdir(exist_ok=True)
        (drop / "legal" / "lease.md").write_text("The lease ends in March.", "utf-8")
        page.get_by_role("link", name="Library").click()
        switch_to(page, "Ops")
        expect(page.get_by_text(FED)).to_be_visible()
        expect(page.get_by_role("link", name="pump-runbook.md")).to_be_visible(timeout=30_000)
        t.shoot("49-library-fed-by-drop")
        switch_to(page, "Legal")
        expect(
            page.get_by_text("The drop folder’s sub-folder legal/ fills this library")
        ).to_be_visible()
        expect(page.get_by_role("link", name=re.compile("lease.md"))).to_be_visible(timeout=30_000)
        t.shoot("49-library-fed-by-subfolder")

        # given back, the sub-folder fills the folder's library (Ops) again
        page.get_by_role("link", name="Users").click()
        card.get_by_role("button", name="Give legal/ back to the drop folder’s library").click()
        expect(card.get_by_text("No sub-folder fills a library of its own.")).to_be_visible()
        assert t.unexpected_errors() == []
        libraries = rest.services.accounts.libraries
        assert wait_for(lambda: monitor.folders().keys() == {libraries.workspace_named("Ops")})

    # a non-admin is told whether the drop folder fills their library, never which one
    user = rest.new_user()
    told = user.client.get("/drop-folder").json()
    assert told["feedsThisLibrary"] is False and told["subfoldersHere"] == []
    assert told["libraryId"] is None and told["subfolders"] == []
    assert user.client.put("/drop-folder", json={"library": "Ops"}).status_code == 403

    # the CLI searches the drop folder's library by default, and says which
    searched = run(["search", "red switch"], rest.services.settings.data_dir, env=SAME_SECRET)
    assert "library 'Ops' (the drop folder's; --library NAME for another)" in searched.stdout
    assert "pump-runbook.md" in searched.stdout
    data = rest.services.settings.data_dir
    mine = run(["search", "red switch", "--library", user.username], data, env=SAME_SECRET)
    assert f"no results in library '{user.username}'" in mine.stdout


RUNBOOK = (
    "---\nteam: ops\nyear: 2024\n---\n# Pump runbook\n\nRestart the pump with the red switch.\n"
)


def test_front_matter_tags_a_file_through_every_door_and_the_form_says_so(rest, chromium):
    """Point 2: a Markdown file's front matter is read for web and REST uploads as for drops;
    the form's rows win key by key, are shown against the file's own keys before the upload,
    and empty after it."""
    user = rest.new_user()
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, user.username, user.password)
        page.locator("input[type=file]").set_input_files(
            [{"name": "runbook.md", "mimeType": "text/markdown", "buffer": RUNBOOK.encode()}]
        )
        queued = page.locator(".queue li").filter(has_text="runbook.md")
        expect(queued).to_contain_text("Its front matter gives: team, year (the form’s rows win")
        page.get_by_text("Metadata for these files (optional)").click()
        editor = page.locator(".upload-meta")
        editor.get_by_label("Key 1").fill("team")
        editor.get_by_label("Value 1").fill("night shift")
        page.get_by_label("Category").fill("manuals")
        t.shoot("49-upload-front-matter")
        page.get_by_role("button", name="Upload").click()
        expect(page.locator(".upload-summary")).to_have_text("1 uploaded", timeout=60_000)
        expect(editor.get_by_label("Key 1")).to_have_value("")  # the next batch starts blank
        expect(page.get_by_label("Category")).to_have_value("")
        assert t.unexpected_errors() == []
    records = {f["name"]: f for f in user.client.get("/knowledge-bases").json()}
    assert records["runbook.md"]["metadata"] == {"team": "night shift", "year": 2024}
    assert records["runbook.md"]["category"] == "manuals"
    plain = user.client.post(
        "/upload", files={"file": ("shifts.md", RUNBOOK.replace("ops", "days"), "text/markdown")}
    ).json()
    assert plain["metadata"] == {"team": "days", "year": 2024}


def test_a_session_spans_tabs_opens_links_where_they_point_and_ends_everywhere(rest, chromium):
    """Point 4: signed in once, a second tab (a pasted "Open in file" link) opens the file
    without a sign-in (an HttpOnly, SameSite=Strict cookie traded with a CSRF token); a
    signed-out browser opens the link after its sign-in; signing out ends every tab."""
    user = rest.new_user()
    uploaded = user.client.post(
        "/upload", files={"file": ("lamp.txt", b"Trim the lamp at dusk.", "text/plain")}
    ).json()
    wait_until_done(user.client, uploaded["id"])
    link = f"{rest.url}/#/files/{uploaded['id']}"
    context = chromium.new_context(viewport=DESKTOP)
    try:
        first = context.new_page()
        first.route("**/*", _with_strict_csp)
        first.goto(rest.url + "/")
        enter(first, user.username, user.password)
        cookies = {c["name"]: c for c in context.cookies()}
        assert cookies["bunko_session"]["httpOnly"] is True
        assert cookies["bunko_session"]["sameSite"] == "Strict"
        assert cookies["bunko_csrf"]["sameSite"] == "Strict"

        # the cookie alone does not resume a session: another site cannot send the header
        jar = {"bunko_session": cookies["bunko_session"]["value"]}
        with rest.client() as other_site:
            other_site.cookies.update(jar)
            assert other_site.post("/auth/session/resume").status_code == 401
            forged = other_site.post("/auth/session/resume", headers={"X-CSRF-Token": "guess"})
            assert forged.status_code == 401

        second = context.new_page()
        second.route("**/*", _with_strict_csp)
        second.goto(link)
        expect(second.get_by_role("heading", name="lamp.txt")).to_be_visible()
        Tab(second).shoot("49-second-tab-file")

        # signing out in the first tab ends the second one too
        first.get_by_role("button", name="Sign out").click()
        expect(first.get_by_role("button", name="Sign in")).to_be_visible()
        second.reload()
        expect(second.get_by_role("button", name="Sign in")).to_be_visible()
        assert "bunko_session" not in {c["name"] for c in context.cookies()}
    finally:
        context.close()

    # a browser with no session: the sign-in page, then the file the link named
    with tab(chromium, link) as t:
        page = t.page
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        sign_in_to(page, user)
        expect(page.get_by_role("heading", name="lamp.txt")).to_be_visible()
        assert page.url.endswith(f"#/files/{uploaded['id']}")
        assert t.unexpected_errors(r"status of 401") == []


def sign_in_to(page, user) -> None:
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(user.password)
    page.get_by_role("button", name="Sign in").click()


def test_one_language_rule_for_a_person_an_admin_made_in_a_japanese_browser(rest, chromium):
    """Point 6: the saved choice, else the browser's, kept across sign-in, reloads and
    Settings; the server's messages in the page's language."""
    admin = rest.admin()
    made = admin.client.post("/users", json={"username": "hanako", "password": PASSWORD})
    assert made.status_code == 201, made.text
    with tab(chromium, rest.url + "/", locale="ja-JP") as t:
        page = t.page
        expect(page.get_by_role("heading", name="Bunko へようこそ")).to_be_visible()
        page.get_by_label("ユーザー名").fill("hanako")
        page.get_by_label("パスワード").fill("not the password")
        page.get_by_role("button", name="サインイン").click()
        expect(page.get_by_role("alert")).to_have_text("ユーザー名またはパスワードが違います。")
        page.get_by_label("パスワード").fill(PASSWORD)
        page.get_by_role("button", name="サインイン").click()
        expect(page.get_by_role("heading", name="ライブラリ")).to_be_visible()
        page.reload()
        expect(page.get_by_role("heading", name="ライブラリ")).to_be_visible()
        page.get_by_role("link", name="設定").click()
        expect(page.get_by_label("言語", exact=True).first).to_have_value("ja")
        t.shoot("49-japanese-settings")
        # a choice in the header is saved and kept
        page.get_by_role("combobox", name="言語").first.select_option("en")
        expect(page.get_by_role("heading", name="Settings")).to_be_visible()
        page.reload()
        expect(page.get_by_role("heading", name="Settings")).to_be_visible()
        assert t.unexpected_errors(r"status of 401") == []
    hanako = rest.login("hanako", PASSWORD)
    saved = hanako.client.get("/user-settings").json()
    assert (saved["language"], saved["languageChosen"]) == ("en", True)
    with tab(chromium, rest.url + "/", locale="ja-JP") as t:  # another browser, in Japanese
        page = t.page
        page.get_by_label("ユーザー名").fill("hanako")
        page.get_by_label("パスワード").fill(PASSWORD)
        page.get_by_role("button", name="サインイン").click()
        expect(page.get_by_role("link", name="Settings")).to_be_visible()  # the saved choice


def test_the_upload_form_speaks_plainly(rest, chromium):
    """Point 7: the engine's options folded away; a file the server cannot read refused at
    once in one sentence; no Retry for a refusal; a file already held said as such."""
    user = rest.new_user()
    note = {"name": "note.txt", "mimeType": "text/plain", "buffer": b"The ferry leaves at six."}
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, user.username, user.password)
        expect(page.get_by_label("Chunk size")).to_be_hidden()
        png = {"name": "diagram.png", "mimeType": "image/png", "buffer": b"\x89PNG\r\n\x1a\n"}
        page.locator("input[type=file]").set_input_files([png, note])
        queue = page.get_by_role("list", name="Files to upload")
        refused = queue.get_by_role("listitem").filter(has_text="diagram.png")
        expect(refused.get_by_role("alert")).to_have_text(
            "PNG images are not supported yet: upload PDF, Word (.docx), PowerPoint (.pptx), "
            "Excel (.xlsx), HTML, Markdown, text, CSV or JSON."
        )
        expect(page.get_by_role("combobox", name="Mode: note.txt")).to_be_hidden()
        t.shoot("49-upload-plain")
        page.get_by_role("button", name="Upload").click()
        summary = page.locator(".upload-summary")
        expect(summary).to_have_text("1 uploaded", timeout=60_000)

        page.locator("input[type=file]").set_input_files([note])  # the same file again
        page.get_by_role("button", name="Upload").click()
        expect(summary).to_have_text("1 already in the library", timeout=60_000)
        expect(queue).to_contain_text("Already in the library (the same file): nothing added")

        blank = {"name": "blank.txt", "mimeType": "text/plain", "buffer": b""}
        page.locator("input[type=file]").set_input_files([blank])
        page.get_by_role("button", name="Upload").click()
        expect(summary).to_have_text("1 failed", timeout=60_000)  # a refusal: no Retry
        expect(summary.get_by_role("button", name="Retry")).to_have_count(0)
        page.get_by_text("Advanced options").click()
        expect(page.get_by_label("Chunk size")).to_be_visible()
        t.shoot("49-upload-advanced")
        assert t.unexpected_errors(r"status of 400") == []
    listed = user.client.get("/knowledge-bases").json()
    assert [f["name"] for f in listed] == ["note.txt"]


def test_the_smaller_things_a_new_team_trips_over(rest, chromium):
    """Point 8: the address after sign-up, a new library in the header at once and in full,
    no focus ring around the page after switching, the time a file was added."""
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, "team-lead", PASSWORD, new=True)
        assert page.url.endswith("#/library")
        page.get_by_role("link", name="Settings").click()
        name = "Team Ops (閲覧テスト用の共有)"
        page.get_by_label("New library name").fill(name)
        page.get_by_role("button", name="Create library").click()
        picker = page.get_by_role("combobox", name="Library")
        expect(picker.locator("option", has_text=name)).to_have_count(1)  # no new sign-in
        switch_to(page, name)
        expect(page.get_by_role("heading", name=f"Library · {name}")).to_be_visible()
        fits = "e => e.scrollWidth <= e.clientWidth"
        assert page.get_by_role("combobox", name="Library").evaluate(fits)
        assert page.locator("main").evaluate("e => getComputedStyle(e).outlineStyle") == "none"
        page.locator("input[type=file]").set_input_files(
            [{"name": "rota.txt", "mimeType": "text/plain", "buffer": b"Night shift: Aiko."}]
        )
        page.get_by_role("button", name="Upload").click()
        added = page.get_by_role("row").filter(has_text="rota.txt").locator("td.date")
        expect(added).to_have_text(re.compile(r"\d{1,2}:\d{2}"), timeout=60_000)
        t.shoot("49-new-library-in-header")
        assert t.unexpected_errors() == []
