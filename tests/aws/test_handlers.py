"""The Lambda handlers fed the sample events in events/, against moto (S3, DynamoDB, SQS) and
osmem-server (OpenSearch), keyword-only (osmem does not run k-NN)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, quote, urlparse

import requests

from bunko import lambda_entry
from bunko.domain import DEFAULT_WORKSPACE_ID, DocumentStatus
from bunko.ports import SearchFilter
from bunko.services.ingest import Upload
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import load_event, sign_in, user_workspace
from tests.aws.stand_ins import BUCKET

DROPPED_KEY = "drop/default/manuals/検索 guide.md"
DROPPED_TEXT = "# 検索ガイド\n\n全文検索エンジンの使い方を説明します。Hybrid search in Bunko.\n"


def services():
    return lambda_entry.ingest_handler().services


def test_api_health_through_mangum(api):
    response = api.handler(load_event("api_get_health.json"), FakeLambdaContext())
    assert response["statusCode"] == 200
    body = json.loads(response["body"])
    # a stranger learns only that the server is up (issue 46): the counts need a token
    assert body["status"] == "ok" and "backend" not in body and "documents" not in body


def presign_event(token: str | None, body: dict | None = None) -> dict:
    event = load_event("api_post_uploads_presign.json")
    if token:
        event["headers"]["Authorization"] = f"Bearer {token}"
        event["multiValueHeaders"]["Authorization"] = [f"Bearer {token}"]
    if body is not None:
        event["body"] = json.dumps(body)
    return event


def test_anonymous_presign_is_refused(api_with_accounts):
    response = api_with_accounts.handler(presign_event(None), FakeLambdaContext())
    assert response["statusCode"] == 401
    assert json.loads(response["body"])["statusCode"] == 401


def test_presigned_upload(api_with_accounts, aws_env):
    api = api_with_accounts
    event = presign_event(sign_in(api))
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 200, response["body"]
    body = json.loads(response["body"])
    assert body["method"] == "PUT"
    # The key carries the caller's own workspace, never the default one.
    workspace_id = user_workspace("ada")
    assert workspace_id != DEFAULT_WORKSPACE_ID
    assert body["key"] == f"drop/{workspace_id}/manuals/guide.pdf"
    assert body["headers"]["Content-Type"] == "application/pdf"
    assert (
        body["headers"]["x-amz-meta-bunko-category"]
        == "%E3%83%9E%E3%83%8B%E3%83%A5%E3%82%A2%E3%83%AB"
    )
    url = urlparse(body["url"])
    assert BUCKET in url.netloc + url.path
    assert "X-Amz-Signature" in parse_qs(url.query)
    assert body["expiresIn"] == 900


def test_presign_refuses_files_over_the_limit(api_with_accounts):
    api = api_with_accounts
    event = presign_event(sign_in(api), {"path": "big.bin", "size": 10**12})
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 413
    assert json.loads(response["body"])["statusCode"] == 413


def test_s3_drop_is_indexed_and_redelivery_adds_nothing(ingest, aws_env):
    aws_env.s3.put_object(Bucket=BUCKET, Key=DROPPED_KEY, Body=DROPPED_TEXT.encode())
    event = load_event("sqs_s3_object_created.json")
    assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}
    store = services().metadata
    doc = store.get_document_by_path(DEFAULT_WORKSPACE_ID, "manuals/検索 guide.md")
    assert doc is not None
    assert doc.status is DocumentStatus.COMPLETED
    assert doc.category == "manuals"
    assert doc.source == "s3"
    chunks = store.count_chunks(DEFAULT_WORKSPACE_ID)
    index = services().index
    entries = index.count(DEFAULT_WORKSPACE_ID)
    assert chunks >= 1 and entries == chunks
    hits = index.keyword_search("検索", SearchFilter(DEFAULT_WORKSPACE_ID), 5)
    assert {h.document_id for h in hits} == {doc.id}

    # The same notification again (SQS delivers at least once): no new revision or chunks.
    assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}
    again = store.get_document(DEFAULT_WORKSPACE_ID, doc.id)
    assert again.revision == doc.revision
    assert store.count_chunks(DEFAULT_WORKSPACE_ID) == chunks
    assert index.count(DEFAULT_WORKSPACE_ID) == entries


def test_changed_object_makes_a_new_revision(ingest, aws_env):
    event = load_event("sqs_s3_object_created.json")
    aws_env.s3.put_object(Bucket=BUCKET, Key=DROPPED_KEY, Body=DROPPED_TEXT.encode())
    ingest.handler(event, FakeLambdaContext())
    aws_env.s3.put_object(Bucket=BUCKET, Key=DROPPED_KEY, Body="新しい内容です。".encode())
    ingest.handler(event, FakeLambdaContext())
    doc = services().metadata.get_document_by_path(DEFAULT_WORKSPACE_ID, "manuals/検索 guide.md")
    assert doc.revision == 2
    assert doc.status is DocumentStatus.COMPLETED
    filters = SearchFilter(DEFAULT_WORKSPACE_ID)
    assert services().index.keyword_search("全文検索エンジン", filters, 5) == []
    assert [h.document_id for h in services().index.keyword_search("内容", filters, 5)] == [doc.id]


def test_removed_object_removes_the_document(ingest, aws_env):
    aws_env.s3.put_object(Bucket=BUCKET, Key=DROPPED_KEY, Body=DROPPED_TEXT.encode())
    ingest.handler(load_event("sqs_s3_object_created.json"), FakeLambdaContext())
    removed = load_event("sqs_s3_object_removed.json")
    # Out of order: the delete notification arrives while the key exists again → kept.
    ingest.handler(removed, FakeLambdaContext())
    store = services().metadata
    assert store.get_document_by_path(DEFAULT_WORKSPACE_ID, "manuals/検索 guide.md") is not None
    aws_env.s3.delete_object(Bucket=BUCKET, Key=DROPPED_KEY)
    assert ingest.handler(removed, FakeLambdaContext()) == {"batchItemFailures": []}
    assert store.get_document_by_path(DEFAULT_WORKSPACE_ID, "manuals/検索 guide.md") is None
    assert store.count_chunks(DEFAULT_WORKSPACE_ID) == 0
    assert services().index.count(DEFAULT_WORKSPACE_ID) == 0


def test_removing_a_drop_never_takes_what_another_source_owns(ingest, aws_env):
    """Issue 48: a removed key is the library's one mirror rule for that key. A file uploaded
    by hand at the dropped key's path (the drop made it a new revision of that document), and
    a presigned upload whose drop copy goes, stay; the drop's own document goes."""
    store, path = services().metadata, "manuals/検索 guide.md"
    hand = services().ingest.submit(
        Upload(DEFAULT_WORKSPACE_ID, b"typed by hand", path=path, source="upload")
    )
    presigned_key = "drop/default/big/report.md"
    aws_env.s3.put_object(
        Bucket=BUCKET, Key=presigned_key, Body=b"# Report", Metadata={"bunko-presigned": "1"}
    )
    own_key = "drop/default/manuals/own.md"
    aws_env.s3.put_object(Bucket=BUCKET, Key=own_key, Body=b"# Own\n\nthe drop's own file")
    aws_env.s3.put_object(Bucket=BUCKET, Key=DROPPED_KEY, Body=DROPPED_TEXT.encode())
    for key in (DROPPED_KEY, presigned_key, own_key):
        assert ingest.handler(s3_event("sqs_s3_object_created.json", key), FakeLambdaContext()) == {
            "batchItemFailures": []
        }
    dropped = store.get_document_by_path(DEFAULT_WORKSPACE_ID, path)
    assert (dropped.id, dropped.revision, dropped.source) == (hand.id, 2, "upload")
    report = store.get_document_by_path(DEFAULT_WORKSPACE_ID, "big/report.md")
    assert report.source == "presign"

    for key in (DROPPED_KEY, presigned_key, own_key):
        aws_env.s3.delete_object(Bucket=BUCKET, Key=key)
        assert ingest.handler(s3_event("sqs_s3_object_removed.json", key), FakeLambdaContext()) == {
            "batchItemFailures": []
        }
    assert {d.path for d in store.iter_documents(DEFAULT_WORKSPACE_ID)} == {path, "big/report.md"}


def s3_event(name: str, key: str) -> dict:
    """The sample S3 notification `name`, for `key`."""
    event = load_event(name)
    body = json.loads(event["Records"][0]["body"])
    body["Records"][0]["s3"]["object"]["key"] = quote(key)
    event["Records"][0]["body"] = json.dumps(body)
    return event


def test_s3_test_event_is_acknowledged(ingest):
    assert ingest.handler(load_event("sqs_s3_test_event.json"), FakeLambdaContext()) == {
        "batchItemFailures": []
    }


def test_api_upload_job_goes_through_sqs_to_the_ingest_function(api, ingest, aws_env):
    # The API's ingest service queues a job message on SQS; the ingest function indexes it.
    web = lambda_entry.api_app().state.services
    doc = web.ingest.submit_text(
        DEFAULT_WORKSPACE_ID, path="notes/agent.txt", content="エージェントが書いたメモです。"
    )
    [message] = aws_env.receive_all(aws_env.queue_url)
    event = load_event("sqs_ingest_job.json")
    event["Records"][0]["body"] = message["Body"]
    assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}
    done = services().metadata.get_document(DEFAULT_WORKSPACE_ID, doc.id)
    assert done.status is DocumentStatus.COMPLETED
    assert done.chunk_count >= 1


def test_failed_file_ends_failed_and_its_message_in_the_dead_letter_queue(
    ingest, aws_env, monkeypatch
):
    # each failed delivery comes back at once here, not after a minute (test_ingest_retry)
    monkeypatch.setenv("BUNKO_INGEST_RETRY_DELAYS", "[0, 0]")
    key = "drop/default/broken.pdf"
    aws_env.s3.put_object(Bucket=BUCKET, Key=key, Body=b"%PDF-1.7 this is not a real pdf")
    template = load_event("sqs_s3_object_created.json")
    body = json.loads(template["Records"][0]["body"])
    body["Records"][0]["s3"]["object"]["key"] = key
    aws_env.sqs.send_message(QueueUrl=aws_env.queue_url, MessageBody=json.dumps(body))
    # Play the Lambda poller: receive, invoke, delete what succeeded, until the queue's
    # redrive policy (maxReceiveCount 3) moves the message to the dead-letter queue.
    failures = 0
    for _ in range(5):
        batch = aws_env.sqs.receive_message(
            QueueUrl=aws_env.queue_url, VisibilityTimeout=0, MaxNumberOfMessages=10
        ).get("Messages", [])
        if not batch:
            break
        event = {
            "Records": [
                dict(
                    template["Records"][0],
                    messageId=m["MessageId"],
                    receiptHandle=m["ReceiptHandle"],
                    body=m["Body"],
                )
                for m in batch
            ]
        }
        result = ingest.handler(event, FakeLambdaContext())
        failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
        failures += len(failed)
        for m in batch:
            if m["MessageId"] not in failed:
                aws_env.sqs.delete_message(
                    QueueUrl=aws_env.queue_url, ReceiptHandle=m["ReceiptHandle"]
                )
    assert failures == 3
    [dead] = aws_env.receive_all(aws_env.dlq_url)
    assert json.loads(dead["Body"])["Records"][0]["s3"]["object"]["key"] == key
    doc = services().metadata.get_document_by_path(DEFAULT_WORKSPACE_ID, "broken.pdf")
    assert doc.status is DocumentStatus.FAILED
    assert doc.error


def test_unknown_workspace_fails_the_record(ingest, aws_env):
    key = "drop/no-such-workspace/a.txt"
    aws_env.s3.put_object(Bucket=BUCKET, Key=key, Body=b"text")
    event = load_event("sqs_s3_object_created.json")
    body = json.loads(event["Records"][0]["body"])
    body["Records"][0]["s3"]["object"]["key"] = key
    event["Records"][0]["body"] = json.dumps(body)
    result = ingest.handler(event, FakeLambdaContext())
    assert [f["itemIdentifier"] for f in result["batchItemFailures"]] == [
        event["Records"][0]["messageId"]
    ]


def test_presigned_put_lands_as_a_drop_with_its_category(api_with_accounts, ingest, aws_env):
    api = api_with_accounts
    event = presign_event(
        sign_in(api),
        {
            "path": "資料/報告.md",
            "category": "社内資料",
            "contentType": "text/markdown",
            "size": len("社内の報告です。".encode()),
        },
    )
    upload = json.loads(api.handler(event, FakeLambdaContext())["body"])
    # The client's PUT, signed for exactly these headers (moto answers for S3).
    response = requests.put(
        upload["url"], data="社内の報告です。".encode(), headers=upload["headers"], timeout=10
    )
    assert response.status_code == 200
    # tagged as signed: the bucket's lifecycle rule expires presigned drops (issue 47, point 5)
    tags = aws_env.s3.get_object_tagging(Bucket=BUCKET, Key=upload["key"])["TagSet"]
    assert tags == [{"Key": "bunko-presigned", "Value": "1"}]
    created = load_event("sqs_s3_object_created.json")
    body = json.loads(created["Records"][0]["body"])
    body["Records"][0]["s3"]["object"]["key"] = quote(upload["key"])
    created["Records"][0]["body"] = json.dumps(body)
    assert ingest.handler(created, FakeLambdaContext()) == {"batchItemFailures": []}
    # Indexed into the signed-in user's own workspace.
    doc = services().metadata.get_document_by_path(user_workspace("ada"), "資料/報告.md")
    assert doc.category == "社内資料"  # from the signed metadata, not the folder
    assert services().metadata.get_document_by_path(DEFAULT_WORKSPACE_ID, "資料/報告.md") is None
    assert doc.status is DocumentStatus.COMPLETED
