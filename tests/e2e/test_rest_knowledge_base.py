"""/upload and /knowledge-bases over a real server: every supported type reaches
`completed`, failures carry their error, limits answer 400 / 413 / 415 in aurak's error
shape, deletes remove chunks and blobs, and another user's files are unreachable (404)."""

from __future__ import annotations

import pytest

from bunko.services.search.search import SearchOptions
from tests.e2e.rest_harness import assert_error, serve, wait_until_done
from tests.fixtures_files import SAMPLE_KINDS, filename_for, make_file

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"max_file_bytes": 2 * 1024 * 1024}

pytestmark = pytest.mark.slow  # every supported file type through a real server's ingest

TEXT = "Lighthouses guide ships along the rocky coast.\n\nThe keeper trims the lamp each night."


def upload(client, name: str, data: bytes, content_type: str = "application/octet-stream", **form):
    return client.post("/upload", files={"file": (name, data, content_type)}, data=form)


@pytest.mark.parametrize("kind", SAMPLE_KINDS)
def test_each_supported_type_reaches_completed(rest, kind):
    user = rest.new_user()
    response = upload(user.client, filename_for(kind), make_file(kind, TEXT))
    assert response.status_code == 201, response.text
    record = response.json()
    assert record["status"] == "pending" and record["originalName"] == filename_for(kind)
    done = wait_until_done(user.client, record["id"])
    assert done["status"] == "completed", done["error"]
    assert done["chunkCount"] >= 1 and done["error"] is None
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    chunks = rest.services.metadata.get_chunks(workspace, record["id"])
    assert any("lamp" in c.content for c in chunks)
    found = rest.services.search.search(workspace, "keeper lamp", SearchOptions(min_score=0)).items
    assert found and found[0].document_id == record["id"]


def test_upload_options_are_applied_and_returned(rest):
    user = rest.new_user()
    long_text = " ".join(f"Sentence number {i} about lighthouses." for i in range(200))
    record = upload(
        user.client,
        "long.txt",
        long_text.encode(),
        "text/plain",
        chunkSize="300",
        chunkOverlap="30",
        mode="precise",
    ).json()
    assert record["chunkSize"] == 300 and record["chunkOverlap"] == 30
    assert record["mode"] == "precise" and record["embeddingModelId"] is None
    done = wait_until_done(user.client, record["id"])
    assert done["chunkCount"] > len(long_text) // 300


def test_an_embedding_model_other_than_the_knowledge_bases_is_refused(rest):
    # This server is keyword-only: no embedding config can be honoured, and nothing is stored.
    user = rest.new_user()
    other = user.client.post(
        "/model-configs",
        json={
            "name": "ada",
            "provider": "openai",
            "modelId": "text-embedding-3-small",
            "type": "embedding",
        },
    ).json()
    response = upload(
        user.client, "a.txt", b"some text", "text/plain", embeddingModelId=other["id"]
    )
    message = assert_error(response, 400)["message"]
    assert "embeddingModelId" in message and "cannot be honoured" in message
    assert user.client.get("/knowledge-bases").json() == []


def test_the_knowledge_bases_own_model_is_honoured(tmp_path):
    with serve(tmp_path / "data", embedder="lsa") as lsa:
        user = lsa.new_user()
        config = user.client.post(
            "/model-configs",
            json={"name": "mine", "provider": "local", "modelId": "lsa", "type": "embedding"},
        ).json()
        record = upload(
            user.client, "a.txt", TEXT.encode(), "text/plain", embeddingModelId=config["id"]
        )
        assert record.status_code == 201, record.text
        assert record.json()["embeddingModelId"] == config["id"]
        assert wait_until_done(user.client, record.json()["id"])["status"] == "completed"


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"chunkSize": "10"}, "chunkSize"),
        ({"chunkSize": "abc"}, "chunkSize"),
        ({"chunkOverlap": "-1"}, "chunkOverlap"),
        ({"chunkSize": "100", "chunkOverlap": "100"}, "chunkOverlap"),
        ({"mode": "turbo"}, "mode"),
        ({"embeddingModelId": "no-such-model"}, "embeddingModelId"),
    ],
)
def test_bad_options_are_400_naming_the_field(rest, form, field):
    user = rest.new_user()
    response = upload(user.client, "a.txt", b"some text", "text/plain", **form)
    assert field in str(assert_error(response, 400)["message"])
    assert user.client.get("/knowledge-bases").json() == []


def test_limits_on_type_size_and_content(rest):
    user = rest.new_user()
    assert_error(upload(user.client, "tool.exe", b"MZ\x90\x00binary"), 415)
    assert_error(upload(user.client, "photo.png", b"\x89PNG\r\n\x1a\n", "image/png"), 415)
    too_big = upload(user.client, "big.txt", b"a" * (2 * 1024 * 1024 + 1), "text/plain")
    assert "limit" in assert_error(too_big, 413)["message"]
    assert_error(upload(user.client, "empty.txt", b"", "text/plain"), 400)
    missing = user.client.post("/upload", data={"chunkSize": "500"})
    assert "file" in str(assert_error(missing, 400)["message"])
    assert user.client.get("/knowledge-bases").json() == []


def test_a_body_far_over_the_limit_is_refused_before_it_is_read(rest):
    user = rest.new_user()
    # The declared length alone is enough to refuse: the server answers without reading.
    response = user.client.post(
        "/upload",
        content=b"x" * (4 * 1024 * 1024),
        headers={"content-type": "multipart/form-data; boundary=b"},
    )
    assert "request body" in assert_error(response, 413)["message"]


def test_a_broken_file_ends_failed_with_its_error(rest):
    user = rest.new_user()
    record = upload(user.client, "broken.pdf", b"%PDF-1.7\nthis is not really a pdf").json()
    done = wait_until_done(user.client, record["id"])
    assert done["status"] == "failed" and done["error"]
    assert "Traceback" not in done["error"]


def test_delete_removes_document_chunks_and_blobs(rest):
    user = rest.new_user()
    record = upload(user.client, "gone.txt", b"the text that will go away", "text/plain").json()
    wait_until_done(user.client, record["id"])
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    blob_prefix = f"originals/{workspace}/{record['id']}/1"
    assert rest.services.blobs.exists(blob_prefix)
    deleted = user.client.delete(f"/knowledge-bases/{record['id']}")
    assert deleted.status_code == 200 and deleted.json()["id"] == record["id"]
    assert user.client.get("/knowledge-bases").json() == []
    assert rest.services.metadata.get_chunks(workspace, record["id"]) == []
    assert not rest.services.blobs.exists(blob_prefix)
    assert rest.services.index.count(workspace) == 0
    assert_error(user.client.delete(f"/knowledge-bases/{record['id']}"), 404)
    assert_error(user.client.get(f"/knowledge-bases/{record['id']}"), 404)


def test_clear_empties_only_the_callers_workspace(rest):
    user, neighbour = rest.new_user(), rest.new_user()
    for i in range(3):
        upload(user.client, f"f{i}.txt", f"file {i}".encode(), "text/plain")
    kept = upload(neighbour.client, "keep.txt", b"neighbour's file", "text/plain").json()
    cleared = user.client.delete("/knowledge-bases/clear")
    assert cleared.status_code == 200 and cleared.json()["deleted"] == 3
    assert user.client.get("/knowledge-bases").json() == []
    assert [f["id"] for f in neighbour.client.get("/knowledge-bases").json()] == [kept["id"]]


def test_another_users_files_are_unreachable(rest):
    owner, stranger = rest.new_user(), rest.new_user()
    record = upload(owner.client, "private.txt", b"owner's secret notes", "text/plain").json()
    assert stranger.client.get("/knowledge-bases").json() == []
    assert_error(stranger.client.get(f"/knowledge-bases/{record['id']}"), 404)
    assert_error(stranger.client.delete(f"/knowledge-bases/{record['id']}"), 404)
    stranger.client.delete("/knowledge-bases/clear")
    assert owner.client.get(f"/knowledge-bases/{record['id']}").status_code == 200


def test_listing_is_newest_first_and_pages(rest):
    user = rest.new_user()
    ids = [
        upload(user.client, f"n{i}.txt", f"n{i}".encode(), "text/plain").json()["id"]
        for i in range(3)
    ]
    listed = [f["id"] for f in user.client.get("/knowledge-bases").json()]
    assert listed == ids[::-1]
    assert [
        f["id"]
        for f in user.client.get("/knowledge-bases", params={"limit": 1, "offset": 1}).json()
    ] == [ids[1]]
