"""Ingest: an upload's policy and quota, the queue, parsing, chunking, embedding and the
document records; a source's mirror; item edits, originals and status (what a library holds is
read through the library wing)."""

from bunko.services.ingest.chunk_items import MAX_ITEM_CHARS, ChunkItemsService
from bunko.services.ingest.ingest import IngestService
from bunko.services.ingest.knowledge_base import KnowledgeBaseService
from bunko.services.ingest.known_vectors import KnownVectors
from bunko.services.ingest.mirror import Mirrored
from bunko.services.ingest.pipeline import IndexingPipeline
from bunko.services.ingest.status import StatusService
from bunko.services.ingest.upload import Upload
from bunko.services.ingest.upload_policy import UploadPolicy, normalise_path
from bunko.services.ingest.upload_quota import PRESIGNED_SOURCE, UploadQuota

__all__ = [
    "MAX_ITEM_CHARS",
    "PRESIGNED_SOURCE",
    "ChunkItemsService",
    "IndexingPipeline",
    "IngestService",
    "KnowledgeBaseService",
    "KnownVectors",
    "Mirrored",
    "StatusService",
    "Upload",
    "UploadPolicy",
    "UploadQuota",
    "normalise_path",
]
