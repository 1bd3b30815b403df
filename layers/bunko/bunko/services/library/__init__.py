"""Library: what a library holds, read one way by every door (its documents, a page of them,
a document's text and chunks, its categories and metadata keys), and where a document's blobs
live."""

from bunko.services.library.blob_keys import original_key, text_key
from bunko.services.library.library import (
    CHUNK_PAGE_SIZE,
    MAX_CHUNK_PAGE_SIZE,
    MAX_CHUNK_POSITION,
    MAX_PAGE_SIZE,
    ChunkPage,
    DocumentPage,
    DocumentView,
    IndexingProgress,
    Library,
    stored_text,
)
from bunko.services.library.originals import OriginalFiles

__all__ = [
    "CHUNK_PAGE_SIZE",
    "MAX_CHUNK_PAGE_SIZE",
    "MAX_CHUNK_POSITION",
    "MAX_PAGE_SIZE",
    "ChunkPage",
    "DocumentPage",
    "DocumentView",
    "IndexingProgress",
    "Library",
    "OriginalFiles",
    "original_key",
    "stored_text",
    "text_key",
]
