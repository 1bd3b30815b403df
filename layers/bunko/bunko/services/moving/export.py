"""`bunko export`: a library into one archive (services/moving/archive.py), one document's
original in memory at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bunko.domain import DEFAULT_WORKSPACE_ID, Document, DocumentStatus, new_id, utcnow
from bunko.errors import NotFoundError
from bunko.services.moving.answers import collects_missing, export_answers
from bunko.services.moving.archive import (
    CONVERSATIONS,
    DOCUMENTS,
    FORMAT,
    VECTORS,
    VERSION,
    ArchiveWriter,
)
from bunko.services.moving.parts import (
    MovingParts,
    Progress,
    library_kind,
    model_name,
    public_settings,
)

EXPORT_ACTION = "cli:export"
# Settings that name places on the exporting machine: they do not travel.
_MACHINE_SETTINGS = ("monitor_paths",)
_PAGE = 100


@dataclass
class ExportReport:
    archive_id: str
    documents: int = 0
    originals_missing: list[str] = field(default_factory=list)  # paths whose bytes are gone
    revisions: int = 0  # earlier revisions exported with their originals
    conversations: int = 0
    answers: int = 0  # answers people marked or the library collected as missing
    vectors: int = 0
    bytes: int = 0  # the archive's size


def export_library(
    parts: MovingParts,
    workspace_id: str,
    path: Path,
    *,
    conversations: bool = False,
    vectors: bool = False,
    revisions: bool = True,
    progress: Progress | None = None,
) -> ExportReport:
    """Write the library's archive at `path` (replacing a file there only once it is whole),
    and record the export in the audit trail whether it ends well or not. `revisions`: each
    document's earlier revisions too (its history), not only the current one."""
    report = ExportReport(archive_id=new_id())
    try:
        _write(parts, workspace_id, path, report, conversations, vectors, revisions, progress)
    except BaseException:
        parts.record(
            EXPORT_ACTION,
            status=500,
            library_id=workspace_id,
            archive_id=report.archive_id,
        )
        raise
    parts.record(
        EXPORT_ACTION,
        status=200,
        library_id=workspace_id,
        archive_id=report.archive_id,
    )
    return report


def _write(
    parts: MovingParts,
    workspace_id: str,
    path: Path,
    report: ExportReport,
    conversations: bool,
    vectors: bool,
    revisions: bool,
    progress: Progress | None,
) -> None:
    if parts.metadata.get_workspace(workspace_id) is None:
        raise NotFoundError(f"no library {workspace_id}")
    writer = ArchiveWriter(path)
    try:
        paths: dict[str, str] = {}  # document id → path, for the conversations' citations
        for doc in parts.metadata.iter_documents(workspace_id):
            record = document_record(doc)
            record["items"] = _items(parts, doc)
            try:
                data = parts.blobs.get(doc.blob_key or "")
            except NotFoundError:
                report.originals_missing.append(doc.path)
            else:
                record["original"] = writer.add_original(doc.content_hash, data, mime=doc.mime)
            if revisions:
                record["revisions"] = _earlier_revisions(parts, writer, doc)
                report.revisions += len(record["revisions"])
            writer.add_line(DOCUMENTS, record)
            paths[doc.id] = doc.path
            report.documents += 1
            if vectors:
                report.vectors += _add_vectors(parts, writer, doc)
            if progress:
                progress(1)
        if conversations:
            report.conversations = _add_conversations(parts, writer, workspace_id, paths)
            report.answers = export_answers(parts, writer, workspace_id, paths)
        writer.close(_manifest(parts, workspace_id, report, conversations, vectors))
    except BaseException:
        writer.abandon()
        raise
    report.bytes = path.stat().st_size


def document_record(doc: Document) -> dict[str, Any]:
    """One line of documents.jsonl: what the document is, not where this shape keeps it."""
    return {
        "path": doc.path,
        "name": doc.name,
        "mime": doc.mime,
        "size": doc.size,
        "category": doc.category,
        "metadata": doc.metadata,
        "source": doc.source,
        "revision": doc.revision,
        "content_hash": doc.content_hash,
        "status": str(doc.status),
        "error": doc.error,
        "chunk_size": doc.chunk_size,
        "chunk_overlap": doc.chunk_overlap,
        "chunk_count": doc.chunk_count,
        "mode": doc.mode,
        "created_at": doc.created_at.isoformat(),
        "updated_at": doc.updated_at.isoformat(),
        "original": None,
    }


def _earlier_revisions(
    parts: MovingParts, writer: ArchiveWriter, doc: Document
) -> list[dict[str, Any]]:
    """The document's revisions before the current one, oldest first, each with its original
    (kept by both shapes: a new revision never deletes the old one's bytes). One whose bytes
    are gone is left out: the history moves as far as it is kept."""
    earlier = []
    for revision in sorted(
        parts.metadata.list_revisions(doc.workspace_id, doc.id), key=lambda r: r.revision
    ):
        if revision.revision >= doc.revision:
            continue
        try:
            data = parts.blobs.get(revision.blob_key)
        except NotFoundError:
            continue
        earlier.append(
            {
                "revision": revision.revision,
                "content_hash": revision.content_hash,
                "size": revision.size,
                "created_at": revision.created_at.isoformat(),
                "original": writer.add_original(revision.content_hash, data, mime=doc.mime),
            }
        )
    return earlier


def _items(parts: MovingParts, doc: Document) -> dict[str, Any] | None:
    """The current revision's passages as they stand: each one's span in the extracted text,
    and the text of those edited by hand (an item's text no longer the span's). A passage
    deleted by hand is one whose span is missing. None while it has no text (not indexed)."""
    text = parts.library.text(doc) if doc.status is DocumentStatus.COMPLETED else None
    if text is None:
        return None
    chunks = parts.library.chunks(doc.workspace_id, doc.id)
    return {
        "spans": [[c.index, c.start, c.end] for c in chunks],
        "edits": {str(c.index): c.content for c in chunks if c.content != text[c.start : c.end]},
    }


def _add_vectors(parts: MovingParts, writer: ArchiveWriter, doc: Document) -> int:
    """The document's chunks with the vectors the library's model gives them (the import
    embeds again with its own model; these are for tools that read the archive)."""
    chunks = parts.metadata.get_chunks(doc.workspace_id, doc.id)
    embedder = parts.ingest.generations.serving(doc.workspace_id).embedder if chunks else None
    if embedder is None:
        return 0
    for start in range(0, len(chunks), _PAGE):
        batch = chunks[start : start + _PAGE]
        matrix = embedder.embed_documents([c.content for c in batch])
        for chunk, vector in zip(batch, matrix, strict=True):
            writer.add_line(
                VECTORS,
                {
                    "path": doc.path,
                    "index": chunk.index,
                    "content": chunk.content,
                    "model": embedder.name,
                    "vector": [round(float(x), 7) for x in vector],
                },
            )
    return len(chunks)


def _add_conversations(
    parts: MovingParts, writer: ArchiveWriter, workspace_id: str, paths: dict[str, str]
) -> int:
    """Every conversation kept in the library, its owner by username (None: the library's
    own, kept for API keys), each cited document also by path."""
    if parts.conversations is None:
        return 0
    owners: list[tuple[str, str | None]] = [(workspace_id, None)]
    owners += [(u.id, u.username) for u in (parts.users.list_users() if parts.users else [])]
    count = 0
    for owner, username in owners:
        offset = 0
        while True:
            page = parts.conversations.list(workspace_id, owner, limit=_PAGE, offset=offset)
            for head in page:
                whole = parts.conversations.get(workspace_id, owner, head.id)
                writer.add_line(CONVERSATIONS, conversation_record(whole, username, paths))
                count += 1
            if len(page) < _PAGE:
                break
            offset += _PAGE
    return count


def conversation_record(conversation, username: str | None, paths: dict[str, str]) -> dict:
    return {
        "id": conversation.id,
        "owner": username,
        "title": conversation.title,
        "created_at": conversation.created_at.isoformat(),
        "updated_at": conversation.updated_at.isoformat(),
        "messages": [
            {
                "role": m.role,
                "content": m.content,
                "sources": [{**s, "path": paths.get(s.get("documentId") or "")} for s in m.sources],
                "created_at": m.created_at.isoformat(),
                "truncated": m.truncated,
            }
            for m in conversation.messages
        ],
    }


def _manifest(
    parts: MovingParts,
    workspace_id: str,
    report: ExportReport,
    conversations: bool,
    vectors: bool,
) -> dict[str, Any]:
    kind, name, owner = library_kind(parts, workspace_id)
    members: list[dict[str, str]] = []
    if kind == "personal" and owner:
        members.append({"username": owner, "role": "owner"})
    elif parts.libraries is not None and parts.users is not None:
        for membership in parts.libraries.store.members(workspace_id):
            user = parts.users.get_user(membership.user_id)
            if user is not None:
                members.append({"username": user.username, "role": membership.role})
        if workspace_id == DEFAULT_WORKSPACE_ID:  # its owners are the installation's admins
            admins = [u.username for u in parts.users.list_users() if u.is_admin]
            known = {m["username"] for m in members}
            members += [{"username": a, "role": "owner"} for a in admins if a not in known]
    settings: dict[str, Any] = {}
    if parts.workspace_settings is not None:
        saved = parts.workspace_settings.get(workspace_id)
        settings = {k: v for k, v in saved.items() if k not in _MACHINE_SETTINGS}
    collect = collects_missing(parts, workspace_id)
    if collect is not None:  # the missing list's collection, on or off (docs/answers.md)
        settings["collect_missing"] = collect
    sources = []
    for source in parts.sources.list(workspace_id) if parts.sources else []:
        sources.append(
            {
                "id": source.id,
                "name": source.name,
                "kind": source.kind,
                "settings": public_settings(source.settings),
                "private": source.private,
                "created_at": source.created_at,
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "archive_id": report.archive_id,
        "exported_at": utcnow().isoformat(),
        "library": {"id": workspace_id, "name": name, "kind": kind, "owner": owner},
        "embedding_model": model_name(parts, workspace_id),
        "settings": settings,
        "members": members,
        "sources": sources,
        "documents": report.documents,
        "originals_missing": report.originals_missing,
        "revisions": report.revisions,
        "conversations": report.conversations if conversations else None,
        "answers": report.answers if conversations else None,
        "vectors": report.vectors if vectors else None,
    }
