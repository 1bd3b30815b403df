"""Chunks in the single table: one item per chunk id (search hydrates them by id in one
BatchGetItem) plus a small ordered reference per chunk in its document's partition (so a
document's chunks are a strongly consistent Query, not a lagging GSI).

Chunk text over `SPILL_BYTES` is written to the blob store and the item keeps its key,
because a DynamoDB item stops at 400 KB. The item also keeps how the relevance gate reads the
chunk's sentences (Chunk.sentence_terms, read at ingest), where text and reading fit under
`SPILL_BYTES` together; elsewhere a search reads the sentences from the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.table import Table, key_only
from bunko.deploy_schema import SK
from bunko.domain import Chunk
from bunko.ports import BlobStore

SPILL_BYTES = 300_000  # leaves room under 400 KB for the other attributes and names


def spill_key(workspace_id: str, document_id: str, chunk_id: str) -> str:
    return f"spill/{workspace_id}/{document_id}/{chunk_id}.txt"


class DynamoDBChunks:
    def __init__(self, table: Table, blobs: BlobStore) -> None:
        self.table = table
        self.blobs = blobs

    # reads
    def refs(self, workspace_id: str, document_id: str) -> list[dict[str, Any]]:
        return list(self.table.partition(items.doc_pk(workspace_id, document_id), "CHUNK#"))

    def for_document(self, workspace_id: str, document_id: str) -> list[Chunk]:
        ids = [ref["chunk_id"] for ref in self.refs(workspace_id, document_id)]
        return self.by_ids(workspace_id, ids)

    def by_ids(self, workspace_id: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        """In the order asked; missing ids (or ids of another workspace) are left out."""
        unique = list(dict.fromkeys(chunk_ids))
        found = self.table.batch_get([items.chunk_key(workspace_id, c) for c in unique])
        by_id = {item["id"]: item for item in found}
        return [self._chunk(by_id[c]) for c in unique if c in by_id]

    def get_item(self, workspace_id: str, chunk_id: str) -> dict[str, Any] | None:
        return self.table.get(items.chunk_key(workspace_id, chunk_id))

    def _chunk(self, item: dict[str, Any]) -> Chunk:
        key = item.get("content_key")
        content = self.blobs.get(key).decode("utf-8") if key else item.get("content", "")
        return items.to_chunk(item, content)

    def chunk(self, item: dict[str, Any]) -> Chunk:
        return self._chunk(item)

    # writes
    def replace(self, workspace_id: str, document_id: str, chunks: Sequence[Chunk]) -> int:
        """Make `chunks` the document's chunks; returns the change in their number."""
        old_refs = self.refs(workspace_id, document_id)
        new_ids = {c.id for c in chunks}
        new_ref_keys = {items.chunk_ref_key(workspace_id, c)[SK] for c in chunks}
        puts: list[dict[str, Any]] = []
        for chunk in chunks:
            puts.append(self._item(chunk))
            puts.append({**items.chunk_ref_key(workspace_id, chunk), "chunk_id": chunk.id})
        stale_refs = [key_only(r) for r in old_refs if r[SK] not in new_ref_keys]
        stale_ids = {r["chunk_id"] for r in old_refs} - new_ids
        stale_items = self.table.batch_get([items.chunk_key(workspace_id, c) for c in stale_ids])
        # New items first, stale ones after: a reader never sees the document empty.
        self.table.batch_write(puts=puts)
        self.table.batch_write(deletes=stale_refs + [key_only(i) for i in stale_items])
        for item in stale_items:
            if item.get("content_key"):
                self.blobs.delete(item["content_key"])
        return len(new_ref_keys) - len(old_refs)

    def save(self, chunk: Chunk) -> int:
        """Insert or update one chunk; returns 1 if it is new, else 0."""
        old = self.get_item(chunk.workspace_id, chunk.id)
        deletes = []
        if old is not None and (old["revision"], old["idx"]) != (chunk.revision, chunk.index):
            deletes.append(_ref_key(chunk.workspace_id, old))
        ref = {**items.chunk_ref_key(chunk.workspace_id, chunk), "chunk_id": chunk.id}
        self.table.batch_write(puts=[self._item(chunk), ref], deletes=deletes)
        if old is not None and old.get("content_key") and not self._spills(chunk):
            self.blobs.delete(old["content_key"])
        return 0 if old is not None else 1

    def delete(self, workspace_id: str, item: dict[str, Any]) -> None:
        self.table.batch_write(deletes=[_ref_key(workspace_id, item), key_only(item)])
        if item.get("content_key"):
            self.blobs.delete(item["content_key"])

    def delete_all(self, workspace_id: str, document_id: str) -> None:
        refs = self.refs(workspace_id, document_id)
        keys = [items.chunk_key(workspace_id, r["chunk_id"]) for r in refs]
        self.table.batch_write(deletes=keys + [key_only(r) for r in refs])
        self.blobs.delete_prefix(f"spill/{workspace_id}/{document_id}/")

    def _spills(self, chunk: Chunk) -> bool:
        return len(chunk.content.encode("utf-8")) > SPILL_BYTES

    def _item(self, chunk: Chunk) -> dict[str, Any]:
        content_key = None
        if self._spills(chunk):
            content_key = spill_key(chunk.workspace_id, chunk.document_id, chunk.id)
            self.blobs.put(
                content_key, chunk.content.encode("utf-8"), content_type="text/plain; charset=utf-8"
            )
        read = chunk.sentence_terms or ""
        fits = content_key is None and (
            len(chunk.content.encode("utf-8")) + len(read.encode("utf-8")) <= SPILL_BYTES
        )
        return items.chunk_item(chunk, content_key=content_key, sentence_terms=fits)


def _ref_key(workspace_id: str, item: dict[str, Any]) -> dict[str, str]:
    return items.chunk_ref_key(workspace_id, items.to_chunk(item, ""))
