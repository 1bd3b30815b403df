"""IngestEventHandler: one SQS message of the ingest queue → the ingest services.

The queue carries three kinds of message: Bunko ingest jobs (sent by the API when a file is
uploaded), S3 event notifications for the drop prefix, and the steps of a workspace's change
of embedding model (services/embedding/model_build_steps.py). A drop is submitted to the ingest
service (idempotent on content: a redelivered event or an unchanged object adds nothing) and
indexed in the same invocation. Out-of-order events are settled by the bucket's present
state: a "created" whose object is gone, or a "removed" whose key exists again, is skipped.
A dropped object's metadata may carry the upload's options (a presigned upload signs them:
category, chunkSize, chunkOverlap, mode), applied as /upload applies its form fields (a
mode chosen is kept on the document, as /upload keeps it).

A message whose document ends `failed` raises IngestFailed, so SQS delivers it again and,
after the queue's maxReceiveCount, moves it to the dead-letter queue; the document keeps its
error in metadata.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from bunko.adapters.aws.s3_drops import (
    DropEvent,
    drop_options,
    locate,
    parse_notifications,
)
from bunko.adapters.aws.sqs_queue import parse_build_step, parse_job
from bunko.adapters.collecting_queue import CollectingQueue
from bunko.domain import Document, DocumentStatus
from bunko.errors import BunkoError, NotFoundError
from bunko.services.embedding import TimeLeft
from bunko.services.ingest import Upload

if TYPE_CHECKING:
    from bunko.bootstrap import Services

log = logging.getLogger(__name__)
SOURCE = "s3"
_MISSING = {"404", "NoSuchKey", "NotFound"}


class IngestFailed(Exception):
    """Processing ended `failed`; raised so the message is retried, then dead-lettered."""


class IngestEventHandler:
    def __init__(
        self,
        *,
        services: Services,
        collector: CollectingQueue,
        s3: Any,
        drop_prefix: str,
    ) -> None:
        self.services = services
        self.collector = collector
        self.s3 = s3
        self.drop_prefix = drop_prefix

    def handle(self, body: str, *, time_left: TimeLeft = lambda: 900.0) -> list[Document]:
        """Process one message body; returns the documents it indexed or deleted.
        `time_left`: the invocation's seconds left (a model build step stops in time)."""
        message = json.loads(body)
        job = parse_job(message)
        if job is not None:
            return _finished(self.services.pipeline.process([job]))
        step = parse_build_step(message)
        if step is not None:
            switch = self.services.model_switch
            if switch is None or switch.steps is None:
                raise ValueError("a model build step, but this function builds no models")
            switch.steps.step(step.workspace_id, step.model, step.after, time_left)
            return []
        events = parse_notifications(message)
        if events is None:
            raise ValueError(f"not an ingest job or an S3 notification: {body[:200]}")
        done: list[Document] = []
        for event in events:
            done += self._drop(event)
        return done

    def _drop(self, event: DropEvent) -> list[Document]:
        target = locate(event.key, drop_prefix=self.drop_prefix)
        if target is None:
            log.info("ignoring %s", event.key)
            return []
        if self.services.metadata.get_workspace(target.workspace_id) is None:
            raise NotFoundError(f"no workspace {target.workspace_id} for {event.key}")
        ingest = self.services.ingest
        if event.kind == "removed":
            if self._head(event) is not None:
                return []  # the key was written again after this delete
            removed = ingest.delete_by_path(target.workspace_id, target.path)
            return [removed] if removed else []
        found = self._read(event)
        if found is None:
            return []  # deleted again before we got here; its remove event follows
        data, metadata = found
        options = drop_options(metadata)
        ingest.submit(
            Upload(
                target.workspace_id,
                data,
                path=target.path,
                category=options.category or target.category,
                chunk_size=options.chunk_size,
                chunk_overlap=options.chunk_overlap,
                source=SOURCE,
                mode=options.mode or None,  # a presigned upload's choice, kept on the document
            )
        )
        jobs = self.collector.take()
        return _finished(self.services.pipeline.process(jobs)) if jobs else []

    def _head(self, event: DropEvent) -> dict[str, Any] | None:
        try:
            return self.s3.head_object(Bucket=event.bucket, Key=event.key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                return None
            raise

    def _read(self, event: DropEvent) -> tuple[bytes, dict[str, str]] | None:
        try:
            response = self.s3.get_object(Bucket=event.bucket, Key=event.key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                return None
            raise
        try:  # refuse by the declared length, before the body is read into memory
            self.services.uploads.size(response["ContentLength"], what=event.key)
        except BunkoError:
            response["Body"].close()
            raise
        return response["Body"].read(), response.get("Metadata", {})


def _finished(documents: list[Document]) -> list[Document]:
    failed = [d for d in documents if d.status is DocumentStatus.FAILED]
    if failed:
        raise IngestFailed("; ".join(f"{d.path}: {d.error}" for d in failed))
    return documents
