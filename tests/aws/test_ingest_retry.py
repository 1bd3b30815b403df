"""A failed ingest record comes back in minutes, not after the queue's hour-long visibility
timeout (issue 30: a transient failure delayed a file an hour per try)."""

from __future__ import annotations

import json

from bunko.adapters.aws.settings import AwsSettings
from bunko.adapters.aws.sqs_retry import RETRY_DELAYS, SqsRetries, retry_delay
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import load_event

QUEUE_VISIBILITY = 3600  # the stack's: six times the ingest function's 10 minutes


def delivered(aws_env, body: str) -> dict:
    """`body` sent and received once, as the Lambda poller receives it (an hour invisible)."""
    aws_env.sqs.send_message(QueueUrl=aws_env.queue_url, MessageBody=body)
    [message] = aws_env.sqs.receive_message(
        QueueUrl=aws_env.queue_url, VisibilityTimeout=QUEUE_VISIBILITY,
        AttributeNames=["ApproximateReceiveCount"],
    )["Messages"]  # fmt: skip
    template = load_event("sqs_s3_object_created.json")["Records"][0]
    return {"Records": [dict(
        template, messageId=message["MessageId"], receiptHandle=message["ReceiptHandle"],
        body=message["Body"], attributes={"ApproximateReceiveCount": "1"},
    )]}  # fmt: skip


def visible(aws_env) -> list[dict]:
    return aws_env.sqs.receive_message(QueueUrl=aws_env.queue_url, VisibilityTimeout=0).get(
        "Messages", []
    )


def test_the_wait_grows_with_each_delivery_and_stays_under_the_queues():
    assert [retry_delay(n) for n in (1, 2, 3, 9)] == [60, 300, 300, 300]
    assert retry_delay(0) == 60  # a record without the attribute counts as the first
    assert max(RETRY_DELAYS) < QUEUE_VISIBILITY
    assert retry_delay(2, (5,)) == 5  # past the given waits: the last one


def test_the_waits_are_a_setting_with_the_same_default(monkeypatch):
    assert AwsSettings().ingest_retry_delays == RETRY_DELAYS
    monkeypatch.setenv("BUNKO_INGEST_RETRY_DELAYS", "[0, 30]")
    assert AwsSettings().ingest_retry_delays == (0, 30)


def test_a_failed_record_is_visible_again_after_the_retry_delay(ingest, aws_env, monkeypatch):
    monkeypatch.setenv("BUNKO_INGEST_RETRY_DELAYS", "[0, 0]")  # "after the delay" = now
    body = load_event("sqs_s3_object_created.json")["Records"][0]["body"]
    records = json.loads(body)
    records["Records"][0]["s3"]["object"]["key"] = "drop/no-such-workspace/a.txt"
    event = delivered(aws_env, json.dumps(records))
    assert visible(aws_env) == []  # in flight: the poller holds it for the hour
    result = ingest.handler(event, FakeLambdaContext())
    assert len(result["batchItemFailures"]) == 1
    [again] = visible(aws_env)  # back without waiting out the hour
    assert again["MessageId"] == event["Records"][0]["messageId"]


def test_a_record_that_succeeded_is_left_to_the_poller(ingest, aws_env, monkeypatch):
    monkeypatch.setenv("BUNKO_INGEST_RETRY_DELAYS", "[0, 0]")
    event = delivered(aws_env, json.dumps({"Event": "s3:TestEvent", "Bucket": "b"}))
    assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}
    assert visible(aws_env) == []  # still in flight until the poller deletes it


def test_an_expired_receipt_does_not_fail_the_batch(aws_env, caplog):
    retries = SqsRetries(aws_env.sqs, queue_url=aws_env.queue_url)
    record = {"messageId": "m1", "receiptHandle": "not-a-receipt", "attributes": {}}
    retries.retry_sooner([record], {"m1"})  # logged, not raised
    assert "could not schedule the retry of m1" in caplog.text
