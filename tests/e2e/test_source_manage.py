"""Managing a library's sources over REST (issue 48, point 3): test the connection a source
would make (one request through the outbound guard, nothing added or synced), pause and
resume a source (a paused one does not sync), and a Git source over HTTP synced from a real
repository served_repo on a local socket."""

from __future__ import annotations

import threading

import pytest

from bunko.services.sources.probe import _branches
from tests.e2e.git_http import GitOverHttp
from tests.e2e.git_repo import Repo
from tests.e2e.local_site import LocalSite
from tests.e2e.rest_harness import serve

# The module's server lets the people on it add sources on loopback (the local sites).
REST_SETTINGS = {"allow_private_sources": True}


@pytest.fixture
def two_page_site():
    s = LocalSite()
    s.html("/", "<main><p>Welcome. <a href='/a.html'>a</a></p></main>", title="Home")
    s.html("/a.html", "<main><p>Otters hold hands while they sleep.</p></main>", title="A")
    yield s
    s.close()


@pytest.fixture
def served_repo(tmp_path):
    repo = Repo(tmp_path / "repo")
    repo.write("docs/leave.md", "Leave policy: twenty days a year.\n")
    repo.commit("first")
    s = GitOverHttp(repo, tmp_path)
    yield s
    s.close()


def test_testing_a_connection_makes_one_request_and_adds_nothing(rest, two_page_site, served_repo):
    client = rest.new_user().client
    two_page_site.requests()
    ok = client.post("/sources/test", json={"kind": "web", "url": two_page_site.url + "/"})
    assert ok.status_code == 200, ok.text
    assert ok.json()["ok"] is True and ok.json()["status"] == 200
    assert two_page_site.requests() == [("/", 200)]  # one request: no robots.txt, no links followed
    missing = client.post("/sources/test", json={"kind": "web", "url": two_page_site.url + "/gone"})
    assert missing.json()["ok"] is False and missing.json()["status"] == 404
    git = client.post("/sources/test", json={"kind": "git", "url": served_repo.url})
    assert git.json()["ok"] is True and "branch main is at" in git.json()["message"]
    assert served_repo.log == ["/info/refs?service=git-upload-pack"]
    other = client.post(
        "/sources/test", json={"kind": "git", "url": served_repo.url, "branch": "dev"}
    )
    assert other.json()["ok"] is False and "branches: main" in other.json()["message"]
    not_git = client.post("/sources/test", json={"kind": "git", "url": two_page_site.url + "/"})
    assert not_git.json()["ok"] is False
    assert client.get("/sources").json() == []
    assert client.get("/knowledge-bases").json() == []


def test_a_redirect_is_told_and_one_off_the_site_is_not_ok(rest, two_page_site):
    client = rest.new_user().client
    answer = two_page_site.answer

    def redirecting(path, headers):
        if path == "/old":
            return 301, {"Location": "/"}, b""
        if path == "/away":
            return 302, {"Location": "https://example.org/"}, b""
        return answer(path, headers)

    two_page_site.answer = redirecting
    moved = client.post("/sources/test", json={"kind": "web", "url": two_page_site.url + "/old"})
    assert (
        moved.json()["ok"] is True
        and "redirects to " + two_page_site.url in moved.json()["message"]
    )
    away = client.post("/sources/test", json={"kind": "web", "url": two_page_site.url + "/away"})
    assert away.json()["ok"] is False and "off the site" in away.json()["message"]
    assert [p for p, _ in two_page_site.requests()] == ["/old", "/away"]  # followed neither


def test_the_outbound_guard_refuses_a_test_as_it_refuses_a_source(tmp_path):
    """The default server: a person may not reach the server's own network, even to test."""
    with serve(tmp_path / "data") as default:
        _refused_to_test(default.new_user().client)


def _refused_to_test(client) -> None:
    for body in (
        {"kind": "web", "url": "http://127.0.0.1:9/"},
        {"kind": "web", "url": "http://169.254.169.254/latest/meta-data/"},
        {"kind": "git", "url": "/etc"},
    ):
        refused = client.post("/sources/test", json=body)
        assert refused.status_code == 400, (body, refused.text)


def test_a_paused_source_does_not_sync_until_resumed(rest, two_page_site):
    client = rest.new_user().client
    assert (
        client.post(
            "/sources", json={"kind": "web", "name": "s", "url": two_page_site.url + "/"}
        ).status_code
        == 201
    )
    paused = client.patch("/sources/s", json={"paused": True})
    assert paused.status_code == 200 and paused.json()["paused"] is True
    two_page_site.requests()
    refused = client.post("/sources/s/sync")
    assert refused.status_code == 409 and "paused" in refused.text
    assert two_page_site.requests() == [] and client.get("/knowledge-bases").json() == []
    assert client.get("/sources").json()[0]["paused"] is True
    assert client.patch("/sources/s", json={"paused": False}).json()["paused"] is False
    synced = client.post("/sources/s/sync")
    assert synced.status_code == 200 and len(synced.json()["added"]) == 2
    listed = client.get("/sources").json()[0]
    assert listed["paused"] is False and listed["lastSync"]["added"] == 2
    assert client.patch("/sources/nothing", json={"paused": True}).status_code == 404


def test_a_pause_made_while_a_sync_runs_is_kept(rest, two_page_site):
    """The sync ends by writing its summary on the record: over the record as it is then,
    not as it was when the sync began (which would undo the pause)."""
    client = rest.new_user().client
    made = client.post(
        "/sources", json={"kind": "web", "name": "p", "url": two_page_site.url + "/"}
    )
    assert made.status_code == 201, made.text
    gate, asked = threading.Event(), threading.Event()
    answer = two_page_site.answer

    def held(path, headers):
        if path == "/a.html":
            asked.set()
            gate.wait(30)
        return answer(path, headers)

    two_page_site.answer = held
    synced: list = []
    running = threading.Thread(target=lambda: synced.append(client.post("/sources/p/sync")))
    running.start()
    assert asked.wait(30)  # the sync is under way
    other = rest.client(client.headers["Authorization"].split()[1])
    assert other.patch("/sources/p", json={"paused": True}).json()["paused"] is True
    gate.set()
    running.join(30)
    assert synced[0].status_code == 200 and len(synced[0].json()["added"]) == 2
    [listed] = client.get("/sources").json()
    assert listed["paused"] is True and listed["lastSync"]["added"] == 2


def test_a_git_repository_over_http_syncs(rest, served_repo):
    client = rest.new_user().client
    added = client.post(
        "/sources", json={"kind": "git", "name": "handbook", "url": served_repo.url}
    )
    assert added.status_code == 201, added.text
    first = client.post("/sources/handbook/sync").json()
    assert first["added"] == ["handbook/docs/leave.md"] and first["failed"] is None
    served_repo.repo.write("docs/travel.md", "Travel policy: trains under five hours.\n")
    served_repo.repo.git("rm", "--quiet", "docs/leave.md")
    served_repo.repo.commit("second")
    served_repo.update()
    second = client.post("/sources/handbook/sync").json()
    assert second["added"] == ["handbook/docs/travel.md"]
    assert second["deleted"] == ["handbook/docs/leave.md"]


def test_both_shapes_of_git_s_ref_listing_are_read():
    """The smart protocol's pkt-lines (the example in Git's gitprotocol-http) and the dumb
    protocol's info/refs file."""
    smart = (
        b"001e# service=git-upload-pack\n"
        b"0000004895dcfa3633004da0049d3d0fa03f80589cbcaf31 refs/heads/maint\0multi_ack\n"
        b"003fd049f6c27a2244e12041955e262a404c7faba355 refs/heads/master\n"
        b"003c2cb58b79488a98d2721cea644875a8dd0026b115 refs/tags/v1.0\n"
        b"0000"
    )
    assert _branches(smart) == {
        "maint": "95dcfa3633004da0049d3d0fa03f80589cbcaf31",
        "master": "d049f6c27a2244e12041955e262a404c7faba355",
    }
    dumb = b"d049f6c27a2244e12041955e262a404c7faba355\trefs/heads/main\n"
    assert _branches(dumb) == {"main": "d049f6c27a2244e12041955e262a404c7faba355"}
    assert _branches(b"<html>not found</html>") is None
