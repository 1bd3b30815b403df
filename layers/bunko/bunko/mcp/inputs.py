"""Input models: strict (unknown fields refused, no type coercion), bounded, documented.

Names and defaults are TelosDB's (seeds/telosdb-mcp-api-spec.txt); the rigour is sosoapi's.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from pydantic import Field

from bunko.operations.models import StrictInput
from bunko.services.bounds import QUERY_CHARS, RESULTS
from bunko.services.ingest import MAX_ITEM_CHARS
from bunko.services.library import MAX_PAGE_SIZE

# The documented limits an agent can plan around (README, docs/mcp.md).
MAX_QUERY_CHARS = QUERY_CHARS  # as every door's (services/bounds/request_limits.py)
MAX_CONTENT_CHARS = 1_000_000  # add_item_text: about 1 MB of ASCII, 3 MB of Japanese
MAX_PATH_CHARS = 1_024
MAX_CATEGORY_CHARS = 200
MIME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"


MetadataFilter = Field(
    None,
    description="Only documents whose metadata passes this filter. One operator per object: "
    '{"equals": {"key": "team", "value": "legal"}}, {"in": {"key": "team", "values": [...]}}, '
    '{"range": {"key": "year", "gte": 2020, "lt": 2025}} (gt/gte/lt/lte; numbers or ISO dates), '
    '{"exists": {"key": "reviewed"}}, {"andAll": [...]}, {"orAll": [...]}; the key "category" '
    "is the document's category. list_metadata_keys gives the keys and common values.",
)
SourceFilter = Field(
    None,
    min_length=1,
    max_length=200,
    description="Only documents this source owns: a source's name in the library (list_sources), "
    "connector:<id>, or a door's own: upload, presign, agent, cli, drop, s3, api.",
)
DocumentMetadata = Field(
    None,
    description="Key → value metadata that searches can filter by: a string, a number, an "
    "ISO 8601 date or a list of strings per key (at most 32 keys; letters, digits, '_' and "
    "'-' in a key). Omitted: a document at the path keeps its own.",
)

Category = Field(
    None,
    max_length=MAX_CATEGORY_CHARS,
    description="A category label, as list_categories returns them; empty or omitted: none.",
)


class SearchTextInput(StrictInput):
    content: str = Field(
        max_length=MAX_QUERY_CHARS,
        description="The query: a few words or a sentence, in any language. "
        "An empty query returns no items.",
    )
    limit: int = Field(5, ge=1, le=RESULTS, description="Maximum number of results.")
    min_score: float = Field(
        0.3, ge=0.0, le=1.0, description="Similarity cut-off in [0, 1]; lower finds more."
    )
    group_by_document: bool = Field(
        True, description="Join each document's matching chunks into one result."
    )
    category: str | None = Category
    filter: dict[str, Any] | None = MetadataFilter
    source: str | None = SourceFilter


class AddItemTextInput(StrictInput):
    content: str = Field(
        min_length=1, max_length=MAX_CONTENT_CHARS, description="The text to store and index."
    )
    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="The document's logical path, unique in the knowledge base "
        "(e.g. notes/meeting-2024-05-01.md). Adding to an existing path replaces its text "
        "with a new revision.",
    )
    mime: str | None = Field(
        None,
        pattern=MIME_PATTERN,
        description="A text MIME type; guessed from the path's extension when omitted.",
    )
    category: str | None = Category
    metadata: dict[str, Any] | None = DocumentMetadata


class ItemIdInput(StrictInput):
    id: UUID = Field(description="An item (chunk) id, as search_text or get_document return.")


class UpdateItemInput(ItemIdInput):
    content: str = Field(
        min_length=1, max_length=MAX_ITEM_CHARS, description="The item's new text."
    )


class ListDocumentsInput(StrictInput):
    limit: int = Field(20, ge=1, le=MAX_PAGE_SIZE, description="Documents per page.")
    page: int = Field(
        1, ge=1, le=10_000_000, description="Page number from 1; a page past the end is empty."
    )
    category: str | None = Category
    filter: dict[str, Any] | None = MetadataFilter


class NoInput(StrictInput):
    pass


class DocumentIdInput(StrictInput):
    id: UUID = Field(description="A document id, as list_documents or search_text return.")


class SetMetadataInput(DocumentIdInput):
    metadata: dict[str, Any] = Field(
        description="The document's new metadata, replacing what it had ({} removes it all): "
        "key → a string, a number, an ISO 8601 date or a list of strings."
    )


class AddFileInput(StrictInput):
    file: str = Field(
        min_length=1,
        max_length=4_096,
        description="A file on this machine (absolute, or relative to the server's folder).",
    )
    path: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="The logical path to store it at; defaults to the file's absolute path.",
    )
    category: str | None = Category
    metadata: dict[str, Any] | None = DocumentMetadata
