"""OpenSearchServerlessIndex: the SearchIndex on an OpenSearch Serverless vector collection.

Cloud semantics (DESIGN decision 2): vector collections reject a custom `_id`, so chunk ids
are fields and the engine picks document ids; there is no `_delete_by_query`, so deletes
search for the entries and bulk-delete their ids; there is no `refresh=true`, so writes
become visible on the collection's own schedule. With an IdLedger (the AWS shape always
has one) the ids the engine picked are recorded from each bulk response and deletes go by
id, so entries written within the refresh window are deleted too; the search-then-delete
sweep still runs for anything the ledger does not know. Searches fold duplicates away
(one hit per chunk id) and the search service checks hits against metadata.

Metadata filters run in the engine, on each entry's copy of its document's terms
(opensearch/metadata.py); an edit of a document's metadata relabels its entries in place.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFound
from opensearchpy.exceptions import RequestError

from bunko.adapters.aws.opensearch import queries as q
from bunko.adapters.aws.opensearch.ledger import IdLedger
from bunko.adapters.aws.opensearch.metadata import TERMS_FIELD, TermsMapping
from bunko.adapters.aws.opensearch.term_statistics import SearchBackendError, TermStatistics
from bunko.errors import ValidationError
from bunko.ports import IndexEntry, IndexHit, SearchFilter

_BULK_ENTRIES = 500
# OpenSearch refuses a request body over 10 MiB; 500 entries with 1,024-d vectors (their
# floats written out as JSON) come to 10.9-11.9 MiB. A bulk request stops at this many bytes.
_BULK_BYTES = 8 * 2**20
_TERMS_BATCH = 1000
_PAGE = 1000
T = TypeVar("T")


__all__ = ["OpenSearchServerlessIndex", "SearchBackendError"]


class OpenSearchServerlessIndex:
    def __init__(
        self,
        client: OpenSearch,
        *,
        index: str,
        dimension: int | None,
        ledger: IdLedger | None = None,
        page_size: int = _PAGE,
    ) -> None:
        self.client = client
        self.index_name = index
        self.dimension = dimension
        self.ledger = ledger
        self.page_size = page_size  # the ids one search of a delete pages through
        self.statistics = TermStatistics(client, index)
        self.terms_mapping = TermsMapping(client, index)

    @property
    def filters_metadata(self) -> bool:
        """Whether the index maps the metadata terms (opensearch/metadata.py); if not, the
        search service resolves a metadata filter to document ids first."""
        return self.terms_mapping.mapped()

    def ensure_index(self) -> bool:
        """Create the index with its mapping if missing; True if it was created. Two
        functions may race to create it (a new model's index): the loser finds it there.
        An index created before metadata filters gets their field in its mapping."""
        if self.client.indices.exists(index=self.index_name):
            self.terms_mapping.add()
            return False
        try:
            self.client.indices.create(index=self.index_name, body=q.index_body(self.dimension))
        except RequestError as exc:
            if exc.error == "resource_already_exists_exception":
                self.terms_mapping.add()
                return False
            raise
        self.terms_mapping.mark(True)
        return True

    def drop_index(self) -> None:
        """Delete the index (a model no workspace uses any more: model_handover.retire).
        Only a model's own may be: the data access policy grants DeleteIndex on `-m-*`."""
        with contextlib.suppress(OpenSearchNotFound):  # another function retired it first
            self.client.indices.delete(index=self.index_name)
        self.terms_mapping.mark(False)

    # writes
    def index(self, entries: Sequence[IndexEntry]) -> None:
        if not entries:
            return
        for entry in entries:  # refuse the batch before anything is written
            if entry.vector is not None:
                self._check_dimension(entry.vector)
        by_workspace: dict[str, list[str]] = {}
        for entry in entries:
            by_workspace.setdefault(entry.workspace_id, []).append(entry.chunk_id)
        for workspace_id, chunk_ids in by_workspace.items():
            self.delete_chunks(workspace_id, chunk_ids)
        terms = self.filters_metadata  # never an unmapped field: see opensearch/metadata.py
        for batch, lines in self._batches(entries, terms=terms):
            items = self._bulk(lines)
            if self.ledger is not None:
                rows: dict[str, list[tuple[str, str, list[str]]]] = {}
                for entry, item in zip(batch, items, strict=True):
                    rows.setdefault(entry.workspace_id, []).append(
                        (entry.chunk_id, entry.document_id, [item["index"]["_id"]])
                    )
                for workspace_id, written in rows.items():
                    self.ledger.record(workspace_id, written)

    def _batches(
        self, entries: Sequence[IndexEntry], *, terms: bool
    ) -> Iterator[tuple[list[IndexEntry], list[dict[str, Any]]]]:
        """Bulk requests of at most _BULK_ENTRIES entries and _BULK_BYTES of body each."""
        return _sized(
            (entry, [{"index": {"_index": self.index_name}}, self._source(entry, terms=terms)])
            for entry in entries  # no _id: see above
        )

    def _source(self, entry: IndexEntry, *, terms: bool) -> dict[str, Any]:
        source: dict[str, Any] = {
            "chunk_id": entry.chunk_id,
            "document_id": entry.document_id,
            "workspace_id": entry.workspace_id,
            "revision": entry.revision,
            "category": entry.category,
            q.TEXT_FIELD: entry.text,
            "entry_id": uuid.uuid4().hex,
        }
        if terms:
            source[TERMS_FIELD] = list(entry.metadata_terms)
        if entry.vector is not None and self.dimension:
            source[q.VECTOR_FIELD] = [float(x) for x in entry.vector]
        return source

    def _check_dimension(self, vector: Sequence[float]) -> None:
        if self.dimension and len(vector) != self.dimension:
            raise ValidationError(
                f"vector has {len(vector)} dimensions; the index has {self.dimension}"
            )

    def relabel_document(
        self, workspace_id: str, document_id: str, metadata_terms: Sequence[str]
    ) -> None:
        """A partial update of each of the document's entries, by the id the engine picked:
        vector collections refuse custom ids, upserts, scripts and _update_by_query, but
        update a document by its id. The ids come from the ledger (entries not yet
        searchable) and from a search (entries it does not know). Text and vector stay as
        they are; an entry deleted meanwhile answers 404, which is fine."""
        if not self.filters_metadata:
            return  # filters resolve through the metadata store: nothing here to change
        ids = self.ledger.document_ids(workspace_id, document_id) if self.ledger else []
        ids += self._matching_ids(
            [{"term": {"workspace_id": workspace_id}}, {"term": {"document_id": document_id}}]
        )
        change = {"doc": {TERMS_FIELD: list(metadata_terms)}}
        self._by_id("update", list(dict.fromkeys(ids)), change)

    def delete_document(self, workspace_id: str, document_id: str) -> None:
        if self.ledger is not None:
            self._delete_ids(self.ledger.take_document(workspace_id, document_id))
        self._delete_matching(
            [{"term": {"workspace_id": workspace_id}}, {"term": {"document_id": document_id}}]
        )

    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(chunk_ids))
        if self.ledger is not None:
            self._delete_ids(self.ledger.take_chunks(workspace_id, ids))
        for start in range(0, len(ids), _TERMS_BATCH):
            self._delete_matching(
                [
                    {"term": {"workspace_id": workspace_id}},
                    {"terms": {"chunk_id": ids[start : start + _TERMS_BATCH]}},
                ]
            )

    def clear(self, workspace_id: str | None = None) -> None:
        if self.ledger is not None:
            self._delete_ids(self.ledger.take_workspace(workspace_id))
        self._delete_matching([{"term": {"workspace_id": workspace_id}}] if workspace_id else [])

    def _delete_matching(self, clauses: list[dict[str, Any]]) -> None:
        # Collect first, delete after: deleting while paging would shift the pages.
        self._delete_ids(list(self._matching_ids(clauses)))

    def _delete_ids(self, ids: list[str]) -> None:
        self._by_id("delete", ids)

    def _by_id(self, action: str, ids: list[str], body: dict[str, Any] | None = None) -> None:
        """One bulk `action` (delete, update with `body`) per entry id, in batches held to
        the same count and bytes as writes: a relabel repeats the document's metadata terms
        for each of its entries."""
        lines = (
            (i, [{action: {"_index": self.index_name, "_id": i}}, *([body] if body else [])])
            for i in ids
        )
        for _, batch in _sized(lines):
            self._bulk(batch)

    def _matching_ids(self, clauses: list[dict[str, Any]]) -> Iterator[str]:
        after = None
        while True:
            try:
                response = self.client.search(
                    index=self.index_name,
                    body=q.match_body(clauses, size=self.page_size, after=after),
                )
            except OpenSearchNotFound:
                return  # no index yet: nothing to delete
            hits = response["hits"]["hits"]
            for hit in hits:
                yield hit["_id"]
            if len(hits) < self.page_size:
                return
            after = hits[-1]["sort"]

    def _bulk(self, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.statistics.forget_counts()  # every write and delete passes here
        response = self.client.bulk(body=lines)
        if response.get("errors"):
            failures = [
                next(iter(item.values()))
                for item in response["items"]
                if next(iter(item.values())).get("status", 200) >= 300
                and next(iter(item.values())).get("status") != 404  # already gone is fine
            ]
            if failures:
                raise SearchBackendError(f"bulk request failed: {failures[0].get('error')}")
        return response.get("items", [])

    # reads
    def keyword_search(self, query: str, filters: SearchFilter, limit: int) -> list[IndexHit]:
        return self.hybrid_search(query, None, filters, limit)[0]

    def vector_search(
        self, vector: Sequence[float], filters: SearchFilter, limit: int
    ) -> list[IndexHit]:
        return self.hybrid_search("", vector, filters, limit)[1]

    def hybrid_search(
        self, query: str, vector: Sequence[float] | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        """BM25 and filtered k-NN in one `_msearch` round trip; fusion happens in the core."""
        if limit <= 0 or filters.document_ids == frozenset():
            return [], []
        plan: list[str] = []
        body: list[dict[str, Any]] = []
        if query.strip():
            plan.append("keyword")
            body += [{"index": self.index_name}, q.keyword_body(query, filters, limit)]
        if vector is not None and self.dimension:
            self._check_dimension(vector)
        # A zero vector has no direction: no similarity to anything (and the engine refuses it).
        if vector is not None and self.dimension and any(float(x) != 0.0 for x in vector):
            plan.append("vector")
            body += [{"index": self.index_name}, q.knn_body(vector, filters, limit)]
        results: dict[str, list[IndexHit]] = {"keyword": [], "vector": []}
        if not body:
            return [], []
        # The index in the path too: a data access policy is checked on it (the lines'
        # own `index` alone left the request to the collection's root).
        responses = self.client.msearch(index=self.index_name, body=body)["responses"]
        for kind, response in zip(plan, responses, strict=True):
            if "error" in response:
                if _missing_index(response):
                    continue
                raise SearchBackendError(f"{kind} search failed: {response['error']}")
            results[kind] = _hits(response, vector=kind == "vector")
        return results["keyword"], results["vector"]

    def keyword_weight(self, query: str, filters: SearchFilter) -> float:
        """Σ idf of the query's terms as each keyword field analyses them (the fields' BM25
        scores add up in the keyword query, so their weights do too)."""
        try:
            return self.statistics.idf_mass(query)
        except OpenSearchNotFound:
            return 0.0

    def count(self, workspace_id: str | None = None) -> int:
        body = {"query": {"term": {"workspace_id": workspace_id}}} if workspace_id else None
        try:
            return int(self.client.count(index=self.index_name, body=body)["count"])
        except OpenSearchNotFound:
            return 0


def _sized(
    items: Iterable[tuple[T, list[dict[str, Any]]]],
) -> Iterator[tuple[list[T], list[dict[str, Any]]]]:
    """(item, its bulk lines) grouped into requests of at most _BULK_ENTRIES items and
    _BULK_BYTES of body (each line as JSON and its newline)."""
    batch: list[T] = []
    lines: list[dict[str, Any]] = []
    size = 0
    for item, item_lines in items:
        cost = sum(len(json.dumps(line)) + 1 for line in item_lines)
        if batch and (len(batch) >= _BULK_ENTRIES or size + cost > _BULK_BYTES):
            yield batch, lines
            batch, lines, size = [], [], 0
        batch.append(item)
        lines += item_lines
        size += cost
    if batch:
        yield batch, lines


def _hits(response: dict[str, Any], *, vector: bool) -> list[IndexHit]:
    """One hit per chunk id (the best), engine scores made comparable across engines."""
    seen: set[str] = set()
    hits: list[IndexHit] = []
    for hit in response["hits"]["hits"]:
        source = hit["_source"]
        if source["chunk_id"] in seen:
            continue
        seen.add(source["chunk_id"])
        score = float(hit["_score"])
        hits.append(
            IndexHit(
                chunk_id=source["chunk_id"],
                document_id=source["document_id"],
                score=q.cosine_from_score(score) if vector else score,
            )
        )
    return hits


def _missing_index(response: dict[str, Any]) -> bool:
    error = response.get("error")
    return isinstance(error, dict) and error.get("type") == "index_not_found_exception"
