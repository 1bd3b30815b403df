"""/sources over a live server (REST): an owner adds a website, syncs it, lists it and removes
it; a viewer sees the library's sources but may not sync them; a path on the server is
refused."""

from __future__ import annotations

import pytest

from tests.e2e.local_site import LocalSite
from tests.e2e.rest_harness import serve, wait_until_done


@pytest.fixture(scope="module")
def open_rest(tmp_path_factory):
    """A server whose operator lets sources reach private addresses (the local site)."""
    with serve(tmp_path_factory.mktemp("sources") / "data", allow_private_sources=True) as rest:
        yield rest


def test_a_private_address_is_refused_to_a_person_by_default(rest):
    owner = rest.new_user()
    made = owner.client.post(
        "/sources", json={"kind": "web", "name": "w", "url": "http://127.0.0.1:9/"}
    )
    assert made.status_code == 400 and "inside the network" in made.text


def test_an_owner_adds_syncs_lists_and_removes_a_website(open_rest):
    rest = open_rest
    site = LocalSite()
    try:
        site.html("/", "<main><p>Welcome. <a href='/a.html'>a</a></p></main>", title="Home")
        site.html("/a.html", "<main><p>Otters hold hands while they sleep.</p></main>", title="A")
        owner = rest.new_user()
        client = owner.client
        added = client.post("/sources", json={"kind": "web", "name": "site", "url": site.url + "/"})
        assert added.status_code == 201, added.text
        assert added.json()["source"].startswith("connector:")
        synced = client.post("/sources/site/sync")
        assert synced.status_code == 200, synced.text
        assert sorted(synced.json()["added"]) == ["site/127.0.0.1/a.md", "site/127.0.0.1/index.md"]
        files = {f["originalName"]: f for f in client.get("/knowledge-bases").json()}
        assert files["a.md"]["source"] == added.json()["source"]
        wait_until_done(client, files["a.md"]["id"])
        again = client.post("/sources/site/sync").json()
        assert again["notModified"] == 2 and again["fetched"] == 0
        listed = client.get("/sources").json()
        assert [(s["name"], s["lastSync"]["unchanged"]) for s in listed] == [("site", 2)]
        assert (
            client.post("/sources", json={"kind": "git", "name": "g", "url": "/etc"}).status_code
            == 400
        )
        assert client.post("/sources/nothing/sync").status_code == 404
        removed = client.delete("/sources/site")
        assert removed.json() == {"name": "site", "deletedDocuments": 2}
        assert client.get("/knowledge-bases").json() == []
    finally:
        site.close()


def test_a_viewer_sees_a_shared_librarys_sources_but_may_not_sync_them(open_rest):
    rest = open_rest
    owner, viewer = rest.new_user(), rest.new_user()
    library = owner.client.post("/libraries", json={"name": "Shared sources"}).json()["id"]
    owner.client.put(
        f"/libraries/{library}/members", json={"username": viewer.username, "role": "viewer"}
    )
    for person in (owner, viewer):
        person.client.headers["X-Bunko-Library"] = library
    made = owner.client.post(
        "/sources", json={"kind": "web", "name": "w", "url": "http://127.0.0.1:9/"}
    )
    assert made.status_code == 201, made.text
    assert [s["name"] for s in viewer.client.get("/sources").json()] == ["w"]
    assert viewer.client.post("/sources/w/sync").status_code == 403
    assert viewer.client.delete("/sources/w").status_code == 403
    assert (
        viewer.client.post(
            "/sources", json={"kind": "web", "name": "v", "url": "http://127.0.0.1:9/"}
        ).status_code
        == 403
    )


def test_a_deleted_librarys_sources_go_with_it(open_rest):
    rest = open_rest
    owner = rest.new_user()
    library = owner.client.post("/libraries", json={"name": "Team docs"}).json()["id"]
    added = owner.client.post(
        "/sources",
        json={"kind": "web", "name": "site", "url": "http://127.0.0.1:9/"},
        headers={"X-Bunko-Library": library},
    )
    assert added.status_code == 201, added.text
    assert [s.name for s in rest.services.sources.list(library)] == ["site"]
    assert owner.client.delete(f"/libraries/{library}").status_code == 200
    # nothing of it is left to sync, list or carry a state: the library is gone
    assert rest.services.sources.list(library) == []


def test_an_owner_adds_a_sharepoint_and_a_gdrive_source(open_rest):
    """Over REST: the kinds' settings by their REST names, the credential write-only."""
    from tests.e2e.fake_gdrive import FakeGDrive
    from tests.e2e.fake_graph import FakeGraph

    graph, gd = FakeGraph(), FakeGDrive()
    try:
        graph.put("otters.md", b"Otters hold hands while they sleep.\n")
        team = gd.folder("Team")
        gd.add("plan.md", "text/markdown", team, b"The plan: ship it.\n")
        client = open_rest.new_user().client
        sp = client.post(
            "/sources",
            json={"kind": "sharepoint", "name": "sp", "url": graph.url,
                  "driveId": graph.drive_id, "credential": graph.token},
        )  # fmt: skip
        assert sp.status_code == 201, sp.text
        assert sp.json()["hasCredential"] and graph.token not in sp.text
        assert sp.json()["settings"]["drive_id"] == graph.drive_id
        made = client.post(
            "/sources",
            json={"kind": "gdrive", "name": "gd", "url": gd.url, "folderId": team,
                  "export": "docx", "credential": gd.token},
        )  # fmt: skip
        assert made.status_code == 201, made.text
        assert client.post("/sources/sp/sync").json()["added"] == ["sp/otters.md"]
        assert client.post("/sources/gd/sync").json()["added"] == ["gd/plan.md"]
        no_drive = client.post("/sources", json={"kind": "sharepoint", "name": "x"})
        assert no_drive.status_code == 400 and "drive_id" in no_drive.text
        assert gd.token not in client.get("/sources").text
    finally:
        graph.close()
        gd.close()


def test_a_url_with_a_credential_in_its_query_is_refused(open_rest):
    """A source's URL is shown to every member of its library: a token in its query would
    be too, so it is refused (as user:password in a URL is), naming the parameter, never
    echoing the value; a URL whose query holds none is taken."""
    client = open_rest.new_user().client
    secret = "glpat-s3cr3tVALUE"
    for url in (
        f"https://example.com/docs/?access_token={secret}",
        f"https://example.com/feed?page=2&private_token={secret}",
        f"https://bucket.s3.amazonaws.com/site/index.html?X-Amz-Signature={secret}",
        f"https://example.com/?sig={secret}",
    ):
        refused = client.post("/sources", json={"kind": "web", "name": "w", "url": url})
        assert refused.status_code == 400, refused.text
        assert "looks like a credential" in refused.text and secret not in refused.text
    sitemap = f"https://example.com/sitemap.xml?apikey={secret}"
    refused = client.post(
        "/sources",
        json={"kind": "web", "name": "w", "url": "https://example.com/", "sitemap": sitemap},
    )
    assert refused.status_code == 400 and secret not in refused.text
    assert client.get("/sources").json() == []
    site = LocalSite()  # a query without a credential is taken (this check names no DNS)
    try:
        url = f"{site.url}/?page=2&author=ann"
        taken = client.post("/sources", json={"kind": "web", "name": "w", "url": url})
        assert taken.status_code == 201, taken.text
    finally:
        site.close()
