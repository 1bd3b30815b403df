"""SqsIngestQueue under moto: a job round-trips through the queue."""

from __future__ import annotations

import json

from bunko.adapters.aws.sqs_queue import SqsIngestQueue, parse_job
from bunko.adapters.collecting_queue import CollectingQueue
from bunko.ports import IngestJob


def test_job_roundtrip(aws):
    queue = SqsIngestQueue(aws.sqs, queue_url=aws.queue_url)
    job = IngestJob(workspace_id="ws", document_id="doc", revision=3)
    queue.enqueue(job)
    [message] = aws.receive_all(aws.queue_url)
    assert parse_job(json.loads(message["Body"])) == job


def test_other_bodies_are_not_jobs():
    assert parse_job({"Records": []}) is None


def test_collecting_queue_hands_jobs_over_once():
    queue = CollectingQueue()
    job = IngestJob("ws", "doc", 1)
    queue.enqueue(job)
    assert queue.take() == [job]
    assert queue.take() == []
