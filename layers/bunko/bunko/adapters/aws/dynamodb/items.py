"""The single-table key layout and the item <-> domain conversions (see infra/TABLE_DESIGN.md).

Every key embeds the workspace id, so an id from another workspace addresses another item
and can never read or delete across tenants.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from bunko.deploy_schema import GSI1_PK, GSI1_SK, GSI2_PK, GSI2_SK, PK, SK
from bunko.domain import Chunk, Document, DocumentStatus, Revision, Workspace
from bunko.domain.documents import decode_page_breaks, encode_page_breaks

# Sort keys are limited to 1024 bytes; longer paths are claimed by their hash.
_MAX_PATH_KEY_BYTES = 900

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()
_DOC_FIELDS = [f.name for f in fields(Document)]
_REV_FIELDS = [f.name for f in fields(Revision)]


def ws_pk(workspace_id: str) -> str:
    return f"WS#{workspace_id}"


def doc_pk(workspace_id: str, document_id: str) -> str:
    return f"WS#{workspace_id}#DOC#{document_id}"


def chunk_pk(workspace_id: str, chunk_id: str) -> str:
    return f"WS#{workspace_id}#CHUNK#{chunk_id}"


def doc_key(workspace_id: str, document_id: str) -> dict[str, str]:
    return {PK: ws_pk(workspace_id), SK: f"DOC#{document_id}"}


def path_key(workspace_id: str, path: str) -> dict[str, str]:
    encoded = path.encode("utf-8")
    sk = (
        f"PATH#{path}"
        if len(encoded) <= _MAX_PATH_KEY_BYTES
        else (f"PATHH#{hashlib.sha256(encoded).hexdigest()}")
    )
    return {PK: ws_pk(workspace_id), SK: sk}


def legacy_options_key(document_id: str) -> dict[str, str]:
    """Where a document's upload options (mode, embeddingModelId) were kept before they moved
    onto the document: a settings item of scope "upload"."""
    return {PK: "SETTINGS#upload", SK: document_id}


def category_key(workspace_id: str, category: str) -> dict[str, str]:
    return {PK: ws_pk(workspace_id), SK: f"CAT#{category}"}


def revision_key(workspace_id: str, document_id: str, revision: int) -> dict[str, str]:
    return {PK: doc_pk(workspace_id, document_id), SK: f"REV#{revision:010d}"}


def chunk_ref_key(workspace_id: str, chunk: Chunk) -> dict[str, str]:
    return {
        PK: doc_pk(workspace_id, chunk.document_id),
        SK: f"CHUNK#{chunk.revision:010d}#{chunk.index:08d}",
    }


def chunk_key(workspace_id: str, chunk_id: str) -> dict[str, str]:
    return {PK: chunk_pk(workspace_id, chunk_id), SK: "CHUNK"}


def workspace_key(workspace_id: str) -> dict[str, str]:
    return {PK: ws_pk(workspace_id), SK: "WORKSPACE"}


def created_sort_key(created_at: datetime, document_id: str) -> str:
    # UTC with a fixed width sorts chronologically as a string; the id breaks ties.
    return f"{created_at.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}#{document_id}"


def serialize(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}


def deserialize(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(_deserializer.deserialize(v)) for k, v in item.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def workspace_item(workspace: Workspace) -> dict[str, Any]:
    return {
        **workspace_key(workspace.id),
        "id": workspace.id,
        "name": workspace.name,
        "created_at": workspace.created_at.isoformat(),
    }


def to_workspace(item: dict[str, Any]) -> Workspace:
    return Workspace(
        id=item["id"], name=item["name"], created_at=datetime.fromisoformat(item["created_at"])
    )


def metadata_text(metadata: dict[str, Any]) -> str | None:
    """A document's metadata as one JSON string attribute (None, no attribute, when empty).
    Not a map of numbers: DynamoDB numbers hold 38 digits between 1e-130 and 1e126, so a
    float such as 1e200 or 5e-324 (finite, so valid metadata) would be refused, and boto3
    takes no floats at all; JSON keeps every float exactly (its shortest repr). Nothing
    filters on the attribute in DynamoDB: filters run on the terms in Python."""
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":")) if metadata else None


def metadata_of(item: dict[str, Any]) -> dict[str, Any]:
    """The metadata of a document item; {} for one written before documents had any."""
    text = item.get("metadata")
    return json.loads(text) if text else {}


def document_attributes(document: Document) -> dict[str, Any]:
    """The domain fields plus the index keys that depend on them."""
    values: dict[str, Any] = {name: getattr(document, name) for name in _DOC_FIELDS}
    values["metadata"] = metadata_text(document.metadata)
    values["status"] = str(document.status)
    values["created_at"] = document.created_at.isoformat()
    values["updated_at"] = document.updated_at.isoformat()
    values[GSI1_PK] = f"WS#{document.workspace_id}#DOCS"
    values[GSI1_SK] = created_sort_key(document.created_at, document.id)
    if document.category:
        values[GSI2_PK] = f"WS#{document.workspace_id}#CAT#{document.category}"
        values[GSI2_SK] = values[GSI1_SK]
    return values


def to_document(item: dict[str, Any], legacy: dict[str, Any] | None = None) -> Document:
    """`legacy`: the upload options kept beside a document written before they moved onto it
    (an item without `mode`), if any."""
    values = {name: item.get(name) for name in _DOC_FIELDS if name in item}
    if legacy is not None and "mode" not in item:
        values["mode"] = legacy.get("mode") or "fast"
        values["embedding_model_id"] = legacy.get("embeddingModelId")
    values["metadata"] = metadata_of(item)
    values["status"] = DocumentStatus(values["status"])
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    values["updated_at"] = datetime.fromisoformat(values["updated_at"])
    return Document(**values)


def revision_item(revision: Revision) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(revision, name) for name in _REV_FIELDS}
    values["created_at"] = revision.created_at.isoformat()
    return {
        **revision_key(revision.workspace_id, revision.document_id, revision.revision),
        **values,
    }


def to_revision(item: dict[str, Any]) -> Revision:
    values = {name: item.get(name) for name in _REV_FIELDS if name in item}
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    return Revision(**values)


def chunk_item(
    chunk: Chunk, *, content_key: str | None, sentence_terms: bool = True
) -> dict[str, Any]:
    """The chunk by id; `content_key` replaces the text when it was spilled to S3. Without
    `sentence_terms` (no room for it) its sentence reading is left out: a search reads the
    text instead."""
    read = chunk.sentence_terms if sentence_terms else None
    return {
        **chunk_key(chunk.workspace_id, chunk.id),
        "id": chunk.id,
        "document_id": chunk.document_id,
        "workspace_id": chunk.workspace_id,
        "revision": chunk.revision,
        "idx": chunk.index,
        "content": None if content_key else chunk.content,
        "content_key": content_key,
        "start": chunk.start,
        "end": chunk.end,
        "page": chunk.page,
        "page_breaks": encode_page_breaks(chunk.page_breaks),
        **({"sentence_terms": read} if read else {}),  # no attribute where there is none
    }


def to_chunk(item: dict[str, Any], content: str) -> Chunk:
    return Chunk(
        id=item["id"],
        document_id=item["document_id"],
        workspace_id=item["workspace_id"],
        revision=item["revision"],
        index=item["idx"],
        content=content,
        start=item.get("start", 0),
        end=item.get("end", 0),
        page=item.get("page"),
        page_breaks=decode_page_breaks(item.get("page_breaks")),
        sentence_terms=item.get("sentence_terms"),
    )
