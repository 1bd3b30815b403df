"""The website source (issue 48): a real site on a local socket, synced into a real embedded
library; pages added, changed and removed between syncs, a re-sync with nothing changed
answered 304 throughout, robots.txt honoured, a hand upload in the same library untouched,
and the outbound guard on every URL."""

from __future__ import annotations

import pytest

from bunko.domain.sources import UPLOAD
from bunko.errors import ValidationError
from bunko.services.ingest import Upload
from tests.conftest import library_texts, make_services
from tests.e2e.local_site import LocalSite

NAV = "<nav>SITE-NAVIGATION <a href='/a.html'>A</a></nav>"


@pytest.fixture
def site():
    s = LocalSite()
    s.pages["/robots.txt"] = ("text/plain", b"User-agent: *\nDisallow: /private/\n")
    s.html(
        "/",
        NAV + "<main><h1>Home</h1><p>Welcome to the handbook.</p>"
        "<a href='/a.html'>a</a> <a href='b.html#part'>b</a> <a href='/docs/'>docs</a>"
        "<a href='/private/secret.html'>secret</a>"
        "<a href='http://localhost:1/elsewhere.html'>elsewhere</a></main>",
        title="Home",
    )
    s.html("/a.html", NAV + "<main><p>Alpha page about anchors.</p></main>", title="Alpha")
    s.html("/b.html", "<article><p>Beta page about boats.</p></article>", title="Beta")
    s.html("/docs/", "<main><p>Docs index.</p><a href='c.html'>c</a></main>", title="Docs")
    s.html("/docs/c.html", "<main><p>Gamma page about cats.</p></main>", title="Gamma")
    s.modified["/docs/c.html"] = 1_700_000_000.0  # this one answers by Last-Modified
    s.html("/private/secret.html", "<p>Private.</p>")
    yield s
    s.close()


def test_a_site_syncs_adds_changes_and_removes_and_a_resync_asks_only(services, site):
    ws = "default"
    hand = services.ingest.submit(
        Upload(ws, b"Typed by hand.", path="handbook/hand.txt", source=UPLOAD)
    )
    services.sources.add(ws, "web", "handbook", {"url": site.url + "/"}, operator=True)

    first = services.sources.sync(ws, "handbook")
    host = "127.0.0.1"
    pages = {
        f"handbook/{host}/{p}" for p in ("index.md", "a.md", "b.md", "docs/index.md", "docs/c.md")
    }
    assert set(first.added) == pages and not first.deleted and not first.errors, first
    asked = site.requests()
    assert not [p for p, _ in asked if p.startswith("/private/")]  # robots.txt honoured
    texts = library_texts(services, ws)
    assert "Welcome to the handbook." in texts[f"handbook/{host}/index.md"]
    assert "SITE-NAVIGATION" not in texts[f"handbook/{host}/a.md"]  # main text only
    assert "Beta page about boats." in texts[f"handbook/{host}/b.md"]
    assert "url:" not in texts[f"handbook/{host}/b.md"]  # the URL is metadata, not text
    beta = services.library.at(ws, f"handbook/{host}/b.md")
    assert beta.metadata == {"url": site.url + "/b.html"}

    again = services.sources.sync(ws, "handbook")
    asked = site.requests()
    assert (again.added, again.changed, again.deleted, again.fetched) == ([], [], [], 0)
    assert sorted(s for p, s in asked if p != "/robots.txt") == [304] * 5
    assert again.not_modified == 5 and again.requests == 6  # robots.txt and five 304s

    del site.pages["/a.html"]
    site.html("/b.html", "<article><p>Beta page about bridges now.</p></article>", title="Beta")
    site.html("/docs/c.html", "<main><p>Gamma. <a href='new.html'>new</a></p></main>", title="G")
    site.modified["/docs/c.html"] = 1_800_000_000.0
    site.html("/docs/new.html", "<main><p>A new page about newts.</p></main>", title="New")
    third = services.sources.sync(ws, "handbook")
    assert third.deleted == [f"handbook/{host}/a.md"]
    assert sorted(third.changed) == [f"handbook/{host}/b.md", f"handbook/{host}/docs/c.md"]
    assert third.added == [f"handbook/{host}/docs/new.md"]
    assert third.fetched == 3  # b, c and new: the rest answered 304
    texts = library_texts(services, ws)
    assert "bridges" in texts[f"handbook/{host}/b.md"]
    assert texts["handbook/hand.txt"] == "Typed by hand."  # another source's: never touched
    assert services.library.find(ws, hand.id) is not None

    listed = services.sources.list(ws)
    assert [(r.name, r.last_sync["added"], r.last_sync["deleted"]) for r in listed] == [
        ("handbook", 1, 1)
    ]
    assert services.sources.remove(ws, "handbook") == 5
    assert [d.path for d in services.library.documents(ws)] == ["handbook/hand.txt"]


def test_robots_txt_as_rfc_9309_reads_it(services, site):
    """BunkoBot's own group is the one that applies (not `*`'s); a robots.txt answered 5xx
    means nothing may be fetched (the sync fails, nothing deleted); one answered 4xx means
    no rules."""
    ws = "default"
    site.pages["/robots.txt"] = (
        "text/plain",
        b"User-agent: BunkoBot\nDisallow: /a.html\n\nUser-agent: *\nDisallow: /\n",
    )
    services.sources.add(ws, "web", "h", {"url": site.url + "/"}, operator=True)
    first = services.sources.sync(ws, "h")
    asked = {p for p, _ in site.requests()}
    assert "/a.html" not in asked and "/private/secret.html" in asked, asked
    assert first.failed is None and "h/127.0.0.1/private/secret.md" in first.added, first
    assert "h/127.0.0.1/a.md" not in first.added

    site.status["/robots.txt"] = 503
    failed = services.sources.sync(ws, "h")
    assert failed.failed == "robots.txt answered 503" and failed.deleted == [], failed
    assert [p for p, _ in site.requests()] == ["/robots.txt"]  # nothing else fetched

    site.status["/robots.txt"] = 404
    free = services.sources.sync(ws, "h")
    assert free.failed is None and free.added == ["h/127.0.0.1/a.md"], free


def test_a_page_answered_410_goes_and_one_answered_503_keeps_its_document(services, site):
    ws = "default"
    services.sources.add(ws, "web", "h", {"url": site.url + "/"}, operator=True)
    assert len(services.sources.sync(ws, "h").added) == 5
    site.status["/b.html"] = 410
    site.status["/docs/c.html"] = 503
    report = services.sources.sync(ws, "h")
    assert report.failed is None and report.deleted == ["h/127.0.0.1/b.md"], report
    assert list(report.errors) == ["h/127.0.0.1/docs/c.md"] and "503" in str(report.errors)
    assert services.library.at(ws, "h/127.0.0.1/docs/c.md") is not None  # kept as it was


def test_one_bad_page_is_recorded_and_keeps_its_document(services, site):
    ws = "default"
    services.sources.add(
        ws, "web", "h", {"url": site.url + "/", "max_page_bytes": 4096}, operator=True
    )
    services.sources.sync(ws, "h")
    site.html("/b.html", "<main><p>" + "big " * 4000 + "</p></main>", title="Beta")
    report = services.sources.sync(ws, "h")
    assert (
        list(report.errors) == ["h/127.0.0.1/b.md"]
        and "4,096 bytes" in report.errors["h/127.0.0.1/b.md"]
    )
    assert report.deleted == []  # the page that failed keeps its document
    assert services.library.at(ws, "h/127.0.0.1/b.md") is not None


def test_a_sitemap_names_the_pages_and_max_pages_bounds_them(services, site):
    ws = "default"
    locs = "".join(
        f"<url><loc>{site.url}{p}</loc></url>" for p in ("/a.html", "/b.html", "/docs/c.html")
    )
    site.pages["/sitemap.xml"] = (
        "application/xml",
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'.encode(),
    )
    services.sources.add(
        ws, "web", "m", {"url": site.url + "/sitemap.xml", "max_pages": 2}, operator=True
    )
    report = services.sources.sync(ws, "m")
    assert sorted(report.added) == ["m/127.0.0.1/a.md", "m/127.0.0.1/b.md"]
    assert report.stopped_by == "max_pages"


def test_a_sitemap_index_is_read_and_a_page_it_drops_is_deleted(services, site):
    ws = "default"

    def urlset(paths):
        locs = "".join(f"<url><loc>{site.url}{p}</loc></url>" for p in paths)
        xmlns = "http://www.sitemaps.org/schemas/sitemap/0.9"
        return ("application/xml", f'<urlset xmlns="{xmlns}">{locs}</urlset>'.encode())

    site.pages["/maps/index.xml"] = (
        "application/xml",
        f"<sitemapindex><sitemap><loc>{site.url}/maps/pages.xml</loc></sitemap>"
        "</sitemapindex>".encode(),
    )
    site.pages["/maps/pages.xml"] = urlset(["/a.html", "/docs/c.html"])
    services.sources.add(ws, "web", "m", {"url": site.url + "/maps/index.xml"}, operator=True)
    first = services.sources.sync(ws, "m")
    assert sorted(first.added) == ["m/127.0.0.1/a.md", "m/127.0.0.1/docs/c.md"]  # no links
    site.pages["/maps/pages.xml"] = urlset(["/a.html"])
    second = services.sources.sync(ws, "m")
    assert second.deleted == ["m/127.0.0.1/docs/c.md"] and second.fetched == 0


def test_the_outbound_guard_checks_every_source_url(tmp_path, site):
    closed = make_services(tmp_path / "data", embedder="none", allow_private_sources=False)
    try:
        with pytest.raises(ValidationError, match="inside the network"):
            closed.sources.add("default", "web", "w", {"url": site.url + "/"}, operator=True)
        with pytest.raises(ValidationError, match="inside the network"):
            closed.sources.add("default", "git", "g", {"url": site.url + "/repo.git"})
    finally:
        closed.close()


def test_instance_metadata_is_refused_even_where_private_addresses_are_allowed(services):
    with pytest.raises(ValidationError, match=r"169\.254\.169\.254"):
        services.sources.add(
            "default", "web", "meta", {"url": "http://169.254.169.254/latest/"}, operator=True
        )


def test_a_redirect_inside_the_network_is_refused_when_private_addresses_are_not(tmp_path, site):
    """The guard runs before every request, not only when the source is added."""
    from bunko.adapters.web_fetcher import HttpWebFetcher
    from bunko.services.embedding import check_outbound_url

    fetcher = HttpWebFetcher(
        lambda url, private: check_outbound_url(url, what="source", allow_private=private)
    )
    with pytest.raises(ValidationError, match="inside the network"):
        fetcher.get(site.url + "/", {}, max_bytes=1000, allow_private=False)
    assert site.requests() == []


def test_a_person_over_the_network_may_not_reach_private_addresses_by_default(services, site):
    """Unset, only the operator's sources may read loopback and private addresses: a source
    a person adds over REST would read the server's own network into their library."""
    with pytest.raises(ValidationError, match="inside the network"):
        services.sources.add("default", "web", "w", {"url": site.url + "/"})
    made = services.sources.add("default", "web", "w", {"url": site.url + "/"}, operator=True)
    assert made.private and services.sources.sync("default", "w").added


def test_links_redirects_noindex_other_types_and_a_moved_page(services, site):
    """What the crawl follows and keeps: a same-site redirect is followed, one off the site is
    not a page; `rel=nofollow` and a `noindex` page's text are not kept (its links are
    followed); a plain-text file is kept as it is; a page moved to a new URL keeps its
    document (its bytes tell the rename)."""
    ws = "default"

    def redirect(path: str, to: str) -> None:
        site.pages[path] = ("redirect", to.encode())

    answer = site.answer

    def answer_with_redirects(path, headers):
        kind, body = site.pages.get(path, ("", b""))
        if kind == "redirect":
            return 301, {"Location": body.decode()}, b""
        return answer(path, headers)

    site.answer = answer_with_redirects
    site.html(
        "/",
        "<main><p>Home.</p><a href='/old'>moved</a> <a href='/away'>away</a>"
        "<a href='/hidden.html' rel='nofollow'>hidden</a> <a href='/index-me-not.html'>n</a>"
        "<a href='/notes.txt'>notes</a> <a href='/a.html'>a</a></main>",
        title="Home",
    )
    redirect("/old", "/new.html")
    redirect("/away", "http://localhost:1/elsewhere.html")
    site.html("/new.html", "<main><p>Where the redirect lands.</p></main>", title="New")
    site.html("/hidden.html", "<main><p>Hidden.</p></main>")
    site.pages["/index-me-not.html"] = (
        "text/html",
        b"<html><head><meta name='robots' content='noindex'></head><body><main><p>Not kept."
        b"</p><a href='/docs/c.html'>c</a></main></body></html>",
    )
    site.pages["/notes.txt"] = ("text/plain", b"Plain notes about newts.")
    services.sources.add(ws, "web", "w", {"url": site.url + "/"}, operator=True)
    first = services.sources.sync(ws, "w")
    host = "w/127.0.0.1"
    assert sorted(first.added) == sorted(
        f"{host}/{p}" for p in ("index.md", "new.md", "notes.txt", "a.md", "docs/c.md")
    ), first
    asked = {p for p, _ in site.requests()}
    assert "/hidden.html" not in asked and "/index-me-not.html" in asked
    assert services.ingest.wait_for_queue(timeout=60)  # a document still indexing is not renamed
    alpha = services.library.at(ws, f"{host}/a.md")

    # /a.html moves to /b-new.html with the same text: its document follows it
    site.pages["/b-new.html"] = site.pages.pop("/a.html")
    site.html(
        "/",
        "<main><p>Home.</p><a href='/old'>moved</a> <a href='/index-me-not.html'>n</a>"
        "<a href='/notes.txt'>notes</a> <a href='/b-new.html'>a, moved</a></main>",
        title="Home",
    )
    second = services.sources.sync(ws, "w")
    assert second.renamed == [(f"{host}/a.md", f"{host}/b-new.md")] and second.deleted == []
    moved = services.library.at(ws, f"{host}/b-new.md")
    assert moved.id == alpha.id and moved.metadata == {"url": site.url + "/b-new.html"}
