"""The Confluence source (issue 48) against a fake Confluence on a local socket that answers
in the shapes of Atlassian's REST references (tests/e2e/fake_confluence.py says which page each
shape comes from), Cloud (REST v2) and Data Center (REST v1), synced into a real embedded
library: from empty, again with nothing changed (no body fetched), a page changed, deleted and
renamed (its document kept), throttling waited out, an expired credential (nothing deleted), a
hand upload surviving every sync, one bad page, the run's bounds, and the outbound guard."""

from __future__ import annotations

import base64

import pytest

from bunko.domain.sources import UPLOAD
from bunko.errors import ValidationError
from bunko.services.ingest import Upload
from tests.conftest import library_texts, make_services
from tests.e2e.fake_confluence import FakeConfluence

WS = "default"
CLOUD_KEY = "me@example.com:ATATT3xFAKE-cloud-token"
DC_KEY = "NjQ4MzE3OTk5ODg0OkFAKE-personal-access-token"
CODE = (
    '<ac:structured-macro ac:name="code"><ac:plain-text-body>'
    "<![CDATA[deploy --region <eu-west-1>]]></ac:plain-text-body></ac:structured-macro>"
)


@pytest.fixture(params=["cloud", "datacenter"])
def wiki(request):
    key = CLOUD_KEY if request.param == "cloud" else DC_KEY
    site = FakeConfluence(request.param, credential=key)
    site.key = key
    site.page("101", "Home", "<p>Welcome to the <strong>engineering</strong> space.</p>")
    site.page("102", "Runbook", f"<h2>Deploy</h2><p>Run this:</p>{CODE}", parent="101")
    site.page("103", "On-call / rota", "<p>Pagers rotate weekly.</p>", parent="101")
    site.page("104", "Glossary", "<table><tr><td>SLO</td><td>objective</td></tr></table>")
    site.page("105", "Retros", "<p>Blameless, always.</p>")
    site.attach("102", "att201", "checklist.txt", b"Check the canary first.\n", "text/plain")
    site.attach("102", "att202", "diagram.png", b"\x89PNG\r\n\x1a\n", "image/png")
    yield site
    site.close()


def _add(services, site, name="eng", **settings):
    return services.sources.add(
        WS, "confluence", name, {"url": site.url, "space": "ENG", "edition": site.edition, **settings},
        operator=True, credential=site.key,
    )  # fmt: skip


def _bodies(log) -> list[str]:
    """Requests that fetched a page's body or an attachment's bytes."""
    return [
        p
        for p, _, _ in log
        if "body-format=storage" in p or "body.storage" in p or "/download/" in p
    ]


PAGES = {f"eng/{t}.md" for t in ("Home", "Runbook", "On-call - rota", "Glossary", "Retros")}


def test_a_space_syncs_from_empty_and_a_resync_fetches_no_body(services, wiki):
    hand = services.ingest.submit(Upload(WS, b"Typed by hand.", path="eng/hand.txt", source=UPLOAD))
    _add(services, wiki)
    first = services.sources.sync(WS, "eng")
    assert first.failed is None, first
    assert set(first.added) == PAGES | {"eng/Runbook/checklist.txt"}, first
    assert not first.errors and first.fetched == 6
    log = wiki.requests()
    assert {auth for _, _, auth in log} == {_auth(wiki)}  # the credential on every request
    assert any("cursor=" in p or "start=2" in p for p, _, _ in log)  # listings were paged
    texts = library_texts(services, WS)
    assert texts["eng/Home.md"].startswith("# Home") and "engineering space" in texts["eng/Home.md"]
    assert "deploy --region <eu-west-1>" in texts["eng/Runbook.md"]  # a code macro's text
    assert "Check the canary first." in texts["eng/Runbook/checklist.txt"]
    home = services.library.at(WS, "eng/Home.md")
    web = {"cloud": "/spaces/ENG/pages/101/Home", "datacenter": "/display/ENG/Home"}
    assert home.metadata == {"url": wiki.url + web[wiki.edition]}  # the page in a browser

    again = services.sources.sync(WS, "eng")
    log = wiki.requests()
    assert (again.added, again.changed, again.deleted, again.fetched) == ([], [], [], 0), again
    assert _bodies(log) == [] and again.unchanged == 6
    assert services.library.find(WS, hand.id) is not None


def test_a_page_changed_deleted_and_renamed(services, wiki):
    hand = services.ingest.submit(Upload(WS, b"Typed by hand.", path="eng/hand.txt", source=UPLOAD))
    _add(services, wiki)
    services.sources.sync(WS, "eng")
    library_texts(services, WS)
    runbook = services.library.at(WS, "eng/Runbook.md")
    checklist = services.library.at(WS, "eng/Runbook/checklist.txt")
    wiki.requests()

    wiki.edit("101", body="<p>Welcome, now with a <em>new</em> roadmap.</p>")
    del wiki.pages["104"]
    wiki.edit("102", title="Deploy runbook")  # a rename: a new version too
    report = services.sources.sync(WS, "eng")
    assert report.failed is None and not report.errors, report
    # the renamed page is changed too: its heading is its new title
    assert sorted(report.changed) == ["eng/Deploy runbook.md", "eng/Home.md"]
    assert report.deleted == ["eng/Glossary.md"]
    assert sorted(report.renamed) == [
        ("eng/Runbook.md", "eng/Deploy runbook.md"),
        ("eng/Runbook/checklist.txt", "eng/Deploy runbook/checklist.txt"),
    ]
    assert report.fetched == 2  # Home's and the renamed page's bodies; the attachment not again
    assert len(_bodies(wiki.requests())) == 2
    texts = library_texts(services, WS)
    assert "new roadmap" in texts["eng/Home.md"]
    assert "eng/Glossary.md" not in texts
    moved = services.library.at(WS, "eng/Deploy runbook.md")
    assert moved.id == runbook.id and texts["eng/Deploy runbook.md"].startswith("# Deploy runbook")
    assert services.library.at(WS, "eng/Deploy runbook/checklist.txt").id == checklist.id
    assert texts["eng/hand.txt"] == "Typed by hand."  # another source's: never touched
    assert services.library.find(WS, hand.id) is not None

    wiki.attach(
        "102", "att201", "checklist.txt", b"Check the canary, then the logs.\n", "text/plain"
    )
    wiki.pages["102"].attachments.pop("att202")
    after = services.sources.sync(WS, "eng")
    assert after.changed == ["eng/Deploy runbook/checklist.txt"] and after.fetched == 1
    assert services.sources.remove(WS, "eng") == 5
    assert [d.path for d in services.library.documents(WS)] == ["eng/hand.txt"]


def test_cloud_listings_page_by_the_link_header_alone(services):
    """getPagesInSpace's reference puts the next page in the `Link` header; a body without
    `_links.next` still pages."""
    site = FakeConfluence("cloud", credential=CLOUD_KEY)
    site.key, site.next_in_body = CLOUD_KEY, False
    try:
        for n in range(5):
            site.page(str(300 + n), f"Note {n}", f"<p>Note number {n}.</p>")
        _add(services, site, attachments=False)
        report = services.sources.sync(WS, "eng")
        assert len(report.added) == 5 and report.requests == 1 + 3 + 5  # space, 3 listings, bodies
    finally:
        site.close()


def test_throttling_is_waited_out_as_retry_after_says(services, wiki):
    waits: list[float] = []
    services.sources.connectors.sleep = waits.append  # the injectable wait: the test does not sleep
    _add(services, wiki)
    wiki.throttle = [(429, "3"), (503, "1"), (429, None)]
    report = services.sources.sync(WS, "eng")
    assert report.failed is None and set(report.added) >= PAGES, report
    assert waits == [3.0, 1.0, 4.0]  # Retry-After, then 2**2 s without one
    assert report.throttled == 3 and services.sources.get(WS, "eng").last_sync["throttled"] == 3

    wiki.edit("105", body="<p>Changed.</p>")
    wiki.throttle = [(429, "86400")]  # a day: past the bound, not waited
    failed = services.sources.sync(WS, "eng")
    assert failed.failed and "86400" in failed.failed and failed.deleted == []
    assert waits == [3.0, 1.0, 4.0]
    assert services.library.at(WS, "eng/Retros.md") is not None


def test_an_expired_credential_fails_the_sync_and_deletes_nothing(services, wiki):
    _add(services, wiki)
    services.sources.sync(WS, "eng")
    library_texts(services, WS)
    before = sorted(d.path for d in services.library.documents(WS))
    wiki.credential = wiki.key + "-rotated"  # the one the source holds no longer works
    report = services.sources.sync(WS, "eng")
    assert report.failed and report.failed.startswith("credential rejected/expired"), report
    assert report.deleted == [] and report.added == []
    assert sorted(d.path for d in services.library.documents(WS)) == before
    last = services.sources.get(WS, "eng").last_sync
    assert last["failed"].startswith("credential rejected/expired")

    services.sources.set_credential(WS, "eng", wiki.credential)
    wiki.edit("101", body="<p>Back in step.</p>")
    fixed = services.sources.sync(WS, "eng")
    assert fixed.failed is None and fixed.changed == ["eng/Home.md"] and fixed.deleted == []


def test_a_bad_page_is_recorded_and_the_bounds_continue_next_sync(services, wiki):
    _add(services, wiki, max_pages=3)
    first = services.sources.sync(WS, "eng")
    assert first.stopped_by == "max_pages" and not first.complete and len(first.added) == 3
    second = services.sources.sync(WS, "eng")
    assert len(second.added) == 3 and second.deleted == [] and second.fetched == 3
    third = services.sources.sync(WS, "eng")
    assert third.complete and third.fetched == 0 and third.deleted == []
    assert len(services.library.documents(WS)) == 6

    wiki.edit("103", body="<p>Pagers rotate daily.</p>")
    wiki.edit("105", body="<p>Blameless, and short.</p>")
    wiki.broken.add("103")
    report = services.sources.sync(WS, "eng")
    assert (
        list(report.errors) == ["eng/On-call - rota.md"]
        and "500" in report.errors["eng/On-call - rota.md"]
    )
    assert report.changed == ["eng/Retros.md"] and report.deleted == []
    wiki.broken.clear()
    retried = services.sources.sync(WS, "eng")  # its old version was kept: asked again
    assert retried.changed == ["eng/On-call - rota.md"] and not retried.errors


def test_a_rename_a_bound_left_unread_keeps_its_page_and_files_where_they_were(services, wiki):
    _add(services, wiki)
    services.sources.sync(WS, "eng")
    assert services.ingest.wait_for_queue(timeout=60)  # a document still indexing is not renamed
    record = services.sources.get(WS, "eng")
    record.settings["max_pages"] = 1
    services.sources.store.put_settings("sources", f"{WS}/eng", record.to_dict())
    wiki.edit("101", body="<p>Read first.</p>")
    wiki.edit("102", title="Deploy runbook")
    first = services.sources.sync(WS, "eng")
    assert first.changed == ["eng/Home.md"] and first.stopped_by == "max_pages"
    assert first.renamed == [] and first.deleted == []  # the runbook and its file stay put
    second = services.sources.sync(WS, "eng")
    assert sorted(second.renamed) == [
        ("eng/Runbook.md", "eng/Deploy runbook.md"),
        ("eng/Runbook/checklist.txt", "eng/Deploy runbook/checklist.txt"),
    ]
    assert second.deleted == [] and second.fetched == 1


def test_a_credential_removed_during_a_sync_stays_removed(services, wiki):
    _add(services, wiki)
    asked = []

    def meanwhile(path: str) -> None:
        if not asked:
            asked.append(path)
            services.sources.set_credential(WS, "eng", None)

    wiki.on_request = meanwhile
    report = services.sources.sync(WS, "eng")  # it had read its credential already
    assert report.failed is None and asked
    record = services.sources.get(WS, "eng")
    assert record.has_credential is False and record.last_sync["added"] == 6


def test_no_link_off_the_site_is_followed_and_the_guard_holds(services, wiki):
    _add(services, wiki, attachments=True)
    # The site names a download elsewhere (instance metadata): not asked, the credential
    # not sent; the page's attachments are an error, the pages sync.
    elsewhere = "http://169.254.169.254/latest/meta-data/"
    if wiki.edition == "cloud":
        wiki._v2_attachment = lambda page, att: {
            "id": att.id, "title": att.title, "mediaType": att.media_type,
            "fileSize": len(att.data), "version": {"number": 1}, "downloadLink": elsewhere,
        }  # fmt: skip
    else:
        wiki._v1_attachment = lambda page, att: {
            "id": att.id, "title": att.title, "type": "attachment",
            "extensions": {"mediaType": att.media_type, "fileSize": len(att.data)},
            "version": {"number": 1}, "_links": {"download": elsewhere},
        }  # fmt: skip
    report = services.sources.sync(WS, "eng")
    assert "not on" in report.errors["eng/Runbook.md"] and set(report.added) == PAGES
    assert all(p.startswith(wiki.context) for p, _, _ in wiki.requests())

    with pytest.raises(ValidationError, match=r"inside the network|loopback|private"):
        services.sources.add(WS, "confluence", "p", {"url": wiki.url, "space": "ENG"})
    with pytest.raises(ValidationError):
        services.sources.add(
            WS, "confluence", "m", {"url": "http://169.254.169.254/wiki", "space": "ENG"},
            operator=True,
        )  # fmt: skip


def test_data_center_serves_a_wrong_token_as_anonymous_and_that_is_a_failure(services):
    """CONFSERVER-98199: a wrong personal access token passes as an anonymous visitor; the
    listing would be what anyone sees. The connector asks who it is first."""
    site = FakeConfluence("datacenter", credential=DC_KEY)
    site.key = DC_KEY
    try:
        site.page("101", "Home", "<p>Private notes.</p>")
        _add(services, site)
        assert services.sources.sync(WS, "eng").added == ["eng/Home.md"]
        site.credential = "a-new-token-the-source-lacks"
        report = services.sources.sync(WS, "eng")
        assert report.failed and "anonymous" in report.failed and report.deleted == []
        assert services.library.at(WS, "eng/Home.md") is not None
    finally:
        site.close()


def _auth(site: FakeConfluence) -> str:
    if site.edition == "cloud":
        return "Basic " + base64.b64encode(site.key.encode()).decode()
    return f"Bearer {site.key}"


# -- the doors ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wiki_rest(tmp_path_factory):
    """A server whose operator lets sources reach private addresses (the fake on loopback)."""
    from tests.e2e.rest_harness import serve

    with serve(tmp_path_factory.mktemp("wiki") / "data", allow_private_sources=True) as rest:
        yield rest


def test_over_rest_an_owner_adds_syncs_and_lists_a_confluence_space(wiki_rest):
    site = FakeConfluence("datacenter", credential=DC_KEY)
    try:
        site.page("101", "Home", "<p>Otters hold hands while they sleep.</p>")
        client = wiki_rest.new_user().client
        added = client.post(
            "/sources",
            json={"kind": "confluence", "name": "wiki", "url": site.url, "space": "ENG",
                  "edition": "datacenter", "credential": DC_KEY},
        )  # fmt: skip
        assert added.status_code == 201, added.text
        assert added.json()["hasCredential"] is True and DC_KEY not in added.text
        synced = client.post("/sources/wiki/sync").json()
        assert synced["added"] == ["wiki/Home.md"] and synced["failed"] is None, synced
        assert synced["throttled"] == 0
        assert {auth for _, _, auth in site.requests()} == {f"Bearer {DC_KEY}"}
        listed = client.get("/sources").json()
        assert listed[0]["settings"]["space"] == "ENG" and DC_KEY not in str(listed)
        site.credential = "rotated"
        failed = client.post("/sources/wiki/sync").json()
        assert failed["failed"].startswith("credential rejected/expired") and not failed["deleted"]
        assert client.get("/sources").json()[0]["lastSync"]["failed"] == failed["failed"]
        assert client.delete("/sources/wiki").json()["deletedDocuments"] == 1
    finally:
        site.close()


@pytest.mark.slow  # real `bunko` processes
def test_from_the_command_line_a_confluence_space(tmp_path):
    from tests.e2e.cli_harness import run

    site = FakeConfluence("cloud", credential=CLOUD_KEY)
    try:
        site.page("101", "Home", "<p>Walruses sunbathe on ice floes.</p>")
        data = tmp_path / "data"
        run(["source", "add", "confluence", "--name", "wiki", "--url", site.url,
             "--space", "ENG", "--edition", "cloud", "--credential-env", "WIKI_KEY"],
            data, env={"WIKI_KEY": CLOUD_KEY})  # fmt: skip
        out = run(["source", "sync", "wiki"], data).stdout
        assert "added wiki/Home.md" in out and "1 added" in out
        assert "wiki/Home.md" in run(["search", "walruses"], data).stdout
        site.credential = "me@example.com:rotated"
        failed = run(["source", "sync", "wiki"], data, check=False)
        assert failed.returncode == 1 and "credential rejected/expired" in failed.stderr
        assert "nothing deleted" in failed.stderr
    finally:
        site.close()


def test_a_space_the_credential_cannot_see_fails_the_sync(services, wiki):
    _add(services, wiki)
    services.sources.sync(WS, "eng")
    wiki.space = "OTHER"  # the space was renamed away, or the credential lost its view of it
    report = services.sources.sync(WS, "eng")
    assert report.failed and report.failed.startswith("listing the space"), report
    assert report.deleted == [] and len(services.library.documents(WS)) == 6


def test_a_space_that_lists_nothing_where_pages_were_deletes_nothing(services, wiki):
    """A credential that still sees the space but none of its pages lists it empty: the
    mirror would delete every page, so the sync fails instead."""
    _add(services, wiki)
    services.sources.sync(WS, "eng")
    wiki.pages.clear()
    report = services.sources.sync(WS, "eng")
    assert report.failed and "listed no pages where 5 were" in report.failed
    assert report.deleted == [] and len(services.library.documents(WS)) == 6


def test_titles_that_make_one_path_and_an_attachment_over_the_upload_limit(tmp_path, wiki):
    """Two titles that make the same path (a `/` reads `-`): the later page id's gets
    ` (ID)`. An attachment over the upload limit is an error on its path, not downloaded,
    and not asked for again until its version changes."""
    services = make_services(tmp_path / "data", embedder="none", max_file_bytes=1000)
    try:
        wiki.page("106", "On-call - rota", "<p>The other rota page.</p>")
        wiki.attach("105", "att203", "minutes.txt", b"Minutes.\n" * 200, "text/plain")
        _add(services, wiki)
        first = services.sources.sync(WS, "eng")
        assert first.failed is None, first
        assert (
            "eng/On-call - rota.md" in first.added and "eng/On-call - rota (106).md" in first.added
        )
        texts = library_texts(services, WS)
        assert "Pagers rotate weekly." in texts["eng/On-call - rota.md"]  # page 103's
        assert "The other rota page." in texts["eng/On-call - rota (106).md"]
        assert "the limit is 1,000 bytes" in first.errors["eng/Retros/minutes.txt"], first.errors
        assert not [p for p in _bodies(wiki.requests()) if "minutes.txt" in p]

        again = services.sources.sync(WS, "eng")  # its version unchanged: not asked again
        assert again.errors == {} and again.fetched == 0, again
        wiki.attach("105", "att203", "minutes.txt", b"Short minutes.\n", "text/plain")
        last = services.sources.sync(WS, "eng")
        assert last.added == ["eng/Retros/minutes.txt"] and last.fetched == 1, last
    finally:
        services.close()
