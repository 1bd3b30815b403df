"""Where a document's blobs live: each revision's original and its extracted text."""

from __future__ import annotations


def original_key(workspace_id: str, document_id: str, revision: int) -> str:
    return f"originals/{workspace_id}/{document_id}/{revision}"


def text_key(workspace_id: str, document_id: str, revision: int) -> str:
    return f"texts/{workspace_id}/{document_id}/{revision}.txt"
