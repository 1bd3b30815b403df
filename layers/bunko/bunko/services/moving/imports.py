"""`bunko import`: an archive into a library of this shape, through its ingest wing (each
document embedded again with this shape's model).

Checked whole before anything is written (ArchiveReader.check). Idempotent and resumable:
a document already here with the same bytes, metadata and category, indexed, is left alone;
one a stopped import left queued is queued again; conversations keep ids derived from the
archive's, so none is added twice. Members are added by username; names unknown here are
reported, never made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bunko.domain import DEFAULT_WORKSPACE_ID, Document
from bunko.domain.libraries import Library as LibraryRecord
from bunko.domain.metadata import check_metadata
from bunko.domain.sources import CLI, DROP_FOLDER, S3_DROP, UPLOAD, connector_source
from bunko.errors import BunkoError, NotFoundError, TooManyRequestsError, ValidationError
from bunko.services.ingest import KnownVectors, Upload
from bunko.services.moving.answers import import_answers
from bunko.services.moving.archive import ArchiveReader
from bunko.services.moving.conversations import import_conversations
from bunko.services.moving.items import restore_items
from bunko.services.moving.parts import MovingParts, Progress, library_kind

IMPORT_ACTION = "cli:import"
_SETTINGS = ("min_score", "limit", "run_on_login")  # what a library's settings carry over
# Sources that mirror a place on the exporting side (its drop folder, its S3 drops): here, the
# documents they owned are the operator's, as `bunko ingest`'s are.
_PLACES = frozenset({DROP_FOLDER, S3_DROP})


@dataclass
class ImportReport:
    archive_id: str | None
    library_id: str = ""
    library_name: str = ""
    created: bool = False  # the library was made by this import
    added: int = 0  # documents written (new, or a new revision)
    unchanged: int = 0  # already here with the same bytes: left alone
    indexed: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # path → why indexing failed
    skipped: dict[str, str] = field(default_factory=dict)  # path → why it was not written
    pending: list[str] = field(default_factory=list)  # still indexing when the wait ended
    members_added: list[str] = field(default_factory=list)
    members_missing: list[str] = field(default_factory=list)  # no such username here
    sources_added: list[str] = field(default_factory=list)
    sources_skipped: dict[str, str] = field(default_factory=dict)
    conversations_added: int = 0
    conversations_skipped: int = 0  # their owner has no account here
    items_edited: int = 0  # passages edited by hand in the library exported, restored
    items_deleted: int = 0
    revisions_added: int = 0  # earlier revisions written before a document's current one
    answers_added: int = 0  # marked answers and the missing list's questions
    vectors_reused: int = 0  # passages given the archive's vector, not embedded again
    vectors_embedded: int = 0  # passages embedded here although the archive had vectors
    vectors_unused: str | None = None  # why the archive's vectors were not taken

    def settled(self, path: str, doc: Any) -> None:
        """Count a document whose indexing ended (None: deleted while it was indexed)."""
        if doc is None:
            self.failed[path] = "deleted while it was indexed"
        elif doc.error is not None or str(doc.status) == "failed":
            self.failed[path] = doc.error or "failed"
        else:
            self.indexed += 1


@dataclass
class ImportProgress:
    """Progress callbacks: `total(label, n)` starts a phase of n items, `step(n)` advances."""

    total: Callable[[str, int], None] = lambda label, n: None
    step: Progress = lambda n: None


def import_library(
    parts: MovingParts,
    path: Path,
    *,
    library: str | None = None,
    progress: ImportProgress | None = None,
    wait_seconds: float = 3600.0,
) -> ImportReport:
    """Read the archive at `path` into `library` (a name; default: the archive's own
    library). ArchiveError (recorded as failed, 400, as REST records its 400) before anything
    is written when the archive cannot be trusted."""
    progress = progress or ImportProgress()
    report = ImportReport(archive_id=None)
    reader: ArchiveReader | None = None
    try:
        reader = ArchiveReader(path, max_file_bytes=parts.policy.max_file_bytes)
        manifest = reader.check(parts.policy.path)
        report.archive_id = manifest.get("archive_id")
        workspace = _resolve_target(parts, manifest, library, report)
    except BunkoError:
        if reader is not None:
            reader.close()
        parts.record(
            IMPORT_ACTION,
            status=400,
            library_id=None,
            archive_id=report.archive_id,
        )
        raise
    try:
        _write(parts, reader, manifest, workspace, report, progress, wait_seconds)
    except BaseException:
        parts.record(
            IMPORT_ACTION,
            status=500,
            library_id=report.library_id or workspace,  # the one made, when it was made
            archive_id=report.archive_id,
        )
        raise
    finally:
        reader.close()
    parts.record(IMPORT_ACTION, status=200, library_id=workspace, archive_id=report.archive_id)
    return report


# -- which library -----------------------------------------------------------------------------


def _resolve_target(
    parts: MovingParts, manifest: dict[str, Any], wanted: str | None, report: ImportReport
) -> str | None:
    """The workspace to import into, or None for a shared library still to be made (under
    `report.library_name`). Nothing is written here."""
    archived = manifest["library"]
    kind, name = archived.get("kind"), wanted or archived["name"]
    report.library_name = name
    if parts.libraries is None:
        if wanted not in (None, "default"):
            raise ValidationError("this backend keeps one library, `default`: leave out --library")
        report.library_name = "default"
        return DEFAULT_WORKSPACE_ID
    if wanted is None and kind == "default":
        report.library_name = "default"
        return DEFAULT_WORKSPACE_ID
    try:
        return parts.libraries.workspace_named(name)
    except NotFoundError:
        if wanted is None and kind == "personal":
            raise ValidationError(
                f"the archive is the personal library of {name!r}, who has no account here: "
                "create the user (`bunko user create`) or name a library with --library"
            ) from None
        return None


def _target(parts: MovingParts, workspace: str | None, report: ImportReport) -> str:
    if workspace is None:
        assert parts.libraries is not None
        made = parts.libraries.create_for_operator(report.library_name)
        report.created, report.library_name = True, made.name
        workspace = made.id
    report.library_id = workspace
    return workspace


# -- writing ------------------------------------------------------------------------------------


def _write(
    parts: MovingParts,
    reader: ArchiveReader,
    manifest: dict[str, Any],
    workspace: str | None,
    report: ImportReport,
    progress: ImportProgress,
    wait_seconds: float,
) -> None:
    workspace = _target(parts, workspace, report)
    _members(parts, manifest, workspace, report)
    _settings(parts, manifest, workspace)
    sources = _sources(parts, manifest, workspace, report)
    known = _known_vectors(parts, reader, manifest, workspace, report)
    if known is not None and parts.pipeline is not None:
        parts.pipeline.known = known
    try:
        _write_documents(
            parts, reader, manifest, workspace, sources, report, progress, wait_seconds
        )
    finally:
        if known is not None and parts.pipeline is not None:
            parts.pipeline.known = None
            report.vectors_reused, report.vectors_embedded = known.reused, known.embedded


def _write_documents(
    parts: MovingParts,
    reader: ArchiveReader,
    manifest: dict[str, Any],
    workspace: str,
    sources: dict[str, str],
    report: ImportReport,
    progress: ImportProgress,
    wait_seconds: float,
) -> None:
    progress.total("importing", manifest["documents"])
    waiting: dict[str, str] = {}  # document id → path
    paths: dict[str, str] = {}  # path → document id, for the conversations' citations
    for record in reader.documents():
        doc = _document(parts, reader, record, workspace, sources, report)
        if doc is not None:
            paths[record["path"]] = doc.id
            if not doc.settled:
                waiting[doc.id] = doc.path
        progress.step(1)
    report.conversations_added, report.conversations_skipped = import_conversations(
        parts, reader, workspace, paths
    )
    collect = manifest.get("settings", {}).get("collect_missing")
    report.answers_added = import_answers(
        parts, reader, workspace, paths, collect if isinstance(collect, bool) else None
    )
    _wait(parts, workspace, waiting, report, progress, wait_seconds)
    report.items_edited, report.items_deleted = restore_items(
        parts, reader, workspace, paths, report.skipped
    )


def _document(
    parts: MovingParts,
    reader: ArchiveReader,
    record: dict[str, Any],
    workspace: str,
    sources: dict[str, str],
    report: ImportReport,
) -> Document | None:
    path = parts.policy.path(record["path"])
    if record.get("original") is None:
        report.skipped[path] = "its original was missing in the library exported"
        return None
    metadata = check_metadata(record["metadata"])
    source = sources.get(record["source"], record["source"])
    if source in _PLACES:
        source = CLI  # not this side's drop folder's: its next look would delete the file
    if not parts.operator and source not in sources.values():
        # A person's import: the archive's word for who owns a file is not trusted (`cli`
        # is never counted, a connector never paced); theirs is an upload, counted and paced.
        source = UPLOAD
    here = parts.ingest.document_at(workspace, path)
    if (
        here is not None
        and here.content_hash == record["content_hash"]
        and here.metadata == metadata
        and here.category == (record.get("category") or None)
        and here.settled
    ):
        report.unchanged += 1
        return here
    try:
        report.revisions_added += _earlier_revisions(
            parts, reader, record, workspace, here, path, source
        )
    except BunkoError as exc:  # its history stops there; the current revision still moves
        report.skipped[path] = f"an earlier revision was not written: {exc}"
    upload = _upload(parts, reader, record, workspace, path, source, record["content_hash"])
    try:
        doc = _submit(parts, upload)
    except BunkoError as exc:
        report.skipped[path] = str(exc)
        return None
    report.added += 1
    return doc


def _submit(parts: MovingParts, upload: Upload) -> Document:
    """A person's import (services/moving/jobs.py) is paced as their uploads are: past the
    rate it waits its turn (the Retry-After), as a client does, and loses no document. The
    operator's import is never paced."""
    while True:
        try:
            return parts.ingest.submit(upload)
        except TooManyRequestsError as exc:
            time.sleep(max(exc.retry_after, 0.5))


def _earlier_revisions(
    parts: MovingParts,
    reader: ArchiveReader,
    record: dict[str, Any],
    workspace: str,
    here: Document | None,
    path: str,
    source: str,
) -> int:
    """Write the document's earlier revisions this library lacks, oldest first, before its
    current one (the history as the archive has it): the revisions here must be the
    archive's first ones, else (another document at the path) only the current one is
    written. Each is queued as any new revision is; the pipeline skips one already replaced
    by the next. How many were written."""
    chain = [r["content_hash"] for r in record.get("revisions", [])]
    if not chain:
        return 0
    had: list[str] = []
    if here is not None:
        kept = parts.metadata.list_revisions(workspace, here.id)
        had = [r.content_hash for r in sorted(kept, key=lambda r: r.revision)]
    whole = [*chain, record["content_hash"]]
    if had != whole[: len(had)]:
        return 0
    for content_hash in chain[len(had) :]:
        _submit(parts, _upload(parts, reader, record, workspace, path, source, content_hash))
    return len(chain[len(had) :])


def _upload(
    parts: MovingParts,
    reader: ArchiveReader,
    record: dict[str, Any],
    workspace: str,
    path: str,
    source: str,
    content_hash: str,
) -> Upload:
    return Upload(
        workspace,
        reader.original(content_hash),
        path=path,
        mime=record.get("mime") or None,
        category=record.get("category"),
        chunk_size=record.get("chunk_size"),
        chunk_overlap=record.get("chunk_overlap"),
        source=source,
        metadata=check_metadata(record["metadata"]),
        mode="precise" if record.get("mode") == "precise" else None,
        by_operator=parts.operator,
    )


def _known_vectors(
    parts: MovingParts,
    reader: ArchiveReader,
    manifest: dict[str, Any],
    workspace: str,
    report: ImportReport,
) -> KnownVectors | None:
    """The archive's vectors, when this library embeds with the model that made them (its
    name and dimension) and the indexing runs in this process; else None and why, in
    `report.vectors_unused`."""
    if manifest.get("vectors") is None:
        return None
    embedder = parts.ingest.generations.chosen(workspace).embedder
    if parts.pipeline is None:
        report.vectors_unused = "the ingest function indexes on this shape: it embeds them"
        return None
    first = next(reader.vectors(), None)
    if first is None or embedder is None:
        report.vectors_unused = "no vectors in the archive, or no model here"
        return None
    known = KnownVectors(first["model"], len(first["vector"]))
    if not known.serves(embedder):
        report.vectors_unused = (
            f"they are {first['model']}'s ({len(first['vector'])} dimensions); this "
            f"library embeds with {embedder.name} ({embedder.dimension})"
        )
        return None
    for record in reader.vectors():
        if record["model"] == known.model and not known.add(record["content"], record["vector"]):
            break  # the memory allowed is full: the rest are embedded
    return known


def _members(
    parts: MovingParts, manifest: dict[str, Any], workspace: str, report: ImportReport
) -> None:
    """Add the archive's members the target lacks, by username; a member already here keeps
    the role they have. A personal library has no members but its owner."""
    if parts.libraries is None or parts.users is None:
        report.members_missing = [m.get("username", "?") for m in manifest.get("members", [])]
        return
    kind, _, _ = library_kind(parts, workspace)
    store = parts.libraries.store
    for member in manifest.get("members", []):
        username, role = member.get("username"), member.get("role")
        user = parts.users.get_user_by_username(username) if isinstance(username, str) else None
        if user is None:
            report.members_missing.append(str(username))
            continue
        if kind == "personal" or role not in ("viewer", "editor", "owner"):
            continue
        if workspace == DEFAULT_WORKSPACE_ID and user.is_admin:
            continue  # the default library's owners are the admins already
        if store.role_of(workspace, user.id) is not None:
            continue
        if workspace == DEFAULT_WORKSPACE_ID and store.get_library(workspace) is None:
            store.add_library(LibraryRecord(id=DEFAULT_WORKSPACE_ID, name="default"), owner=None)
        store.set_member(workspace, user.id, role, keep_an_owner=True)
        report.members_added.append(username)


def _settings(parts: MovingParts, manifest: dict[str, Any], workspace: str) -> None:
    if parts.workspace_settings is None:
        return
    carried = {k: v for k, v in manifest.get("settings", {}).items() if k in _SETTINGS}
    if carried:
        parts.workspace_settings.update(workspace, carried, may_watch_folders=False)


def _sources(
    parts: MovingParts, manifest: dict[str, Any], workspace: str, report: ImportReport
) -> dict[str, str]:
    """Add the archive's sources the library lacks (by name); the map of their documents'
    source from the archive's connector to this library's."""
    mapped: dict[str, str] = {}
    if parts.sources is None:
        return mapped
    here = {s.name: s for s in parts.sources.list(workspace)}
    for given in manifest.get("sources", []):
        name, old = given.get("name"), given.get("id")
        record = here.get(name)
        if record is None:
            try:
                settings = {k: v for k, v in (given.get("settings") or {}).items()}
                record = parts.sources.add(
                    workspace, given.get("kind"), name, settings, operator=parts.operator
                )
            except BunkoError as exc:
                report.sources_skipped[str(name)] = str(exc)
                continue
            report.sources_added.append(name)
        if isinstance(old, str) and old:
            mapped[connector_source(old)] = record.source
    return mapped


def _wait(
    parts: MovingParts,
    workspace: str,
    waiting: dict[str, str],
    report: ImportReport,
    progress: ImportProgress,
    wait_seconds: float,
) -> None:
    """Until every document written is indexed (this process's worker on the embedded shape,
    the ingest function on AWS): the metadata store says when, on either."""
    progress.total("indexing", len(waiting))
    deadline, pause = time.monotonic() + wait_seconds, 0.05
    while waiting:
        for document_id, path in list(waiting.items()):
            doc = parts.library.find(workspace, document_id)
            if doc is None or doc.settled:
                del waiting[document_id]
                progress.step(1)
                report.settled(path, doc)
        if not waiting or time.monotonic() >= deadline:
            break
        time.sleep(pause)  # the metadata store is asked again, gently on a cloud table
        pause = min(pause * 1.5, 1.0)
    report.pending = sorted(waiting.values())
