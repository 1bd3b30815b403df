"""DynamoDBMetadataStore: the MetadataStore on one DynamoDB table (infra/TABLE_DESIGN.md).

Uniqueness (document id, path per workspace) is enforced by conditional puts in one
transaction with the document; updates are optimistic (a version attribute is checked), and
a lost race is retried from a fresh read, so path claims and category counters stay exact.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.chunks import DynamoDBChunks
from bunko.adapters.aws.dynamodb.document_listing import find_documents, matching_ids
from bunko.adapters.aws.dynamodb.names import CAP as CATALOG_CAP
from bunko.adapters.aws.dynamodb.names import NameCatalog
from bunko.adapters.aws.dynamodb.table import Table, key_only
from bunko.adapters.aws.dynamodb.totals import LibraryCounters
from bunko.adapters.aws.dynamodb.writes import DocumentWrites
from bunko.deploy_schema import GSI1, GSI2, SK
from bunko.domain import Chunk, Document, Revision, Workspace
from bunko.domain.document_query import DocumentPage, DocumentQuery
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.domain.sources import API
from bunko.errors import NotFoundError, StaleError
from bunko.ports import BlobStore, DocumentWrite, LibraryTotals

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

_S = items.serialize


class DynamoDBMetadataStore:
    def __init__(
        self,
        client: DynamoDBClient,
        *,
        table_name: str,
        blobs: BlobStore,
        catalog_cap: int = CATALOG_CAP,
    ) -> None:
        self.table = Table(client, table_name)
        self.chunks = DynamoDBChunks(self.table, blobs)
        self.writes = DocumentWrites(self.table, catalog_cap=catalog_cap)
        self.counters = LibraryCounters(self.table)
        self.names = NameCatalog(self.table, cap=catalog_cap)

    # workspaces
    def ensure_workspace(self, workspace: Workspace) -> Workspace:
        try:
            self.table.put(
                items.workspace_item(workspace), ConditionExpression="attribute_not_exists(pk)"
            )
        except self.table.client.exceptions.ConditionalCheckFailedException:
            existing = self.get_workspace(workspace.id)
            if existing is not None:
                return existing
            raise
        return workspace

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        item = self.table.get(items.workspace_key(workspace_id))
        return items.to_workspace(item) if item else None

    def _all_documents(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        # GSI1 holds only documents and workspaces, so scanning it skips every chunk.
        return self.table.scan(
            IndexName=GSI1,
            FilterExpression="begins_with(sk, :doc)",
            ExpressionAttributeValues=_S({":doc": "DOC#"}),
            **kwargs,
        )

    def _to_documents(self, found: Iterable[dict[str, Any]]) -> list[Document]:
        """The documents of these items. An item written before the upload options moved
        onto the document (it has no `mode`) takes them from where they were kept, all in
        one batch read; its next save writes them onto it."""
        found = list(found)
        legacy = [items.legacy_options_key(item["id"]) for item in found if "mode" not in item]
        kept = {i[SK]: json.loads(i["value"]) for i in self.table.batch_get(legacy)}
        return [items.to_document(item, kept.get(item["id"])) for item in found]

    # documents
    def add_document(self, document: Document) -> None:
        self.writes.add(document)

    def save_document(self, document: Document, *, if_revision: int | None = None) -> None:
        self.writes.save(document, if_revision=if_revision)

    def write_documents(self, writes: Sequence[DocumentWrite]) -> list[list[str] | None]:
        """The pipeline's group write (ports.DocumentWrites), one document at a time: a
        document's chunks do not fit one transaction (100 items). What it adds over
        save_document: the document's metadata is left as stored (dynamodb/writes.py)."""
        return [self._write(w) for w in writes]

    def _write(self, write: DocumentWrite) -> list[str] | None:
        # Not atomic, as services/ingest/document_writes.py is not: a revision added between
        # the chunk write and the save leaves this revision's chunks until its own job runs.
        doc = write.document
        ws = doc.workspace_id
        removed: list[str] = []
        if write.chunks is not None:
            current = self.table.get(items.doc_key(ws, doc.id))
            if current is None or int(current["revision"]) != doc.revision:
                return None
            new = {c.id for c in write.chunks}
            removed = [r["chunk_id"] for r in self.chunks.refs(ws, doc.id)]
            removed = [c for c in dict.fromkeys(removed) if c not in new]
            self.writes.add_chunk_count(ws, doc.id, self.chunks.replace(ws, doc.id, write.chunks))
        try:
            self.writes.save(doc, if_revision=doc.revision, keep_metadata=True)
        except (NotFoundError, StaleError):
            return None
        return removed

    def get_document(self, workspace_id: str, document_id: str) -> Document | None:
        item = self.table.get(items.doc_key(workspace_id, document_id))
        return self._to_documents([item])[0] if item else None

    def get_documents_by_ids(
        self, workspace_id: str, document_ids: Sequence[str]
    ) -> list[Document]:
        unique = list(dict.fromkeys(document_ids))
        found = self.table.batch_get([items.doc_key(workspace_id, d) for d in unique])
        by_id = {document.id: document for document in self._to_documents(found)}
        return [by_id[d] for d in unique if d in by_id]

    def get_document_by_path(self, workspace_id: str, path: str) -> Document | None:
        claim = self.table.get(items.path_key(workspace_id, path))
        if claim is None:
            return None
        document = self.get_document(workspace_id, claim["document_id"])
        return document if document is not None and document.path == path else None

    def _documents(self, workspace_id: str, category: str | None, **kwargs: Any):
        if category is None:
            index, pk = GSI1, f"WS#{workspace_id}#DOCS"
        else:
            index, pk = GSI2, f"WS#{workspace_id}#CAT#{category}"
        return dict(
            IndexName=index,
            KeyConditionExpression=f"{index}pk = :pk",
            ExpressionAttributeValues=_S({":pk": pk}),
            **kwargs,
        )

    def list_documents(
        self, workspace_id: str, *, limit: int, offset: int = 0, category: str | None = None
    ) -> list[Document]:
        if limit <= 0:
            return []
        # DynamoDB pages by key, not by offset: read offset + limit and drop the offset.
        found: list[dict[str, Any]] = []
        query = self._documents(
            workspace_id, category, ScanIndexForward=False, Limit=min(offset + limit, 1000)
        )
        for n, item in enumerate(self.table.query(**query)):
            if n >= offset:
                found.append(item)
                if len(found) == limit:
                    break
        return self._to_documents(found)

    def find_documents(
        self, workspace_id: str, query: DocumentQuery, *, limit: int, offset: int = 0
    ) -> DocumentPage:
        by_ids = partial(self.get_documents_by_ids, workspace_id)
        documents = self._documents(workspace_id, None)
        total = partial(self.count_documents, workspace_id)
        catalog = partial(self.names.rows, workspace_id)
        return find_documents(
            self.table, documents, by_ids, self._to_documents, query, total, catalog,
            limit=limit, offset=offset,
        )  # fmt: skip

    def count_documents(self, workspace_id: str, *, category: str | None = None) -> int:
        # Counters kept in the documents' own transactions: one item read, not the library.
        if category is None:
            return self.counters.read(workspace_id).documents
        counter = self.table.get(items.category_key(workspace_id, category))
        return max(int(counter.get("n", 0)), 0) if counter else 0

    def library_totals(self, workspace_id: str) -> LibraryTotals:
        return self.counters.read(workspace_id)

    def documents_matching(self, workspace_id: str, flt: MetadataFilter) -> frozenset[str]:
        return matching_ids(self.table, self._documents(workspace_id, None), flt)

    def list_categories(self, workspace_id: str) -> list[str]:
        return [
            item[SK].removeprefix("CAT#")
            for item in self.table.partition(items.ws_pk(workspace_id), "CAT#")
            if item.get("n", 0) > 0
        ]

    def delete_document(self, workspace_id: str, document_id: str) -> bool:
        document = self.get_document(workspace_id, document_id)
        if document is None:
            return False
        # Children first: a delete that dies half-way is finished by running it again.
        self.chunks.delete_all(workspace_id, document_id)
        revisions = self.table.partition(items.doc_pk(workspace_id, document_id), "REV#")
        legacy = items.legacy_options_key(document_id)  # options kept beside it before
        self.table.batch_write(deletes=[*(key_only(r) for r in revisions), legacy])
        return self.writes.remove(document)

    def iter_documents(self, workspace_id: str | None = None) -> Iterator[Document]:
        found = (
            self.table.query(**self._documents(workspace_id, None))
            if workspace_id
            else self._all_documents()
        )
        batch: list[dict[str, Any]] = []
        for item in found:
            batch.append(item)
            if len(batch) == 100:
                yield from self._to_documents(batch)
                batch = []
        yield from self._to_documents(batch)

    def iter_source_documents(self, workspace_id: str, source: str) -> Iterator[Document]:
        # The library's listing (GSI1) filtered on `source`: a mirror reads every document
        # item of the library (its read capacity) but receives only the source's. An item
        # without the attribute is read as API's (domain/sources.py), and so matched by it.
        condition = "#source = :source"
        if source == API:
            condition += " OR attribute_not_exists(#source)"
        query = self._documents(workspace_id, None)
        query["ExpressionAttributeValues"].update(_S({":source": source}))
        found = self.table.query(
            **query, FilterExpression=condition, ExpressionAttributeNames={"#source": "source"}
        )
        yield from sorted(self._to_documents(found), key=lambda d: d.path)

    def source_document_ids(self, workspace_id: str, source: str) -> frozenset[str]:
        # The same query, each item's id alone (the read capacity is the same: a filter
        # and a projection apply after the read).
        condition = "#source = :source"
        if source == API:
            condition += " OR attribute_not_exists(#source)"
        query = self._documents(workspace_id, None)
        query["ExpressionAttributeValues"].update(_S({":source": source}))
        found = self.table.query(
            **query,
            FilterExpression=condition,
            ProjectionExpression="#id",
            ExpressionAttributeNames={"#source": "source", "#id": "id"},
        )
        return frozenset(item["id"] for item in found)

    # revisions
    def add_revision(self, revision: Revision) -> None:
        self.table.put(items.revision_item(revision))

    def get_revision(self, workspace_id: str, document_id: str, revision: int) -> Revision | None:
        item = self.table.get(items.revision_key(workspace_id, document_id, revision))
        return items.to_revision(item) if item else None

    def list_revisions(self, workspace_id: str, document_id: str) -> list[Revision]:
        partition = self.table.partition(items.doc_pk(workspace_id, document_id), "REV#")
        return [items.to_revision(item) for item in partition]

    # chunks
    def _require_document(self, workspace_id: str, document_id: str) -> None:
        if self.table.get(items.doc_key(workspace_id, document_id)) is None:
            raise NotFoundError(f"document {document_id} not found")

    def replace_chunks(self, workspace_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        self._require_document(workspace_id, document_id)
        delta = self.chunks.replace(workspace_id, document_id, chunks)
        self.writes.add_chunk_count(workspace_id, document_id, delta)

    def get_chunks(self, workspace_id: str, document_id: str) -> list[Chunk]:
        return self.chunks.for_document(workspace_id, document_id)

    def get_chunk(self, workspace_id: str, chunk_id: str) -> Chunk | None:
        item = self.chunks.get_item(workspace_id, chunk_id)
        return self.chunks.chunk(item) if item else None

    def get_chunks_by_ids(self, workspace_id: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        return self.chunks.by_ids(workspace_id, chunk_ids)

    def save_chunk(self, chunk: Chunk) -> None:
        self._require_document(chunk.workspace_id, chunk.document_id)
        added = self.chunks.save(chunk)
        self.writes.add_chunk_count(chunk.workspace_id, chunk.document_id, added)

    def delete_chunk(self, workspace_id: str, chunk_id: str) -> bool:
        item = self.chunks.get_item(workspace_id, chunk_id)
        if item is None:
            return False
        self.chunks.delete(workspace_id, item)
        self.writes.add_chunk_count(workspace_id, item["document_id"], -1)
        return True

    def iter_chunks(self, workspace_id: str | None = None) -> Iterator[Chunk]:
        for document in self.iter_documents(workspace_id):
            yield from self.get_chunks(document.workspace_id, document.id)

    def count_chunks(self, workspace_id: str | None = None) -> int:
        if workspace_id:
            found = self.table.query(
                **self._documents(workspace_id, None, ProjectionExpression="chunks_stored")
            )
        else:
            found = self._all_documents(ProjectionExpression="chunks_stored")
        return sum(item.get("chunks_stored", 0) for item in found)
