"""IdLedger: which OpenSearch document ids hold each chunk, kept in the metadata table.

Vector collections pick document ids themselves (no custom `_id`) and make writes
searchable only at their next refresh (about a minute), so finding a chunk's entries by
searching misses those written in that window: deleted chunks would survive as orphans
and replaced ones as duplicates. Bulk responses name the ids the engine picked; the ledger
keeps them, and deletes go by id, which does not wait for a refresh.

Two items per chunk: `IDX#<ws>#C#<chunk>` (for deletes by chunk id) and
`IDX#<ws>#D#<document>` / `<chunk>` (for deletes by document); and, so a workspace is cleared
by queries of its own partitions, never a scan of the table, one item per document with
entries (`IDX#<ws>#W` / `<document>`) and one per such workspace (`IDX#W` / `<ws>`);
infra/TABLE_DESIGN.md. The
index of a workspace's own embedding model keeps its ids under `IDX@<model config>#…`
(`namespace`), since the same chunk has an entry in two indexes while a model is being built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table, key_only
from bunko.deploy_schema import PK, SK

_CHUNK_SK = "-"


class IdLedger:
    def __init__(self, table: Table, *, namespace: str = "") -> None:
        """`namespace`: "" for the deployment's own index, a model config id for its index."""
        self.table = table
        self.prefix = f"IDX@{namespace}#" if namespace else "IDX#"

    def _chunk_key(self, workspace_id: str, chunk_id: str) -> dict[str, str]:
        return {PK: f"{self.prefix}{workspace_id}#C#{chunk_id}", SK: _CHUNK_SK}

    def _document_pk(self, workspace_id: str, document_id: str) -> str:
        return f"{self.prefix}{workspace_id}#D#{document_id}"

    def _documents_pk(self, workspace_id: str) -> str:
        return f"{self.prefix}{workspace_id}#W"

    def _partition(self, pk: str) -> list[dict]:
        return list(
            self.table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=serialize({":pk": pk}),
                ConsistentRead=True,
            )
        )

    def record(self, workspace_id: str, rows: Iterable[tuple[str, str, list[str]]]) -> None:
        """(chunk id, document id, engine ids) of freshly written entries."""
        puts, documents = [], set()
        for chunk_id, document_id, ids in rows:
            puts.append({**self._chunk_key(workspace_id, chunk_id), "doc": document_id, "ids": ids})
            puts.append(
                {PK: self._document_pk(workspace_id, document_id), SK: chunk_id, "ids": ids}
            )
            documents.add(document_id)
        # where take_workspace finds them (one batch holds no key twice: a set)
        puts += [{PK: self._documents_pk(workspace_id), SK: d} for d in sorted(documents)]
        puts.append({PK: f"{self.prefix}W", SK: workspace_id})
        self.table.batch_write(puts=puts)

    def take_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> list[str]:
        """The engine ids of these chunks; their ledger items are removed."""
        found = self.table.batch_get([self._chunk_key(workspace_id, c) for c in chunk_ids])
        deletes = [key_only(item) for item in found]
        deletes += [
            {PK: self._document_pk(workspace_id, item["doc"]), SK: item[PK].rsplit("#C#", 1)[1]}
            for item in found
        ]
        self.table.batch_write(deletes=deletes)
        return [i for item in found for i in item.get("ids", [])]

    def _document_rows(self, workspace_id: str, document_id: str) -> list[dict]:
        return self._partition(self._document_pk(workspace_id, document_id))

    def document_ids(self, workspace_id: str, document_id: str) -> list[str]:
        """The engine ids of a document's entries; the ledger keeps them (a relabel)."""
        return [i for r in self._document_rows(workspace_id, document_id) for i in r.get("ids", [])]

    def take_document(self, workspace_id: str, document_id: str) -> list[str]:
        rows = self._document_rows(workspace_id, document_id)
        deletes = [key_only(r) for r in rows]
        deletes += [self._chunk_key(workspace_id, r[SK]) for r in rows]
        deletes.append({PK: self._documents_pk(workspace_id), SK: document_id})
        self.table.batch_write(deletes=deletes)
        return [i for r in rows for i in r.get("ids", [])]

    def take_workspace(self, workspace_id: str | None) -> list[str]:
        """Every id of a workspace (or of all): queries of its documents' partitions, so
        the cost follows the workspace's entries, not the table's (a model switch clears
        one workspace's index twice, inside the ingest function's time)."""
        if workspace_id is None:
            spaces = [r[SK] for r in self._partition(f"{self.prefix}W")]
            return list(dict.fromkeys(i for ws in spaces for i in self.take_workspace(ws)))
        ids: list[str] = []
        for listed in self._partition(self._documents_pk(workspace_id)):
            ids += self.take_document(workspace_id, listed[SK])
        self.table.batch_write(deletes=[{PK: f"{self.prefix}W", SK: workspace_id}])
        return list(dict.fromkeys(ids))
