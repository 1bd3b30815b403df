"""SqsIngestQueue: the IngestQueue on SQS. The ingest function consumes the same queue, which
also carries S3 event notifications, libraries' moves and the steps of a workspace's change of embedding model
(services/embedding/model_build_steps.py); `parse_job` and `parse_build_step` tell them apart."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bunko.ports import IngestJob

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

JOB_TYPE = "bunko.ingest.job"
BUILD_TYPE = "bunko.model.build"
MOVE_TYPE = "bunko.move"  # a library's export or import (services/moving/jobs.py)


@dataclass(frozen=True)
class BuildStep:
    workspace_id: str
    model: str  # the model config being built
    after: str | None  # the last document the previous step finished, None: the first step


def job_message(job: IngestJob) -> str:
    return json.dumps(
        {
            "type": JOB_TYPE,
            "workspace_id": job.workspace_id,
            "document_id": job.document_id,
            "revision": job.revision,
            "mode": job.mode,
        }
    )


def parse_job(body: dict[str, Any]) -> IngestJob | None:
    """The job in a decoded message body, or None if the body is something else."""
    if body.get("type") != JOB_TYPE:
        return None
    return IngestJob(
        workspace_id=str(body["workspace_id"]),
        document_id=str(body["document_id"]),
        revision=int(body["revision"]),
        mode="precise" if body.get("mode") == "precise" else "fast",
    )


def parse_build_step(body: dict[str, Any]) -> BuildStep | None:
    if body.get("type") != BUILD_TYPE:
        return None
    after = body.get("after")
    return BuildStep(
        str(body["workspace_id"]), str(body["model"]), None if after is None else str(after)
    )


class SqsIngestQueue:
    def __init__(self, client: SQSClient, *, queue_url: str) -> None:
        self.client = client
        self.queue_url = queue_url

    def enqueue(self, job: IngestJob) -> None:
        self.client.send_message(QueueUrl=self.queue_url, MessageBody=job_message(job))

    def send_build_step(self, workspace_id: str, model: str, after: str | None) -> None:
        body = {"type": BUILD_TYPE, "workspace_id": workspace_id, "model": model, "after": after}
        self.client.send_message(QueueUrl=self.queue_url, MessageBody=json.dumps(body))


def parse_move(body: dict[str, Any]) -> str | None:
    """The move job's id in a decoded message body, or None if the body is something else."""
    if body.get("type") != MOVE_TYPE:
        return None
    return str(body["job"])


class SqsMoveRunner:
    """A move runs in the ingest function (up to its 10 minutes; a longer import goes on in
    the next message): the API only queues it."""

    def __init__(self, client: SQSClient, *, queue_url: str) -> None:
        self.client, self.queue_url = client, queue_url

    def start(self, job_id: str, *, delay: int = 0) -> None:
        self.client.send_message(
            QueueUrl=self.queue_url,
            MessageBody=json.dumps({"type": MOVE_TYPE, "job": job_id}),
            DelaySeconds=delay,
        )
