"""A presigned upload's options (/upload's category, chunkSize, chunkOverlap and mode): checked
with /upload's limits before anything is signed, signed as the object's metadata, and applied
by the drop's ingest, through the real api and ingest handlers on moto and osmem-server."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
import requests

from bunko import lambda_entry
from bunko.adapters.aws.s3.drops import drop_metadata, drop_options
from bunko.domain import DEFAULT_WORKSPACE_ID, DocumentStatus
from bunko.errors import ValidationError
from bunko.ports import SearchFilter
from bunko.ports.uploads import DropOptions
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import (
    call,
    created_event,
    get,
    load_function,
    presign,
    sign_in,
)
from tests.aws.stand_ins import BUCKET

TEXT = "# 灯台日誌\n\n" + "The keeper trims the lamp wick every evening before dusk. " * 40


def ingest_body(key: str) -> str:
    return created_event(key)["Records"][0]["body"]


def workspace_of(username: str) -> str:
    users = lambda_entry.api_app().state.services.accounts.auth.users
    return users.get_user_by_username(username).workspace_id


def test_options_travel_as_signed_metadata_and_ingest_applies_them(api_with_accounts, aws_env):
    api, ingest = api_with_accounts, load_function("ingest")
    status, upload = presign(api, sign_in(api), {
        "path": "logs/灯台.md", "contentType": "text/markdown", "size": len(TEXT.encode()),
        "category": "灯台", "chunkSize": 300, "chunkOverlap": 30, "mode": "precise",
    })  # fmt: skip
    assert status == 200, upload
    assert {k: v for k, v in upload["headers"].items() if k.startswith("x-amz-meta-")} == {
        "x-amz-meta-bunko-category": quote("灯台", safe=""),
        "x-amz-meta-bunko-chunk-size": "300",
        "x-amz-meta-bunko-chunk-overlap": "30",
        "x-amz-meta-bunko-mode": "precise",
        "x-amz-meta-bunko-presigned": "1",  # its ingest applies the uploader's quota
    }
    put = requests.put(upload["url"], data=TEXT.encode(), headers=upload["headers"], timeout=10)
    assert put.status_code == 200, put.text
    assert ingest.handler(created_event(upload["key"]), FakeLambdaContext()) == {
        "batchItemFailures": []
    }

    services = lambda_entry.ingest_handler().services
    workspace = workspace_of("ada")
    doc = services.metadata.get_document_by_path(workspace, "logs/灯台.md")
    assert doc.status is DocumentStatus.COMPLETED
    assert (doc.chunk_size, doc.chunk_overlap, doc.category) == (300, 30, "灯台")
    chunks = services.metadata.get_chunks(workspace, doc.id)
    assert len(chunks) > 1 and all(len(c.content) <= 300 for c in chunks)
    hits = services.index.keyword_search("wick", SearchFilter(workspace), 5)
    assert {h.document_id for h in hits} == {doc.id}
    # the file list reports the mode chosen, as for /upload
    status, files = call(api, "GET", "/knowledge-bases", token=sign_in(api))
    assert status == 200
    assert [(f["name"], f["mode"]) for f in files] == [("logs/灯台.md", "precise")]
    # precise reads the file again even when the bytes did not change (as /upload's mode);
    # a fast drop delivered again is left as it is
    assert [d.id for d in lambda_entry.ingest_handler().handle(ingest_body(upload["key"]))] == [
        doc.id
    ]


def test_a_drop_without_options_keeps_the_defaults_and_fast_redelivery_is_idle(ingest_ready):
    key = "drop/default/notes/plain.md"
    aws, handler = ingest_ready
    aws.s3.put_object(Bucket=BUCKET, Key=key, Body=TEXT.encode())
    [doc] = handler.handle(ingest_body(key))
    settings = handler.services.settings
    assert (doc.chunk_size, doc.chunk_overlap) == (settings.chunk_size, settings.chunk_overlap)
    assert doc.category == "notes"
    assert handler.handle(ingest_body(key)) == []


@pytest.fixture
def ingest_ready(aws_env):
    return aws_env, lambda_entry.ingest_handler()


@pytest.mark.parametrize(
    ("metadata", "named"),
    [
        ({"bunko-chunk-size": "10"}, "x-amz-meta-bunko-chunk-size"),
        ({"bunko-chunk-size": "1e3"}, "x-amz-meta-bunko-chunk-size"),
        ({"bunko-chunk-overlap": "10001"}, "x-amz-meta-bunko-chunk-overlap"),
        ({"bunko-mode": "slow"}, "x-amz-meta-bunko-mode"),
        ({"bunko-chunk-size": "100", "bunko-chunk-overlap": "100"}, "chunkOverlap"),
    ],
)
def test_a_hand_made_drop_with_options_upload_refuses_is_not_indexed(ingest_ready, metadata, named):
    key = "drop/default/notes/bad.md"
    aws, handler = ingest_ready
    aws.s3.put_object(Bucket=BUCKET, Key=key, Body=TEXT.encode(), Metadata=metadata)
    with pytest.raises(ValidationError, match=named):
        handler.handle(ingest_body(key))
    assert (
        handler.services.metadata.get_document_by_path(DEFAULT_WORKSPACE_ID, "notes/bad.md") is None
    )


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"chunkSize": 49}, "chunkSize"),
        ({"chunkSize": 20001}, "chunkSize"),
        ({"chunkSize": "big"}, "chunkSize"),
        ({"chunkOverlap": -1}, "chunkOverlap"),
        ({"chunkOverlap": 10001}, "chunkOverlap"),
        ({"chunkSize": 400, "chunkOverlap": 400}, "chunkOverlap"),
        # the default overlap (200) is not below this size, as /upload would answer
        ({"chunkSize": 150}, "chunkOverlap"),
        ({"mode": "slow"}, "mode"),
        ({"category": "c" * 101}, "category"),
        ({"embeddingModelId": "m1"}, "embeddingModelId"),
    ],
)
def test_bad_options_are_400_naming_the_field_and_nothing_is_signed(
    api_with_accounts, aws_env, options, field
):
    status, body = presign(api_with_accounts, sign_in(api_with_accounts),
                           {"path": "a.md", "size": 10, **options})  # fmt: skip
    assert status == 400, body
    messages = body["message"] if isinstance(body["message"], list) else [body["message"]]
    assert any(field in m for m in messages), messages
    assert "url" not in body


def test_metadata_round_trip():
    options = DropOptions(category="社内 資料", chunk_size=50, chunk_overlap=0, mode="fast")
    metadata = drop_metadata(options)
    assert all(k.isascii() and k == k.lower() and v.isascii() for k, v in metadata.items())
    assert drop_options(metadata) == options
    assert drop_metadata(DropOptions()) == {}
    assert drop_options({}) == DropOptions()


def test_the_embedded_server_never_sends_the_web_app_to_presign(tmp_path):
    """`bunko serve` has no signer: its config.json names no threshold, so the web app posts
    every file to /upload, and /uploads/presign is not there at all."""
    from fastapi.testclient import TestClient

    from bunko.server_app import create_app
    from tests.conftest import make_services

    services = make_services(tmp_path / "data", embedder="none", auth="off")
    try:
        with TestClient(create_app(services), base_url="http://127.0.0.1") as client:
            assert client.get("/config.json").json() == {"apiBaseUrl": ""}
            assert client.post("/uploads/presign", json={"path": "a.md"}).status_code == 404
    finally:
        services.close()


def test_metadata_goes_ahead_as_the_sidecar_the_drop_reads(api_with_accounts, aws_env):
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    metadata = {"team": "灯台守", "year": 2024, "tags": ["lamp", "wick"]}
    status, upload = presign(api, token, {
        "path": "logs/meta.md", "metadata": metadata, "size": len(TEXT.encode()),
    })  # fmt: skip
    assert status == 200, upload
    sidecar = aws_env.s3.get_object(Bucket=BUCKET, Key=upload["key"] + ".metadata.json")
    assert json.loads(sidecar["Body"].read()) == {"metadataAttributes": metadata}
    # not in headers: only the mark that the upload is a person's
    assert [k for k in upload["headers"] if k.startswith("x-amz-meta-")] == [
        "x-amz-meta-bunko-presigned"
    ]
    put = requests.put(upload["url"], data=TEXT.encode(), headers=upload["headers"], timeout=10)
    assert put.status_code == 200, put.text
    assert ingest.handler(created_event(upload["key"]), FakeLambdaContext()) == {
        "batchItemFailures": []
    }
    status, files = call(api, "GET", "/knowledge-bases", token=token)
    assert [(f["name"], f["metadata"]) for f in files] == [("logs/meta.md", metadata)]
    flt = json.dumps({"equals": {"key": "tags", "value": "wick"}})
    status, found = get(api, token, "/search", {"q": "wick", "filter": flt})
    assert status == 200 and [i["path"] for i in found["items"]] == ["logs/meta.md"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"path": "a.md", "metadata": {"category": "x"}}, "metadata.category"),
        ({"path": "a.md", "metadata": {"n": [1]}}, "metadata.n"),
        ({"path": "a.md.metadata.json"}, "sidecar"),
    ],
)
def test_bad_metadata_or_a_sidecar_path_is_400_and_nothing_is_written(
    api_with_accounts, aws_env, body, named
):
    status, answer = presign(api_with_accounts, sign_in(api_with_accounts), {"size": 10, **body})
    assert status == 400 and named in str(answer["message"]), answer
    assert "url" not in answer
    listed = aws_env.s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    assert not [o["Key"] for o in listed if o["Key"].endswith(".metadata.json")]
