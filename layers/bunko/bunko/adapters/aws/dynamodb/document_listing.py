"""One page of a workspace's documents, filtered by name and ordered, on DynamoDB.

By date without a filter is the order GSI1 keeps (created_at, id): read offset + limit
items; the total is the library's counter (dynamodb/totals.py), one item read. A name filter
and the other orders have no index to ride (DynamoDB cannot order by name or size, nor match
a part of a value in any case): they read the library's name catalog (dynamodb/names.py, a
compact copy of every document's name, path, size, type and date packed into a few items),
arranged in memory by the shared rule, and only the asked page is read in full, in one
batch. A metadata filter (a document's metadata terms are not keys, nor in the catalog)
queries the workspace's documents projecting only the fields that order and filter them
(DynamoDB still bills their whole items), and so does a name filter while the catalog is off.
A search's metadata filter is resolved to document ids the same way, projecting only id,
category and metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bunko.adapters.aws.dynamodb.items import metadata_of
from bunko.adapters.aws.dynamodb.table import Table
from bunko.domain import Document
from bunko.domain.document_query import DocumentPage, DocumentQuery, arrange
from bunko.domain.metadata import Filter, matches, terms_of

_PROJECTION = {
    "ProjectionExpression": "#id, #path, #name, #size, #mime, #created, #category, #metadata",
    "ExpressionAttributeNames": {
        "#id": "id", "#path": "path", "#name": "name", "#size": "size", "#mime": "mime",
        "#created": "created_at", "#category": "category", "#metadata": "metadata",
    },
}  # fmt: skip
_TERMS_PROJECTION = {
    "ProjectionExpression": "#id, #category, #metadata",
    "ExpressionAttributeNames": {"#id": "id", "#category": "category", "#metadata": "metadata"},
}


@dataclass(frozen=True)
class _Row:
    id: str
    name: str
    path: str
    size: int
    mime: str
    category: str | None
    metadata: dict[str, Any]
    created_at: datetime


def find_documents(
    table: Table,
    documents_query: dict[str, Any],
    by_ids: Callable[[Sequence[str]], list[Document]],
    to_documents: Callable[[list[dict[str, Any]]], list[Document]],
    query: DocumentQuery,
    total: Callable[[], int],
    catalog: Callable[[], list[dict[str, Any]] | None],
    *,
    limit: int,
    offset: int,
) -> DocumentPage:
    """`documents_query`: the GSI1 query of the workspace's documents; `by_ids`: the full
    documents for ids, in the order asked (one batch read); `to_documents`: the documents of
    full items; `total`: how many documents the workspace holds (its counter); `catalog`:
    the rows of its name catalog (NameCatalog.rows), None while it is off."""
    if query.is_default:
        return _by_date(
            table, documents_query, to_documents, query, total(), limit=limit, offset=offset
        )
    named = catalog() if query.filter is None else None
    if named is not None:
        rows = [_Row(category=None, metadata={}, **row) for row in named]
    else:
        rows = [_row(item) for item in table.query(**documents_query, **_PROJECTION)]
    found = arrange(rows, query)
    page = [row.id for row in found[offset : offset + limit]] if limit > 0 else []
    return DocumentPage(documents=by_ids(page), total=len(found))


def _row(item: dict[str, Any]) -> _Row:
    return _Row(
        id=item["id"],
        name=item["name"],
        path=item["path"],
        size=int(item.get("size", 0)),
        mime=item.get("mime", ""),
        category=item.get("category"),
        metadata=metadata_of(item),
        created_at=datetime.fromisoformat(item["created_at"]),
    )


def matching_ids(table: Table, documents_query: dict[str, Any], flt: Filter) -> frozenset[str]:
    """The ids of the documents `documents_query` finds whose metadata passes `flt`."""
    return frozenset(
        item["id"]
        for item in table.query(**documents_query, **_TERMS_PROJECTION)
        if matches(flt, terms_of(metadata_of(item), item.get("category")))
    )


def _by_date(
    table: Table,
    documents_query: dict[str, Any],
    to_documents: Callable[[list[dict[str, Any]]], list[Document]],
    query: DocumentQuery,
    total: int,
    *,
    limit: int,
    offset: int,
) -> DocumentPage:
    if limit <= 0 or offset >= total:
        return DocumentPage(documents=[], total=total)
    # DynamoDB pages by key, not by offset: read offset + limit and drop the offset.
    found: list[dict[str, Any]] = []
    read = table.query(
        **documents_query, ScanIndexForward=not query.descending, Limit=min(offset + limit, 1000)
    )
    for n, item in enumerate(read):
        if n >= offset:
            found.append(item)
            if len(found) == limit:
                break
    return DocumentPage(documents=to_documents(found), total=total)
