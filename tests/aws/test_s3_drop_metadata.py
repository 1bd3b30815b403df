"""Metadata for S3 drops (issue 36): `<key>.metadata.json` sidecar objects in Amazon Bedrock
Knowledge Bases' format and Markdown front matter, through the real ingest Lambda handler on
moto (S3, DynamoDB, SQS) and the OpenSearch stand-in. Objects are written with the S3 API; the
bucket's notification puts S3's own events on the ingest queue, which is drained through the
handler as the Lambda poller would."""

from __future__ import annotations

import copy
import json
import logging
import uuid
from urllib.parse import quote_plus

import pytest
from botocore.exceptions import ClientError

from bunko import lambda_entry
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.domain.metadata import parse_filter
from bunko.services.search.search import SearchOptions
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import deliver, load_event, load_function
from tests.aws.stand_ins import BUCKET, notify_queue

DROP = "drop/"
LEGAL = {"team": "legal", "year": 2024, "tags": ["contracts", "leases"]}
CANONICAL_LEGAL = {"team": "legal", "year": 2024.0, "tags": ["contracts", "leases"]}


@pytest.fixture
def drop_ingest(aws_env):
    """The ingest function, fed by the bucket's notifications (drops → the ingest queue)."""
    notify_queue(aws_env, DROP)
    return load_function("ingest")


@pytest.fixture
def warnings(caplog) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="bunko.drops")
    return caplog


def put(aws_env, path: str, body: str | bytes) -> None:
    data = body.encode() if isinstance(body, str) else body
    aws_env.s3.put_object(Bucket=BUCKET, Key=f"{DROP}default/{path}", Body=data)


def remove(aws_env, path: str) -> None:
    aws_env.s3.delete_object(Bucket=BUCKET, Key=f"{DROP}default/{path}")


def sidecar(attributes: dict) -> str:
    return json.dumps({"metadataAttributes": attributes})


def services():
    return lambda_entry.ingest_handler().services


def doc_at(path: str):
    return services().metadata.get_document_by_path(WS, path)


def paths() -> set[str]:
    return {d.path for d in services().metadata.iter_documents(WS)}


def warned(caplog, *words: str):
    return next((r for r in caplog.records if all(w in r.getMessage() for w in words)), None)


def test_a_sidecar_put_first_is_read_by_its_file(aws_env, drop_ingest):
    put(aws_env, "legal/lease.txt.metadata.json", sidecar(LEGAL))
    deliver(aws_env, drop_ingest)
    assert paths() == set()  # no file yet: nothing is created
    put(aws_env, "legal/lease.txt", "The lease runs for ten years.")
    deliver(aws_env, drop_ingest)
    doc = doc_at("legal/lease.txt")
    assert doc.status is DocumentStatus.COMPLETED and doc.category == "legal"
    assert doc.metadata == CANONICAL_LEGAL
    assert paths() == {"legal/lease.txt"}


def test_a_sidecar_after_its_file_relabels_it_then_changes_and_clears(aws_env, drop_ingest):
    put(aws_env, "lease.txt", "The lease mentions a lighthouse keeper.")
    deliver(aws_env, drop_ingest)
    first = doc_at("lease.txt")
    assert first.status is DocumentStatus.COMPLETED and first.metadata == {}

    put(aws_env, "lease.txt.metadata.json", sidecar(LEGAL))
    deliver(aws_env, drop_ingest)
    doc = doc_at("lease.txt")
    assert doc.metadata == CANONICAL_LEGAL
    assert (doc.id, doc.revision, doc.status) == (first.id, 1, DocumentStatus.COMPLETED)

    def found(team: str) -> list[str]:  # OpenSearch answers to the new terms
        only = parse_filter({"equals": {"key": "team", "value": team}})
        hits = services().search.search(WS, "lighthouse", SearchOptions(min_score=0, metadata=only))
        return [h.document_id for h in hits.items]

    assert found("legal") == [doc.id]

    put(aws_env, "lease.txt.metadata.json", sidecar({"team": "sales"}))
    deliver(aws_env, drop_ingest)
    assert doc_at("lease.txt").metadata == {"team": "sales"}
    assert found("sales") == [doc.id] and found("legal") == []

    remove(aws_env, "lease.txt.metadata.json")
    deliver(aws_env, drop_ingest)
    doc = doc_at("lease.txt")
    assert doc.metadata == {} and doc.revision == 1
    assert found("sales") == []
    assert paths() == {"lease.txt"}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"metadataAttributes": ', "not valid JSON"),
        (sidecar({"team.name": "legal"}), "team.name"),
        (sidecar({"flag": {"value": {"type": "BOOLEAN", "booleanValue": "yes"}}}), "booleanValue"),
        (sidecar({"notes": "x" * 70_000}), "over 64 KiB"),
    ],
    ids=["bad-json", "bad-key", "bad-typed-value", "too-big"],
)
def test_a_broken_sidecar_leaves_the_metadata_as_it_was(
    aws_env, drop_ingest, warnings, content, reason
):
    put(aws_env, "lease.txt", "The lease runs for ten years.")
    put(aws_env, "lease.txt.metadata.json", sidecar(LEGAL))
    deliver(aws_env, drop_ingest)
    assert doc_at("lease.txt").metadata == CANONICAL_LEGAL

    put(aws_env, "lease.txt.metadata.json", content)
    deliver(aws_env, drop_ingest)  # no failure: a retry would not mend it
    assert warned(warnings, "lease.txt.metadata.json", reason)
    assert doc_at("lease.txt").metadata == CANONICAL_LEGAL

    # The file changed beside the broken sidecar: indexed, its metadata still kept.
    put(aws_env, "lease.txt", "The lease now runs for twenty years.")
    deliver(aws_env, drop_ingest)
    doc = doc_at("lease.txt")
    assert (doc.revision, doc.status) == (2, DocumentStatus.COMPLETED)
    assert doc.metadata == CANONICAL_LEGAL


FRONT = """---
title: Harbour lights
date: 2024-03-01
tags: [boats, lights]
draft: true
---
# Harbour lights

The lighthouse keeper logs every ship.
"""


def test_front_matter_and_a_sidecar_that_beats_it(aws_env, drop_ingest, warnings):
    put(aws_env, "guide.md", FRONT)
    deliver(aws_env, drop_ingest)
    doc = doc_at("guide.md")
    assert doc.metadata == {
        "title": "Harbour lights",
        "date": "2024-03-01",
        "tags": ["boats", "lights"],
    }
    assert warned(warnings, "guide.md", "'draft'")
    text = " ".join(c.content for c in services().metadata.get_chunks(WS, doc.id))
    assert "Harbour lights" in text and "lighthouse keeper" in text

    put(aws_env, "guide.md.metadata.json", sidecar({"title": "From the sidecar", "team": "docs"}))
    deliver(aws_env, drop_ingest)
    assert doc_at("guide.md").metadata == {
        "title": "From the sidecar", "team": "docs", "date": "2024-03-01",
        "tags": ["boats", "lights"],
    }  # fmt: skip

    remove(aws_env, "guide.md.metadata.json")  # the front matter alone again
    deliver(aws_env, drop_ingest)
    doc = doc_at("guide.md")
    assert doc.metadata["title"] == "Harbour lights" and "team" not in doc.metadata
    assert doc.revision == 1


def test_a_sidecar_whose_file_never_arrives_creates_nothing(aws_env, drop_ingest):
    put(aws_env, "ghost.pdf.metadata.json", sidecar(LEGAL))
    put(aws_env, "ghost.pdf.metadata.json", sidecar({"team": "x"}))
    remove(aws_env, "ghost.pdf.metadata.json")
    put(aws_env, ".hidden.txt.metadata.json", sidecar(LEGAL))
    deliver(aws_env, drop_ingest)
    assert paths() == set()
    assert services().metadata.count_documents(WS) == 0


def test_an_empty_sidecar_is_a_broken_one(aws_env, drop_ingest, warnings):
    """An empty object has no byte 0 for a ranged read (S3 answers InvalidRange): it is read
    as empty, and refused."""
    put(aws_env, "notes.txt", "Notes about the granite meadow.")
    put(aws_env, "notes.txt.metadata.json", b"")
    deliver(aws_env, drop_ingest)
    doc = doc_at("notes.txt")
    assert doc.status is DocumentStatus.COMPLETED and doc.metadata == {}
    assert warned(warnings, "notes.txt.metadata.json", "not valid JSON")
    assert paths() == {"notes.txt"}


# --- a sidecar written while its file's event is being handled ---


def notification(kind: str, path: str) -> str:
    """One S3 notification body as S3 sends it (the sample event's, for `path`)."""
    name = "sqs_s3_object_created.json" if kind == "created" else "sqs_s3_object_removed.json"
    body = json.loads(load_event(name)["Records"][0]["body"])
    body["Records"][0]["s3"]["object"]["key"] = quote_plus(f"{DROP}default/{path}", safe="/")
    return json.dumps(body)


def sqs_batch(*bodies: str) -> dict:
    record = load_event("sqs_s3_object_created.json")["Records"][0]
    return {
        "Records": [
            {**copy.deepcopy(record), "body": b, "messageId": str(uuid.uuid4())} for b in bodies
        ]
    }


class WritesTheSidecarOnItsFirstMiss:
    """The function's S3 client, except that when the file's event finds no sidecar, another
    writer puts one at once and its event is handled (by another invocation) before the file's
    event goes on: it finds no document yet."""

    def __init__(self, s3, aws_env, sidecar_key: str, body: str) -> None:
        self._s3, self._aws, self._key, self._body = s3, aws_env, sidecar_key, body
        self.raced = False

    def get_object(self, **kwargs):
        try:
            return self._s3.get_object(**kwargs)
        except ClientError:
            if kwargs.get("Key") == self._key and not self.raced:
                self.raced = True
                self._aws.s3.put_object(Bucket=BUCKET, Key=self._key, Body=self._body.encode())
                path = self._key.removeprefix(f"{DROP}default/")
                assert lambda_entry.ingest_handler().handle(notification("created", path)) == []
            raise

    def __getattr__(self, name: str):
        return getattr(self._s3, name)


class DeletesTheSidecarAfterItsRead:
    """The function's S3 client, except that right after the file's event reads the sidecar,
    another writer deletes it and its event is handled before the file's event goes on."""

    def __init__(self, s3, aws_env, sidecar_key: str) -> None:
        self._s3, self._aws, self._key = s3, aws_env, sidecar_key
        self.raced = False

    def get_object(self, **kwargs):
        response = self._s3.get_object(**kwargs)
        if kwargs.get("Key") == self._key and not self.raced:
            self.raced = True
            body = response["Body"].read()
            self._aws.s3.delete_object(Bucket=BUCKET, Key=self._key)
            path = self._key.removeprefix(f"{DROP}default/")
            assert lambda_entry.ingest_handler().handle(notification("removed", path)) == []
            response = {**response, "Body": _Body(body)}
        return response

    def __getattr__(self, name: str):
        return getattr(self._s3, name)


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self, limit: int | None = None) -> bytes:
        return self._data if limit is None else self._data[:limit]

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


@pytest.mark.parametrize("change", ["written", "deleted"])
def test_a_sidecar_changed_while_its_file_is_handled_is_not_missed(aws_env, change):
    drop_ingest = load_function("ingest")  # no bucket notification: each event delivered here
    key = f"{DROP}default/race.txt.metadata.json"
    if change == "deleted":
        # The sidecar is read by the file's event, then deleted before the file is submitted.
        aws_env.s3.put_object(Bucket=BUCKET, Key=key, Body=sidecar(LEGAL).encode())
    aws_env.s3.put_object(Bucket=BUCKET, Key=f"{DROP}default/race.txt", Body=b"A race.")
    handler = lambda_entry.ingest_handler()
    real = handler.s3
    if change == "written":
        handler.s3 = raced = WritesTheSidecarOnItsFirstMiss(real, aws_env, key, sidecar(LEGAL))
    else:
        handler.s3 = raced = DeletesTheSidecarAfterItsRead(real, aws_env, key)
    try:
        result = drop_ingest.handler(
            sqs_batch(notification("created", "race.txt")), FakeLambdaContext()
        )
    finally:
        handler.s3 = real
    assert raced.raced and result == {"batchItemFailures": []}
    assert doc_at("race.txt").metadata == (CANONICAL_LEGAL if change == "written" else {})
