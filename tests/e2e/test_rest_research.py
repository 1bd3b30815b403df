"""The REST twins under /research-api against a real server: the same results as the tools,
aurak's error body for bad input (400), a missing scope or another workspace (403) and an
unknown corpus (404), and nothing changed by any of them."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from tests.e2e.research_contract import validate_snapshot


def _key(rest, *scopes: str, workspace: str | None = None) -> tuple[str, str]:
    workspace = workspace or str(uuid.uuid4())
    _, secret = rest.services.apikeys.create(workspace_id=workspace, scopes=scopes)
    return secret, workspace


def _document(rest, ws: str, path: str, text: str):
    services = rest.services
    doc = services.ingest.submit_text(ws, path=path, content=text, mime="text/plain")
    return services.library.wait_until_indexed(ws, doc.id, timeout=60)


def _error(response, status: int) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"statusCode", "message", "error"} and body["statusCode"] == status
    return body


def test_rest_twins_seal_get_list_and_search(rest):
    key, ws = _key(rest, "agent:research")
    doc = _document(rest, ws, "tides.txt", "The moon pulls the tides twice a day.")
    with rest.client(key) as http:
        project = http.post("/research-api/projects/create", json={
            "workspace_id": ws, "name": "Tides"}).json()["project"]  # fmt: skip
        common = {"workspace_id": ws, "project_id": project["id"]}
        added = http.post("/research-api/evidence/add", json={
            **common, "document_id": doc.id, "revision": 1})  # fmt: skip
        assert added.status_code == 200 and added.json()["project_revision"] == 2
        sealed = http.post("/research-api/corpora/seal", json=common).json()
        corpus = {"workspace_id": ws, "id": sealed["snapshot"]["id"]}
        got = http.post("/research-api/corpora/get", json=corpus)
        assert got.status_code == 200
        validate_snapshot(got.json())
        assert got.json() == {"snapshot": sealed["snapshot"]}
        listed = http.post("/research-api/corpora/list", json={"workspace_id": ws}).json()
        assert [c["id"] for c in listed["corpora"]] == [corpus["id"]]
        found = http.post("/research-api/corpora/search", json={**corpus, "query": "tides"})
        hit = found.json()["hits"][0]
        assert (hit["evidence_id"], hit["revision"]) == (
            sealed["snapshot"]["evidence"][0]["evidence_id"], 1,
        )  # fmt: skip
        projects = http.post("/research-api/projects/list", json={"workspace_id": ws}).json()
        assert [p["project_revision"] for p in projects["projects"]] == [2]
        schema = rest.client().get("/openapi.json").json()
        body = schema["paths"]["/research-api/corpora/get"]["post"]["requestBody"]
        assert body["content"]["application/json"]["schema"]["required"] == ["workspace_id", "id"]


def test_rest_twins_refuse_bad_input_and_change_nothing(rest):
    key, ws = _key(rest, "agent:research")
    other_key, other_ws = _key(rest, "agent:research")
    doc = _document(rest, ws, "a.txt", "Alpha text.")
    with rest.client(other_key) as other:
        their_project = other.post("/research-api/projects/create", json={
            "workspace_id": other_ws, "name": "Theirs"}).json()["project"]  # fmt: skip
        theirs = other.post("/research-api/corpora/seal", json={
            "workspace_id": other_ws, "project_id": their_project["id"]}).json()  # fmt: skip
    with rest.client(key) as http:
        project = http.post("/research-api/projects/create", json={
            "workspace_id": ws, "name": "Mine"}).json()["project"]  # fmt: skip
        common = {"workspace_id": ws, "project_id": project["id"]}
        http.post(
            "/research-api/evidence/add", json={**common, "document_id": doc.id, "revision": 1}
        )
        mine = http.post("/research-api/corpora/seal", json=common).json()["snapshot"]
        get = {"workspace_id": ws, "id": mine["id"]}
        for bad in ({**get, "id": "not-a-uuid"}, {**get, "revision": 0}, {**get, "x": 1}, {}):
            _error(http.post("/research-api/corpora/get", json=bad), 400)
        _error(http.post("/research-api/corpora/get", content=b"{not json"), 400)
        _error(
            http.post("/research-api/corpora/get", json={**get, "id": theirs["snapshot"]["id"]}),
            404,
        )
        _error(
            http.post(
                "/research-api/corpora/get",
                json={"workspace_id": other_ws, "id": theirs["snapshot"]["id"]},
            ),
            403,
        )
        _error(
            http.post(
                "/research-api/evidence/add", json={**common, "document_id": doc.id, "revision": 2}
            ),
            404,
        )  # no such revision
        _error(http.post("/research-api/evidence/add", json={
            "workspace_id": other_ws, "project_id": their_project["id"],
            "document_id": doc.id, "revision": 1}), 403)  # fmt: skip
    reader, _ = _key(rest, "kb:read", "kb:write", workspace=ws)
    with rest.client(reader) as http:
        message = _error(http.post("/research-api/corpora/get", json=get), 403)["message"]
        assert "agent:research" in message
        _error(
            http.post("/research-api/projects/create", json={"workspace_id": ws, "name": "No"}), 403
        )
    _error(rest.client().post("/research-api/corpora/get", json=get), 401)
    with rest.client(key) as http:
        assert http.post("/research-api/corpora/get", json=get).json() == {"snapshot": mine}
        projects = http.post("/research-api/projects/list", json={"workspace_id": ws}).json()
        assert [(p["name"], p["project_revision"]) for p in projects["projects"]] == [("Mine", 2)]
    with rest.client(other_key) as other:
        got = other.post("/research-api/corpora/get", json={
            "workspace_id": other_ws, "id": theirs["snapshot"]["id"]}).json()  # fmt: skip
        assert got == {"snapshot": theirs["snapshot"]}


def test_deleting_a_project_or_its_owner_releases_the_retained_text(rest):
    user = rest.new_user()
    ws = rest.services.identity.authenticate(user.token).workspace_id
    doc = _document(rest, ws, "gone.txt", "Text that only a corpus keeps.")
    research = rest.services.research
    http = user.client
    ids = []
    for name in ("first", "second"):
        project = http.post("/research-api/projects/create", json={
            "workspace_id": ws, "name": name}).json()["project"]  # fmt: skip
        common = {"workspace_id": ws, "project_id": project["id"]}
        http.post(
            "/research-api/evidence/add", json={**common, "document_id": doc.id, "revision": 1}
        )
        assert http.post("/research-api/corpora/seal", json=common).status_code == 200
        ids.append(common)
    rest.services.ingest.delete_document(ws, doc.id)
    assert len(research.store.pinned_passages(ws, doc.id, 1)) == 2  # one copy per corpus
    deleted = http.post("/research-api/projects/delete", json=ids[0])
    assert deleted.json() == {"deleted": True, "project_id": ids[0]["project_id"]}
    _error(http.post("/research-api/projects/delete", json=ids[0]), 404)
    assert len(research.store.pinned_passages(ws, doc.id, 1)) == 1
    admin = rest.admin()
    assert admin.client.delete(f"/users/{user.id}").status_code == 200
    assert research.list_projects(ws) == [] and research.list_corpora(ws) == []
    assert research.store.pinned_passages(ws, doc.id, 1) == []


def test_the_server_serves_exactly_the_research_paths_the_docs_name(rest):
    """docs/rest.md's table is the contract: each path it names is served, and no other."""
    docs = (Path(__file__).parents[2] / "docs" / "rest.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\| POST (/research-api/\w+/\w+) \|", docs, re.MULTILINE))
    served = {p for p in rest.client().get("/openapi.json").json()["paths"] if "research-api" in p}
    assert named and named == served
