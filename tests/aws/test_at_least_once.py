"""Exactly-once effect under at-least-once delivery (issue 13, point 3), through the real
ingest Lambda handler on moto (S3, DynamoDB, SQS) and the OpenSearch stand-in: the same S3
event twice, an update delivered before the create, a delete racing an update, and a Lambda
that dies mid-batch (after the index write, before the metadata write) and gets the whole
batch again. The final state always equals one clean delivery of the bucket's last state."""

from __future__ import annotations

import copy
import json
import uuid
from urllib.parse import quote_plus

import pytest

from bunko import lambda_entry
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.ports import SearchFilter
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import load_event
from tests.aws.stand_ins import BUCKET

TEXTS = {
    "notes/a.md": "Alpha notes about the harbour lantern.",
    "notes/b.md": "Beta notes about the granite meadow.",
    "notes/c.md": "Gamma notes about the copper willow.",
}


def services():
    return lambda_entry.ingest_handler().services


def s3_event(*changes: tuple[str, str]) -> dict:
    """An SQS batch with one S3 notification per (kind, path) in the default workspace."""
    created = load_event("sqs_s3_object_created.json")["Records"][0]
    removed = load_event("sqs_s3_object_removed.json")["Records"][0]
    records = []
    for kind, path in changes:
        record = copy.deepcopy(created if kind == "created" else removed)
        body = json.loads(record["body"])
        body["Records"][0]["s3"]["object"]["key"] = quote_plus(f"drop/default/{path}", safe="/")
        record["body"], record["messageId"] = json.dumps(body), str(uuid.uuid4())
        records.append(record)
    return {"Records": records}


def deliver(ingest, *changes: tuple[str, str]) -> dict:
    return ingest.handler(s3_event(*changes), FakeLambdaContext())


def put(aws_env, path: str, text: str) -> None:
    aws_env.s3.put_object(Bucket=BUCKET, Key=f"drop/default/{path}", Body=text.encode())


def state() -> dict:
    """What a reader sees: documents with their revision, status and chunk texts; index size."""
    s = services()
    docs = {
        d.path: (d.revision, str(d.status), [c.content for c in s.metadata.get_chunks(WS, d.id)])
        for d in s.metadata.iter_documents(WS)
    }
    return {"docs": docs, "chunks": s.metadata.count_chunks(WS), "index": s.index.count(WS)}


def clean(*texts: tuple[str, str]) -> dict:
    docs = {path: (1, "completed", [text]) for path, text in texts}
    return {"docs": docs, "chunks": len(texts), "index": len(texts)}


def test_the_same_event_twice_is_one_delivery(ingest, aws_env):
    put(aws_env, "notes/a.md", TEXTS["notes/a.md"])
    for _ in range(2):
        assert deliver(ingest, ("created", "notes/a.md")) == {"batchItemFailures": []}
    assert state() == clean(("notes/a.md", TEXTS["notes/a.md"]))


def test_an_update_delivered_before_the_create(ingest, aws_env):
    put(aws_env, "notes/a.md", "first words")
    put(aws_env, "notes/a.md", "second words win")
    # The update's notification arrives first, the create's after it: both read the bucket.
    deliver(ingest, ("created", "notes/a.md"))
    deliver(ingest, ("created", "notes/a.md"))
    assert state() == clean(("notes/a.md", "second words win"))


@pytest.mark.parametrize("order", ["removed-first", "created-first"])
def test_a_delete_racing_an_update(ingest, aws_env, order):
    put(aws_env, "notes/a.md", "kept for a while")
    deliver(ingest, ("created", "notes/a.md"))
    put(aws_env, "notes/a.md", "updated just before the delete")
    aws_env.s3.delete_object(Bucket=BUCKET, Key="drop/default/notes/a.md")
    changes = [("removed", "notes/a.md"), ("created", "notes/a.md")]
    for change in changes if order == "removed-first" else changes[::-1]:
        assert deliver(ingest, change) == {"batchItemFailures": []}
    assert state() == {"docs": {}, "chunks": 0, "index": 0}


class LambdaTimeout(BaseException):
    """Not an Exception: nothing in the handler may catch it, as nothing runs after a timeout."""


class DiesOnce:
    """The metadata store, except that the first chunk write (one document's, or the
    pipeline's group write) ends the invocation as a Lambda timeout would: after the index
    write, before the metadata write."""

    def __init__(self, store) -> None:
        self._store, self.died = store, False

    def _die_once(self) -> None:
        if not self.died:
            self.died = True
            raise LambdaTimeout("Task timed out after 900.00 seconds")

    def replace_chunks(self, *args, **kwargs):
        self._die_once()
        return self._store.replace_chunks(*args, **kwargs)

    def write_documents(self, writes):
        if any(w.chunks is not None for w in writes):
            self._die_once()
        return self._store.write_documents(writes)

    def __getattr__(self, name: str):
        return getattr(self._store, name)


def test_a_lambda_that_dies_mid_batch_then_gets_it_again(ingest, aws_env):
    for path, text in TEXTS.items():
        put(aws_env, path, text)
    pipeline = services().pipeline
    real = pipeline.metadata
    pipeline.metadata = DiesOnce(real)
    try:
        with pytest.raises(LambdaTimeout):
            deliver(ingest, *[("created", path) for path in TEXTS])
    finally:
        pipeline.metadata = real
    assert any(d.status is DocumentStatus.INDEXING for d in services().metadata.iter_documents(WS))
    # SQS redelivers the whole batch (an invocation that timed out reports nothing).
    assert deliver(ingest, *[("created", path) for path in TEXTS]) == {"batchItemFailures": []}
    assert state() == clean(*TEXTS.items())
    hits = services().index.keyword_search("harbour", SearchFilter(WS), 10)
    assert len(hits) == 1
    for doc in services().metadata.iter_documents(WS):
        assert doc.status is DocumentStatus.COMPLETED
