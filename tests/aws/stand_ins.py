"""Local stand-ins for the AWS services: moto for S3, DynamoDB and SQS.

`moto_aws()` starts one mocked account with the bucket, the table and the queues the CDK
stack would create (the table from the same schema module the stack uses).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend

from bunko.deploy_schema import create_table_kwargs

REGION = "us-east-1"
BUCKET = "bunko-test"
TABLE = "bunko-test"


@dataclass
class MotoAws:
    s3: Any
    dynamodb: Any
    sqs: Any
    queue_url: str
    dlq_url: str

    def receive_all(self, url: str) -> list[dict]:
        messages = []
        while True:
            batch = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
            found = batch.get("Messages", [])
            if not found:
                return messages
            messages.extend(found)


@contextmanager
def moto_aws() -> Iterator[MotoAws]:
    saved = {
        k: os.environ.get(k)
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_REGION")
    }
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION=REGION,
        AWS_REGION=REGION,
    )
    try:
        with mock_aws(), serialised_dynamodb_writes():
            s3 = boto3.client("s3", region_name=REGION)
            s3.create_bucket(Bucket=BUCKET)
            dynamodb = boto3.client("dynamodb", region_name=REGION)
            dynamodb.create_table(**create_table_kwargs(TABLE))
            sqs = boto3.client("sqs", region_name=REGION)
            dlq_url = sqs.create_queue(QueueName="bunko-ingest-dlq")["QueueUrl"]
            dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])[
                "Attributes"
            ]["QueueArn"]
            queue_url = sqs.create_queue(
                QueueName="bunko-ingest",
                Attributes={
                    "RedrivePolicy": json.dumps(
                        {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"}
                    )
                },
            )["QueueUrl"]
            yield MotoAws(s3=s3, dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# DynamoDB applies each write, a transaction included, atomically: its condition is checked and
# its items written as one step, whatever other writers do. moto checks, then writes, in
# Python, and undoes a cancelled transaction by restoring a copy of the whole table, so two
# threads (the contract tests' races) can both pass one condition, or one undo can erase the
# other's write. One lock restores the service's guarantee; reads stay unlocked.
_DYNAMODB_WRITES = ("put_item", "update_item", "delete_item", "transact_write_items")


@contextmanager
def serialised_dynamodb_writes() -> Iterator[None]:
    from unittest import mock

    lock = threading.RLock()

    def locked(write):
        @functools.wraps(write)
        def under_lock(*args, **kwargs):
            with lock:
                return write(*args, **kwargs)

        return under_lock

    with ExitStack() as patches:
        for name in _DYNAMODB_WRITES:
            original = getattr(DynamoDBBackend, name)
            patches.enter_context(mock.patch.object(DynamoDBBackend, name, locked(original)))
        yield


def notify_queue(aws_env, prefix: str = "drop/") -> None:
    """The bucket notification the stack configures: drops → the ingest queue."""
    arn = aws_env.sqs.get_queue_attributes(QueueUrl=aws_env.queue_url, AttributeNames=["QueueArn"])
    aws_env.s3.put_bucket_notification_configuration(
        Bucket=BUCKET,
        NotificationConfiguration={
            "QueueConfigurations": [{
                "QueueArn": arn["Attributes"]["QueueArn"],
                "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],
                "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": prefix}]}},
            }]
        },
    )  # fmt: skip


class Tapped:
    """A client with some of its calls replaced (a spy, a refusal), given to the adapter at
    construction as the real client would be; every other attribute is the client's own.
    `indices` replaces calls of `client.indices` the same way."""

    def __init__(self, client: Any, *, indices: dict[str, Any] | None = None, **calls: Any):
        self.wrapped = client
        self.calls = calls
        if indices:
            self.indices = Tapped(client.indices, **indices)

    def __getattr__(self, name: str) -> Any:
        calls = self.__dict__["calls"]
        return calls[name] if name in calls else getattr(self.__dict__["wrapped"], name)


@contextmanager
def after_each_call(
    client: Any, operation: str, picks: Callable[[dict], bool], then: Callable[[dict], None]
) -> Iterator[None]:
    """Run `then(parsed response)` after each `operation` call of `client` whose parameters
    `picks` accepts, through botocore's own event hooks: a race lands between two requests of
    the code under test without patching it (the parameters are seen before the call, the
    response after, in one request's context)."""
    flag = f"bunko-picked-{id(then)}"

    def mark(params: dict, context: dict, **_: Any) -> None:
        context[flag] = picks(params)

    def after(parsed: dict, context: dict, **_: Any) -> None:
        if context.get(flag):
            then(parsed)

    events = client.meta.events
    service = client.meta.service_model.service_id.hyphenize()
    events.register(f"provide-client-params.{service}.{operation}", mark)
    events.register(f"after-call.{service}.{operation}", after)
    try:
        yield
    finally:
        events.unregister(f"provide-client-params.{service}.{operation}", mark)
        events.unregister(f"after-call.{service}.{operation}", after)
