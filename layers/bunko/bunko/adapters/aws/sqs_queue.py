"""SqsIngestQueue: the IngestQueue on SQS. The ingest function consumes the same queue, which
also carries S3 event notifications; `parse_job` tells the two apart."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bunko.ports import IngestJob

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

JOB_TYPE = "bunko.ingest.job"


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


class SqsIngestQueue:
    def __init__(self, client: SQSClient, *, queue_url: str) -> None:
        self.client = client
        self.queue_url = queue_url

    def enqueue(self, job: IngestJob) -> None:
        self.client.send_message(QueueUrl=self.queue_url, MessageBody=job_message(job))
