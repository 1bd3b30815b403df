"""IngestEventHandler: one SQS message of the ingest queue → the ingest services.

The queue carries three kinds of message: Bunko ingest jobs (sent by the API when a file is
uploaded), S3 event notifications for the drop prefix, and the steps of a workspace's change
of embedding model (services/embedding/model_build_steps.py). A drop is submitted to the ingest
service (idempotent on content: a redelivered event or an unchanged object adds nothing) and
indexed in the same invocation. Out-of-order events are settled by the bucket's present
state: a "created" whose object is gone, or a "removed" whose key exists again, is skipped.
A key's first segment under the drop prefix picks the library: `default` (the drop folder's
library, as an admin chose it), a sub-folder an admin mapped to a library, or a library's id
(adapters/aws/s3/drops.py `locate`, domain/drop_routes.py). A dropped object's metadata may carry the upload's options (a presigned upload signs them:
category, chunkSize, chunkOverlap, mode), applied as /upload applies its form fields (a
mode chosen is kept on the document, as /upload keeps it).

A dropped file's metadata comes from its sidecar, the object `<key>.metadata.json` beside it
(drops/sidecars.py), and a Markdown file's front matter (domain/front_matter.py); with neither,
its document keeps the metadata it has. A sidecar is never a document: its events give the
document of the object beside it (when both exist) the metadata they give now, without the
file being indexed again; a file that comes later reads it. A file's event reads the sidecar
again after its submit, so a sidecar written or deleted meanwhile (its own event may have
found no document yet) is not missed.

A message whose document ends `failed` raises IngestFailed, so SQS delivers it again and,
after the queue's maxReceiveCount, moves it to the dead-letter queue; the document keeps its
error in metadata.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from bunko.adapters.aws.s3.drops import (
    DropEvent,
    drop_options,
    locate,
    parse_notifications,
)
from bunko.adapters.aws.sqs_queue import parse_build_step, parse_job
from bunko.adapters.collecting_queue import CollectingQueue
from bunko.domain import Document, DocumentStatus
from bunko.domain.drop_routes import DropRoutes
from bunko.domain.front_matter import MAX_FRONT_MATTER_BYTES
from bunko.domain.sources import PRESIGNED, S3_DROP
from bunko.drops.sidecars import (
    MAX_SIDECAR_BYTES,
    dropped_metadata,
    is_sidecar,
    log_refused,
    sidecar_name,
    subject_name,
)
from bunko.errors import BunkoError, NotFoundError, PayloadTooLargeError, ValidationError
from bunko.services.embedding import TimeLeft
from bunko.services.ingest import Upload, normalise_path

if TYPE_CHECKING:
    from bunko.bootstrap import Services

log = logging.getLogger(__name__)
SOURCE = S3_DROP
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
        drop_routes: Callable[[], DropRoutes] = DropRoutes,
    ) -> None:
        self.services = services
        self.collector = collector
        self.s3 = s3
        self.drop_prefix = drop_prefix
        # What an admin chose (PUT /drop-folder), read at each event: a choice counts at once.
        self.drop_routes = drop_routes

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
        target = locate(event.key, drop_prefix=self.drop_prefix, routes=self.drop_routes())
        if target is None:
            log.info("ignoring %s", event.key)
            return []
        if not self.services.library.has_library(target.workspace_id):
            raise NotFoundError(f"no workspace {target.workspace_id} for {event.key}")
        if is_sidecar(target.path):
            self._sidecar_changed(event.bucket, subject_name(event.key))
            return []
        ingest = self.services.ingest
        if event.kind == "removed":
            if self._head(event.bucket, event.key) is not None:
                return []  # the key was written again after this delete
            # The library's one mirror rule, for this key only: a document the drop put here
            # goes; one another source owns at its path (a file uploaded by hand, a presigned
            # upload whose drop copy this was) stays.
            return ingest.mirror(target.workspace_id, SOURCE, (), within=[target.path]).deleted
        found = self._read(event)
        if found is None:
            return []  # deleted again before we got here; its remove event follows
        data, object_metadata, version = found
        options = drop_options(object_metadata)
        sidecar = self._get(event.bucket, sidecar_name(event.key), MAX_SIDECAR_BYTES + 1)
        given, read_etag = (None, None) if sidecar is None else sidecar
        try:
            metadata = dropped_metadata(target.path, data, given, where=target.path)
        except ValidationError as exc:
            log_refused(target.path, exc)
            metadata = None  # the document keeps what it has
        upload = Upload(
            target.workspace_id,
            data,
            path=target.path,
            category=options.category or target.category,
            chunk_size=options.chunk_size,
            chunk_overlap=options.chunk_overlap,
            source=PRESIGNED if options.presigned else SOURCE,
            mode=options.mode or None,  # a presigned upload's choice, kept on the document
            metadata=metadata,
        )
        try:
            ingest.submit(upload)
        except PayloadTooLargeError as exc:
            if not options.presigned:
                raise
            # Over the uploader's quota since it was signed: the object goes (this version
            # only, so a file it was replacing stays, and so does its document).
            log_refused(target.path, exc)
            self.s3.delete_object(Bucket=event.bucket, Key=event.key, VersionId=version)
            return []
        # A sidecar written or deleted since it was read: its event may have come before the
        # document existed, so its metadata is applied here.
        if _etag(self._head(event.bucket, sidecar_name(event.key))) != read_etag:
            self._sidecar_changed(event.bucket, event.key)
        jobs = self.collector.take()
        return _finished(self.services.pipeline.process(jobs)) if jobs else []

    def _sidecar_changed(self, bucket: str, key: str) -> None:
        """The sidecar of the object `key` was written, changed or deleted: the object's
        document, when both exist, takes the metadata they give now (a deleted sidecar's part
        cleared). Nothing else: a file dropped later reads its sidecar."""
        target = locate(key, drop_prefix=self.drop_prefix, routes=self.drop_routes())
        if target is None or is_sidecar(target.path):
            return
        ingest = self.services.ingest
        try:
            path = normalise_path(target.path)
        except ValidationError:
            return  # no document can be at such a path (the file's own event says why)
        doc = self.services.library.at(target.workspace_id, path)
        if doc is None:
            return  # the file's own event reads the sidecar
        head = self._get(bucket, key, MAX_FRONT_MATTER_BYTES)  # enough for the front matter
        if head is None:
            return  # the file is gone: its remove event deletes the document
        sidecar = self._get(bucket, sidecar_name(key), MAX_SIDECAR_BYTES + 1)
        try:
            metadata = dropped_metadata(
                target.path, head[0], None if sidecar is None else sidecar[0], where=target.path
            )
        except ValidationError as exc:
            log_refused(target.path, exc)
            return
        ingest.set_metadata(target.workspace_id, doc.id, metadata or {})

    def _get(self, bucket: str, key: str, limit: int) -> tuple[bytes, str | None] | None:
        """The object's first `limit` bytes and its ETag; None when there is no such object."""
        try:
            response = self.s3.get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{limit - 1}")
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code == "InvalidRange":  # an empty object: no byte 0
                return b"", _etag(self._head(bucket, key))
            if code in _MISSING:
                return None
            raise
        with response["Body"] as body:
            return body.read(limit), _etag(response)

    def _head(self, bucket: str, key: str) -> dict[str, Any] | None:
        try:
            return self.s3.head_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                return None
            raise

    def _read(self, event: DropEvent) -> tuple[bytes, dict[str, str], str] | None:
        """The object's bytes, metadata and version (`null` in an unversioned bucket)."""
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
        version = response.get("VersionId") or "null"
        return response["Body"].read(), response.get("Metadata", {}), version


def _etag(response: dict[str, Any] | None) -> str | None:
    return None if response is None else response.get("ETag")


def _finished(documents: list[Document]) -> list[Document]:
    failed = [d for d in documents if d.status is DocumentStatus.FAILED]
    if failed:
        raise IngestFailed("; ".join(f"{d.path}: {d.error}" for d in failed))
    return documents
