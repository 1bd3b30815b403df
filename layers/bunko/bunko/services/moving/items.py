"""The passages edited or deleted by hand (TelosDB's items: `update_item`, `delete_item`),
restored on the imported documents once they are indexed: the current revision's state, not
only its original."""

from __future__ import annotations

from typing import Any

from bunko.services.moving.archive import ArchiveReader
from bunko.services.moving.parts import MovingParts


def restore_items(
    parts: MovingParts,
    reader: ArchiveReader,
    workspace: str,
    paths: dict[str, str],
    skipped: dict[str, str],
) -> tuple[int, int]:
    """Edit and delete the imported documents' passages as the archive's were; (edited,
    deleted). A document chunked otherwise here (its passages' spans differ) is left as
    indexed and named in `skipped`. Run again, it changes nothing more."""
    edited = deleted = 0
    for record in reader.documents():
        items: dict[str, Any] | None = record.get("items")
        document_id = paths.get(record["path"])
        if not items or document_id is None:
            continue
        spans = {int(i): (int(start), int(end)) for i, start, end in items.get("spans", [])}
        edits = {int(i): text for i, text in (items.get("edits") or {}).items()}
        if not edits and not spans:
            continue
        doc = parts.library.find(workspace, document_id)
        if doc is None or not doc.settled or doc.error is not None:
            continue
        here = {c.index: c for c in parts.library.chunks(workspace, document_id)}
        if any(i in here and (here[i].start, here[i].end) != span for i, span in spans.items()):
            skipped[record["path"]] = "its passages were cut otherwise here: edits not restored"
            continue
        for index, chunk in here.items():
            if index not in spans:
                parts.items.delete_item(workspace, chunk.id)
                deleted += 1
        for index, text in edits.items():
            chunk = here.get(index)
            if chunk is not None and chunk.content != text:
                parts.items.update_item(workspace, chunk.id, text)
                edited += 1
    return edited, deleted
