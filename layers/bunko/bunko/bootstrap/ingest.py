"""The ingest wing, wired: the pipeline and its queue (the worker thread on one machine, SQS on
AWS), then what a door reaches (uploads, their policy and quota, status, chunk items)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bunko.bootstrap.adapters import Adapters
from bunko.config import Settings
from bunko.domain.ingest_options import IngestDefaults
from bunko.ports import EmbeddingGenerations, IngestQueue
from bunko.ports.uploads import UploadSigner
from bunko.services.accounts import Bills
from bunko.services.ingest import (
    ChunkItemsService,
    IndexingPipeline,
    IngestService,
    StatusService,
    UploadPolicy,
    UploadQuota,
)
from bunko.services.search import read_sentences


@dataclass(frozen=True)
class IngestWork:
    """What indexes a document: the pipeline, the queue that feeds it, and how deep it is."""

    pipeline: IndexingPipeline
    queue: IngestQueue
    depth: Callable[[], int]

    def busy(self) -> bool:
        return self.depth() > 0


def build_work(
    settings: Settings,
    adapters: Adapters,
    generations: EmbeddingGenerations,
    closers: list[Callable[[], None]],
    *,
    queue: IngestQueue | None = None,
) -> IngestWork:
    """`queue` overrides the shape's; with neither, a worker thread runs the pipeline."""
    pipeline = IndexingPipeline(
        metadata=adapters.metadata,
        blobs=adapters.blobs,
        generations=generations,
        batch_size=settings.embed_batch_size,
        read_sentences=read_sentences,
    )
    queue = queue or adapters.queue
    if queue is not None:  # SQS: the queue's depth is CloudWatch's to report
        return IngestWork(pipeline, queue, lambda: 0)
    from bunko.adapters.local.worker import ThreadIngestQueue

    worker = ThreadIngestQueue(pipeline.process)
    closers.insert(0, worker.stop)  # stop the worker before its stores close
    return IngestWork(pipeline, worker, lambda: worker.pending)


@dataclass(frozen=True)
class IngestWing:
    """The ingest services the doors reach; field names are the container's (`Services`)."""

    pipeline: IndexingPipeline
    queue: IngestQueue
    ingest: IngestService
    uploads: UploadPolicy  # what a file must be, for every door (ingest checks it too)
    status: StatusService
    items: ChunkItemsService
    upload_signer: UploadSigner | None


def build_ingest(
    settings: Settings,
    adapters: Adapters,
    generations: EmbeddingGenerations,
    work: IngestWork,
    bills: Bills | None,
    *,
    storage_quota: bool = False,
) -> IngestWing:
    """`storage_quota`: apply people's storage quota without accounts (the ingest function,
    for presigned uploads arriving)."""
    metadata, blobs = adapters.metadata, adapters.blobs
    uploads = UploadPolicy(max_file_bytes=settings.max_file_bytes)
    ingest = IngestService(
        metadata=metadata,
        blobs=blobs,
        queue=work.queue,
        defaults=IngestDefaults(
            chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap
        ),
        policy=uploads,
        generations=generations,
        quota=_quota(settings, adapters, bills, storage_quota=storage_quota),
    )
    return IngestWing(
        pipeline=work.pipeline,
        queue=work.queue,
        ingest=ingest,
        uploads=uploads,
        status=StatusService(embedder=adapters.embedder, queue_depth=work.depth),
        items=ChunkItemsService(
            metadata=metadata, blobs=blobs, generations=generations, read_sentences=read_sentences
        ),
        upload_signer=adapters.upload_signer,
    )


def signs_in(adapters: Adapters) -> bool:
    """Whether this process signs people in (it has account stores and a JWT secret)."""
    return adapters.accounts is not None and adapters.accounts.jwt_secret is not None


def _quota(
    settings: Settings, adapters: Adapters, bills: Bills | None, *, storage_quota: bool
) -> UploadQuota | None:
    account = adapters.accounts
    if not ((account is not None and signs_in(adapters)) or storage_quota):
        return None
    return UploadQuota(
        metadata=adapters.metadata,
        # no pace without accounts: a presigned upload's was taken when signed
        counters=account.stores.login_attempts if account and signs_in(adapters) else None,
        max_bytes=settings.upload_quota_bytes,
        per_minute=settings.upload_rate_per_minute,
        burst=settings.upload_burst,
        bill=bills,
    )
