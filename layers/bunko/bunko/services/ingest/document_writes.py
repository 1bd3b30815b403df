"""Many documents' status and chunk writes: in one transaction where the store can
(`DocumentWrites`), otherwise one document at a time with the same results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bunko.errors import NotFoundError, StaleError
from bunko.ports import DocumentWrite, DocumentWrites, MetadataStore


def write_documents(
    metadata: MetadataStore, writes: Sequence[DocumentWrite]
) -> list[list[str] | None]:
    """Per write, the ids of the chunks it removed, or None when its document was deleted or
    has a newer revision (see `DocumentWrites.write_documents`)."""
    if not writes:
        return []
    if isinstance(metadata, DocumentWrites):
        return metadata.write_documents(writes)
    return [_write_one(metadata, w) for w in writes]


def _write_one(metadata: MetadataStore, write: DocumentWrite) -> list[str] | None:
    # Not atomic: a revision added between the chunk write and the save leaves this revision's
    # chunks behind, until the newer revision's job replaces them (as it always did).
    doc = write.document
    try:
        removed: list[str] = []
        current = metadata.get_document(doc.workspace_id, doc.id)
        if current is None or current.revision != doc.revision:
            return None
        if write.chunks is not None:
            new = {c.id for c in write.chunks}
            old = metadata.get_chunks(doc.workspace_id, doc.id)
            removed = [c.id for c in old if c.id not in new]
            metadata.replace_chunks(doc.workspace_id, doc.id, write.chunks)
        # The metadata as stored: an edit made while the document was indexed stays.
        metadata.save_document(replace(doc, metadata=current.metadata), if_revision=doc.revision)
    except (NotFoundError, StaleError):
        return None
    return removed
