"""The web app's Sources page (issue 48, point 3) in a real Chromium against a real server, a
real website on a local socket and a real Git repository served over HTTP: an owner tests a
website's connection, adds it, syncs it (a progress bar while the sync runs, then its counts
and each file's error), pauses and resumes it, adds a Git repository the same way, and removes
one keeping its documents and the other with them; a viewer sees the list and nothing to
press; the page in Japanese. An owner adds a Confluence space (a fake Confluence on a local
socket) with a credential through the form, syncs it, replaces its expired credential from its
card, and no answer the page receives ever holds the credential."""

from __future__ import annotations

import base64
import json
import threading
from urllib.parse import urlsplit

import pytest

from tests.e2e.browser import enter, needs_chromium, tab
from tests.e2e.fake_confluence import FakeConfluence
from tests.e2e.git_http import GitOverHttp
from tests.e2e.git_repo import Repo
from tests.e2e.local_site import LocalSite

pytestmark = needs_chromium
expect = pytest.importorskip("playwright.sync_api").expect

# The people here add sources on loopback (the local site), which the operator allows.
REST_SETTINGS = {"allow_private_sources": True}
# Confluence Cloud credentials (EMAIL:API_TOKEN): the first, then the one that replaces it.
FIRST_KEY = "me@example.com:ATATT3x-first-form-secret-5b7e"
NEW_KEY = "me@example.com:ATATT3x-replacing-secret-9d2c"
GRAPH = "https://graph.microsoft.com/v1.0"


class GatedSite(LocalSite):
    """A local site whose /slow.html answers only once the test opens the gate: the sync is
    still running while the test looks at the page."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def answer(self, path, headers):
        if path == "/slow.html":
            self.gate.wait(60)
        return super().answer(path, headers)


@pytest.fixture
def gated_site():
    s = GatedSite()
    s.html(
        "/",
        "<main><p>Handbook. <a href='/leave.html'>Leave</a> <a href='/slow.html'>Travel</a>"
        " <a href='/empty.txt'>Notes</a></p></main>",
        title="Handbook",
    )
    s.html("/leave.html", "<main><p>Leave: twenty days a year.</p></main>", title="Leave")
    s.html("/slow.html", "<main><p>Travel: book trains under five hours.</p></main>", "Travel")
    s.pages["/empty.txt"] = ("text/plain", b"")  # a file the library cannot take
    yield s
    s.gate.set()
    s.close()


@pytest.fixture
def served_handbook(tmp_path):
    repo = Repo(tmp_path / "repo")
    repo.write("docs/remote.md", "Remote work: any two days a week.\n")
    repo.commit("first")
    s = GitOverHttp(repo, tmp_path)
    yield s
    s.close()


def switch_to(page, name: str, picker: str = "Library") -> None:
    """The header's library menu, named in the page's language."""
    menu = page.get_by_role("combobox", name=picker)
    option = menu.locator("option", has_text=name)
    expect(option).to_have_count(1)
    menu.select_option(option.get_attribute("value"))
    expect(page.get_by_role("combobox", name=picker)).to_have_value(option.get_attribute("value"))


def open_sources(page) -> None:
    page.get_by_role("link", name="Sources").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Sources")


def test_an_owner_adds_tests_syncs_pauses_and_removes_sources(
    rest, chromium, gated_site, served_handbook
):
    owner = rest.new_user()
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, owner.username, owner.password)
        open_sources(page)
        expect(page.get_by_text("No sources yet.")).to_be_visible()
        form = page.get_by_role("form", name="Add a source")
        form.get_by_label("Name", exact=True).fill("handbook")
        form.get_by_label("Start URL or sitemap").fill(gated_site.url + "/")
        # the kind's fields come from its row: Git's replace the website's, the URL stays
        form.get_by_label("Kind").select_option("git")
        expect(form.get_by_label("Branch")).to_be_visible()
        expect(form.get_by_label("Pages per sync at most")).to_have_count(0)
        expect(form.get_by_label("Repository URL")).to_have_value(gated_site.url + "/")
        form.get_by_label("Kind").select_option("web")
        gated_site.requests()
        form.get_by_role("button", name="Test connection").click()
        expect(form.get_by_role("status")).to_contain_text("Connected: answered 200")
        assert gated_site.requests() == [("/", 200)]  # one request; nothing added
        form.get_by_role("button", name="Add source").click()
        card = page.get_by_role("region", name="handbook")
        expect(card.get_by_text("Not synced yet.")).to_be_visible()
        expect(card.get_by_text("Website")).to_be_visible()

        card.get_by_role("button", name="Sync now").click()
        expect(card.get_by_role("progressbar")).to_be_visible()  # /slow.html holds the sync
        expect(card.get_by_role("status")).to_contain_text("Syncing handbook…")
        expect(card.get_by_role("button", name="Sync now")).to_be_disabled()
        t.shoot("48-sources-syncing")
        gated_site.gate.set()
        expect(card.locator(".last-sync")).to_contain_text(
            "3 added · 0 changed · 0 deleted · 1 error"
        )
        expect(card.get_by_role("progressbar")).to_have_count(0)
        card.get_by_text("Files with errors (1)").click()
        expect(card.locator(".sync-errors li")).to_contain_text("handbook/127.0.0.1/empty.txt")
        assert rest.services.ingest.wait_for_queue(timeout=60)
        # the library's files say which source each came from, and link to its page
        page.get_by_role("link", name="← Back to the library’s files").click()
        row = page.get_by_role("row").filter(has=page.get_by_role("link", name="leave.md"))
        expect(row.get_by_role("link", name="⇄ handbook")).to_be_visible()
        t.shoot("48-library-source-tags")
        row.get_by_role("link", name="leave.md").click()  # the file's own page says it too
        expect(page.get_by_role("heading", level=1)).to_have_text("leave.md")
        page.get_by_role("link", name="⇄ handbook").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Sources")

        card.get_by_role("button", name="Pause").click()
        expect(card.get_by_text("paused", exact=True)).to_be_visible()
        expect(card.get_by_role("button", name="Sync now")).to_be_disabled()
        card.get_by_role("button", name="Resume").click()
        expect(card.get_by_role("button", name="Sync now")).to_be_enabled()

        form.get_by_label("Kind").select_option("git")
        form.get_by_label("Name", exact=True).fill("repo")
        form.get_by_label("Repository URL").fill(served_handbook.url)
        form.get_by_role("button", name="Test connection").click()
        expect(form.get_by_role("status")).to_contain_text("branch main is at")
        form.get_by_label("Branch").fill("nope")
        form.get_by_role("button", name="Test connection").click()
        expect(form.get_by_role("status")).to_contain_text("Not connected:")
        expect(form.get_by_role("status")).to_contain_text("branches: main")
        form.get_by_label("Branch").fill("main")
        form.get_by_role("button", name="Add source").click()
        repo_card = page.get_by_role("region", name="repo")
        expect(repo_card.get_by_text("Git repository")).to_be_visible()
        repo_card.get_by_role("button", name="Sync now").click()
        expect(repo_card.locator(".last-sync")).to_contain_text("1 added")
        assert rest.services.ingest.wait_for_queue(timeout=60)
        t.shoot("48-sources")

        # remove the repository keeping its document, the website with its documents
        repo_card.get_by_role("button", name="Remove").click()
        dialog = page.get_by_role("dialog", name="Remove the source repo?")
        dialog.get_by_label("Keep them").check()
        t.shoot("48-sources-remove", dark=True)
        dialog.get_by_role("button", name="Remove").click()
        expect(page.get_by_role("region", name="repo")).to_have_count(0)
        card.get_by_role("button", name="Remove").click()
        page.get_by_role("dialog").get_by_role("button", name="Remove").click()
        expect(page.get_by_text("No sources yet.")).to_be_visible()
        names = [f["originalName"] for f in owner.client.get("/knowledge-bases").json()]
        assert names == ["remote.md"]  # the kept one; the website's went with it
        page.get_by_role("link", name="← Back to the library’s files").click()
        row = page.get_by_role("row").filter(has=page.get_by_role("link", name="remote.md"))
        expect(row.get_by_role("link", name="⇄ a removed source")).to_be_visible()
        assert t.unexpected_errors() == []


def test_a_viewer_sees_the_sources_and_nothing_to_press_also_in_japanese(rest, chromium):
    owner, viewer = rest.new_user(), rest.new_user()
    library = owner.client.post("/libraries", json={"name": "Team Wiki"}).json()["id"]
    owner.client.put(
        f"/libraries/{library}/members", json={"username": viewer.username, "role": "viewer"}
    )
    made = owner.client.post(
        "/sources",
        json={"kind": "web", "name": "wiki", "url": "http://127.0.0.1:9/"},
        headers={"X-Bunko-Library": library},
    )
    assert made.status_code == 201, made.text
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        enter(page, viewer.username, viewer.password)
        switch_to(page, "Team Wiki")
        open_sources(page)
        card = page.get_by_role("region", name="wiki")
        expect(card.get_by_text("Not synced yet.")).to_be_visible()
        expect(page.get_by_text("Only the owners of Team Wiki add, sync")).to_be_visible()
        expect(page.get_by_role("button")).to_have_count(1)  # the header's Sign out only
        expect(page.get_by_role("form", name="Add a source")).to_have_count(0)
        t.shoot("48-sources-viewer")
        assert t.unexpected_errors() == []
    with tab(chromium, rest.url + "/", locale="ja-JP") as t:
        page = t.page
        page.get_by_label("ユーザー名").fill(owner.username)
        page.get_by_label("パスワード").fill(owner.password)
        page.get_by_role("button", name="サインイン").click()
        switch_to(page, "Team Wiki", picker="ライブラリ")
        page.get_by_role("link", name="ソース").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("ソース")
        card = page.get_by_role("region", name="wiki")
        expect(card.get_by_role("button", name="今すぐ同期")).to_be_visible()
        expect(card.get_by_text("まだ同期していません。")).to_be_visible()
        expect(page.get_by_role("button", name="接続をテスト")).to_be_visible()
        t.shoot("48-sources-ja")
        assert t.unexpected_errors() == []


@pytest.fixture
def confluence():
    site = FakeConfluence("cloud", credential=FIRST_KEY)
    site.page("101", "Home", "<p>Welcome to the engineering space.</p>")
    site.page("102", "Runbook", "<p>Deploy on Tuesdays.</p>", parent="101")
    site.attach("102", "att201", "checklist.txt", b"Check the canary first.\n", "text/plain")
    yield site
    site.close()


def toast_gone(page) -> None:
    """No toast over the card (it fades out in 0.2 s), for a clean screenshot."""
    expect(page.locator("#toast")).to_have_css("opacity", "0")


def keep_answers(page) -> list[tuple[str, bytes]]:
    """Every answer the page receives from here on (but the page itself), as it arrived."""
    answers: list[tuple[str, bytes]] = []

    def keep(route) -> None:
        if route.request.resource_type == "document":
            route.fallback()  # the strict-CSP route serves it
            return
        response = route.fetch()
        answers.append((route.request.url, response.body()))
        route.fulfill(response=response)

    page.route("**/*", keep)
    return answers


def test_an_owner_adds_a_confluence_space_with_a_credential_it_never_sees_again(
    rest, chromium, confluence
):
    owner = rest.new_user()
    secrets = [
        FIRST_KEY,
        NEW_KEY,
        *(base64.b64encode(k.encode()).decode() for k in (FIRST_KEY, NEW_KEY)),
    ]
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        answers = keep_answers(page)
        sent: list[tuple[str, str]] = []
        page.on("request", lambda r: sent.append((r.url, r.post_data or "")))
        enter(page, owner.username, owner.password)
        open_sources(page)
        form = page.get_by_role("form", name="Add a source")
        form.get_by_label("Kind").select_option("sharepoint")
        expect(form.get_by_label("Drive id")).to_be_visible()
        expect(form.get_by_label("API root")).to_have_attribute("placeholder", GRAPH)
        form.get_by_label("Kind").select_option("confluence")
        expect(form.get_by_label("Take the pages’ attachments too")).to_be_checked()
        expect(form.get_by_label("Credential (write-only)")).to_have_attribute("type", "password")
        form.get_by_label("Name", exact=True).fill("wiki")
        form.get_by_label("Confluence site").fill(confluence.url)
        form.get_by_label("Space key").fill("ENG")
        form.get_by_label("Edition").select_option("cloud")  # a loopback host reads as Data Center
        form.get_by_label("Credential (write-only)").fill(FIRST_KEY)
        form.get_by_role("button", name="Test connection").click()
        expect(form.get_by_role("status")).to_contain_text("space ENG")  # the space, with the key
        t.shoot("48-sources-confluence-form")
        form.get_by_role("button", name="Add source").click()
        card = page.get_by_role("region", name="wiki")
        expect(card.get_by_text("Confluence space")).to_be_visible()
        expect(card.get_by_text("credential kept")).to_be_visible()
        expect(card.locator("dd", has_text="ENG")).to_be_visible()
        expect(card.locator("dd", has_text="Cloud")).to_be_visible()
        expect(form.get_by_label("Kind")).to_have_value("web")  # the form starts afresh
        key = "Basic " + base64.b64encode(FIRST_KEY.encode()).decode()
        assert confluence.requests() == [("/wiki/api/v2/spaces?keys=ENG", 200, key)]  # the test

        card.get_by_role("button", name="Sync now").click()
        expect(card.locator(".last-sync")).to_contain_text("3 added · 0 changed · 0 deleted")
        assert rest.services.ingest.wait_for_queue(timeout=60)
        sent_auth = {auth for _, _, auth in confluence.requests()}
        assert sent_auth == {"Basic " + base64.b64encode(FIRST_KEY.encode()).decode()}
        names = sorted(f["originalName"] for f in owner.client.get("/knowledge-bases").json())
        assert names == ["Home.md", "Runbook.md", "checklist.txt"]

        # the token expires: the sync fails and deletes nothing; the owner replaces it
        confluence.credential = NEW_KEY
        confluence.edit("101", body="<p>Welcome to the platform space.</p>")
        card.get_by_role("button", name="Sync now").click()
        expect(card.locator(".last-sync")).to_contain_text("failed: credential rejected/expired")
        card.get_by_role("button", name="Replace credential").click()
        dialog = page.get_by_role("dialog", name="Credential of wiki")
        expect(dialog.get_by_label("New credential")).to_have_value("")  # the kept one is not shown
        dialog.get_by_label("New credential").fill(NEW_KEY)
        toast_gone(page)
        t.shoot("48-sources-credential")
        dialog.get_by_role("button", name="Save credential").click()
        expect(page.get_by_text("Credential of wiki saved.")).to_be_visible()
        expect(page.get_by_role("dialog")).to_have_count(0)
        card.get_by_role("button", name="Sync now").click()
        expect(card.locator(".last-sync")).to_contain_text("0 added · 1 changed · 0 deleted")
        assert rest.services.ingest.wait_for_queue(timeout=60)
        assert (
            confluence.requests()[-1][2] == "Basic " + base64.b64encode(NEW_KEY.encode()).decode()
        )
        expect(card.get_by_text("credential kept")).to_be_visible()
        toast_gone(page)
        t.shoot("48-sources-confluence")

        # the page sent each credential where it is used (testing, adding, replacing), and
        # nothing it received holds one: not the list, not the answers to testing, adding,
        # replacing or syncing
        carried = [urlsplit(url).path for url, data in sent if any(k in data for k in secrets)]
        assert carried == ["/sources/test", "/sources", "/sources/wiki/credential"], carried
        listed = [
            json.loads(b)
            for url, b in answers
            if urlsplit(url).path == "/sources" and b[:1] == b"["
        ]
        assert listed and listed[-1][0]["hasCredential"] is True  # the check saw the list
        leaked = [url for url, body in answers if any(k.encode() in body for k in secrets)]
        assert leaked == []
        assert not any(k in page.content() for k in secrets)
        assert t.unexpected_errors() == []

    with tab(chromium, rest.url + "/", locale="ja-JP") as t:
        page = t.page
        page.get_by_label("ユーザー名").fill(owner.username)
        page.get_by_label("パスワード").fill(owner.password)
        page.get_by_role("button", name="サインイン").click()
        page.get_by_role("link", name="ソース").click()
        card = page.get_by_role("region", name="wiki")
        expect(card.get_by_text("認証情報あり")).to_be_visible()
        expect(card.get_by_role("button", name="認証情報を置き換え")).to_be_visible()
        form = page.get_by_role("form", name="ソースを追加")
        form.get_by_label("種類").select_option("gdrive")
        expect(form.get_by_label("フォルダー ID")).to_be_visible()
        form.get_by_label("種類").select_option("confluence")
        expect(form.get_by_label("スペースキー")).to_be_visible()
        t.shoot("48-sources-confluence-ja")
        assert t.unexpected_errors() == []
