"""A library's move at the REST door over a real server (issue 50, point 4): its owner exports
it and downloads the archive by its link (no token), another person imports it into a new
library of theirs, which holds the same documents and answers searches alike; viewers and
editors get 403, outsiders 404; a hostile archive is refused with 400 and nothing made; each
start leaves one audit event, polls and downloads none."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path

import pytest

from bunko.domain.audit import AuditQuery
from tests.e2e.library_move import (
    HANDBOOK,
    LIBRARY,
    PASSWORD,
    documents,
    make_library,
    manifest_with,
    rewrite,
    top_hits,
)
from tests.e2e.rest_harness import assert_error


def _poll(client, path: str, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(path)
        assert body.status_code == 200, body.text
        if body.json()["status"] != "running" or time.monotonic() > deadline:
            return body.json()
        time.sleep(0.1)


def _count(rest) -> int:
    return rest.services.audit.store.events(AuditQuery(limit=1)).total


def _latest(rest):
    return rest.services.audit.store.events(AuditQuery(limit=1)).events[0]


@pytest.fixture(scope="module")
def handbook(rest):
    """The handbook library (ada owns it, grace edits, lin views) and ada signed in."""
    library = make_library(rest.services)
    return library, rest.login("ada", PASSWORD)


@pytest.fixture(scope="module")
def exported(rest, handbook, tmp_path_factory) -> tuple[Path, dict]:
    library, ada = handbook
    before = _count(rest)
    started = ada.client.post(f"/libraries/{library}/export", json={"conversations": True})
    assert started.status_code == 202, started.text
    assert _count(rest) - before == 1
    event = _latest(rest)
    assert (event.action, event.outcome, event.library_id, event.user_id) == (
        "POST /libraries/{library_id}/export", "ok", library, ada.id)  # fmt: skip
    job = _poll(ada.client, f"/libraries/{library}/export/{started.json()['id']}")
    assert job["status"] == "done", job
    assert job["documents"] == len(HANDBOOK) and job["expiresIn"] > 0
    with rest.client() as anonymous:  # a browser's download sends no token
        response = anonymous.get(job["download"])
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith("attachment") and "Handbook.bunko.zip" in disposition
    assert len(response.content) == job["bytes"]
    assert _count(rest) - before == 1  # the polls and the download left nothing
    path = tmp_path_factory.mktemp("moved") / "handbook.zip"
    path.write_bytes(response.content)
    return path, job


def test_an_owner_exports_and_downloads_the_archive(rest, handbook, exported):
    library, ada = handbook
    path, job = exported
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["library"]["name"] == LIBRARY and manifest["documents"] == len(HANDBOOK)
    assert {m["username"] for m in manifest["members"]} >= {"ada", "grace", "lin"}
    # the owner's token reads it too; a wrong link, another library's path: 404
    with_token = ada.client.get(f"/libraries/{library}/export/{job['id']}/archive")
    assert with_token.content == path.read_bytes()
    with rest.client() as anonymous:
        assert_error(anonymous.get(job["download"].replace("link=", "link=x")), 404)
        assert_error(anonymous.get(f"/libraries/{library}/export/{job['id']}/archive"), 401)


def test_viewers_and_editors_are_refused_and_outsiders_see_no_library(rest, handbook, exported):
    library, _ = handbook
    _, job = exported
    grace, lin = rest.login("grace", PASSWORD), rest.login("lin", PASSWORD)
    outsider = rest.new_user()
    for person, status in ((grace, 403), (lin, 403), (outsider, 404)):
        before = _count(rest)
        assert_error(person.client.post(f"/libraries/{library}/export", json={}), status)
        assert _count(rest) - before == 1 and _latest(rest).outcome == "refused"
        assert_error(person.client.get(f"/libraries/{library}/export/{job['id']}"), status)
        got = person.client.get(f"/libraries/{library}/export/{job['id']}/archive")
        assert_error(got, status)
    # an export is another library's to nobody: the outsider's own library has no such export
    own = outsider.client.get("/libraries").json()[0]["id"]
    assert_error(outsider.client.get(f"/libraries/{own}/export/{job['id']}"), 404)


def test_a_person_imports_the_archive_into_a_new_library_of_theirs(rest, handbook, exported):
    library, _ = handbook
    path, _ = exported
    grace = rest.login("grace", PASSWORD)  # not an admin: no conversations
    before = _count(rest)
    started = grace.client.post(
        "/libraries/import",
        files={"file": ("handbook.zip", path.read_bytes(), "application/zip")},
        data={"name": "Handbook copy"},
    )
    assert started.status_code == 202, started.text
    assert _count(rest) - before == 1
    assert (_latest(rest).action, _latest(rest).outcome) == ("POST /libraries/import", "ok")
    job = _poll(grace.client, f"/libraries/import/{started.json()['id']}")
    assert job["status"] == "done", job
    result = job["result"]
    assert (result["added"], result["indexed"], result["failed"]) == (len(HANDBOOK),) * 2 + ({},)
    assert result["conversationsAdded"] == 0 and result["libraryName"] == "Handbook copy"
    assert _count(rest) - before == 1
    moved = job["libraryId"]
    mine = {lib["id"]: lib["role"] for lib in grace.client.get("/libraries").json()}
    assert mine[moved] == "owner"
    services = rest.services
    assert documents(services, moved) == documents(services, library)
    assert top_hits(services, moved) == top_hits(services, library)
    grace.client.headers["X-Bunko-Library"] = moved
    hits = grace.client.get("/search", params={"q": "ferry terminal pier"}).json()["items"]
    assert hits[0]["name"].endswith("lighthouse.md")
    # another person cannot read the job; an API key cannot import
    assert_error(rest.new_user().client.get(f"/libraries/import/{job['id']}"), 404)


def test_a_hostile_or_unreadable_archive_is_refused_and_nothing_is_made(rest, exported, tmp_path):
    path, _ = exported
    person = rest.new_user()
    libraries = len(rest.services.accounts.libraries.store.list_libraries())
    spool = rest.services.moves.archives.root
    bad = {
        "truncated": path.read_bytes()[: path.stat().st_size // 2],
        "newer": rewrite(path, tmp_path / "v.zip",
                         change={"manifest.json": manifest_with(version=99)}).read_bytes(),
        "not a zip": b"plain text, not an archive",
    }  # fmt: skip
    for why, data in bad.items():
        before = _count(rest)
        refused = person.client.post(
            "/libraries/import", files={"file": ("a.zip", data, "application/zip")}
        )
        body = assert_error(refused, 400)
        assert "scratch-" not in body["message"], body  # our spool's names stay ours
        if why == "not a zip":
            assert "archive.zip is not a Bunko archive" in body["message"], body
        assert _count(rest) - before == 1
        # as `bunko import` records the same refusal (test_hostile_archives)
        assert (_latest(rest).outcome, _latest(rest).status) == ("failed", 400)
    assert len(rest.services.accounts.libraries.store.list_libraries()) == libraries
    assert not list(spool.glob("scratch-*"))  # no upload left behind
    # a name taken: 409, nothing made
    taken = person.client.post(
        "/libraries/import",
        files={"file": ("a.zip", path.read_bytes(), "application/zip")},
        data={"name": LIBRARY},
    )
    assert_error(taken, 409)
    assert len(rest.services.accounts.libraries.store.list_libraries()) == libraries
    key = person.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write"]}).json()
    with rest.client(key["key"]) as agent:
        archive = io.BytesIO(path.read_bytes())
        assert_error(agent.post("/libraries/import", files={"file": ("a.zip", archive)}), 403)


def test_a_persons_import_adds_no_source_reading_the_servers_own_files(rest, exported, tmp_path):
    """`bunko import` is the operator's and may add a Git source on a path of the machine; a
    person's import over REST may not (it would read the server's files into their library)."""
    path, _ = exported
    local = {"id": "c0ffee00-0000-4000-8000-000000000001", "name": "server-files",
             "kind": "git", "settings": {"url": "/etc"}, "private": False,
             "created_at": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    archive = rewrite(path, tmp_path / "git.zip",
                      change={"manifest.json": manifest_with(sources=[local])})  # fmt: skip
    person = rest.new_user()
    started = person.client.post(
        "/libraries/import",
        files={"file": ("a.zip", archive.read_bytes(), "application/zip")},
        data={"name": "With a local source"},
    )
    assert started.status_code == 202, started.text
    job = _poll(person.client, f"/libraries/import/{started.json()['id']}")
    assert job["status"] == "done", job
    assert job["result"]["sourcesAdded"] == []
    assert "path on the server is refused" in job["result"]["sourcesSkipped"]["server-files"]
    assert rest.services.sources.list(job["libraryId"]) == []
