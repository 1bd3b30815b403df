"""What moving a library reads and writes: the same services and ports on either shape
(the embedded data folder, or a deployment's table, bucket and index with BUNKO_BACKEND=aws),
so one export and one import serve both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bunko.domain import DEFAULT_WORKSPACE_ID, utcnow
from bunko.domain.accounts import OPERATOR
from bunko.domain.audit import AuditEvent, outcome_of
from bunko.ports import BlobStore, MetadataStore, UserStore
from bunko.services.accounts import AuditTrail, LibraryService
from bunko.services.chat import AnswerBook, ConversationService
from bunko.services.ingest import ChunkItemsService, IndexingPipeline, IngestService, UploadPolicy
from bunko.services.library import Library
from bunko.services.settings import WorkspaceSettingsService
from bunko.services.sources import Sources

# A progress callback: how many more items are done.
Progress = Callable[[int], None]


@dataclass
class MovingParts:
    """The services and ports an export or an import uses (bootstrap/moving.py builds it).
    The account parts are None on a shape without accounts: then only the default library
    moves, without members."""

    metadata: MetadataStore
    blobs: BlobStore
    library: Library
    ingest: IngestService
    policy: UploadPolicy
    items: ChunkItemsService  # a passage edited or deleted by hand, restored after indexing
    libraries: LibraryService | None = None
    users: UserStore | None = None
    workspace_settings: WorkspaceSettingsService | None = None
    sources: Sources | None = None
    conversations: ConversationService | None = None
    audit: AuditTrail | None = None
    answers: AnswerBook | None = None  # answers people marked and the missing list
    # The indexing pipeline when it runs in this process (the embedded shape's worker): an
    # import hands it the archive's vectors to reuse. None on AWS, where a function indexes.
    pipeline: IndexingPipeline | None = None
    # False: a person moving it over the network (services/moving/jobs.py): the quota and the
    # sources' rules of people apply, not the machine operator's
    operator: bool = True

    def record(
        self,
        action: str,
        *,
        status: int,
        library_id: str | None,
        archive_id: str | None,
    ) -> None:
        """The audit trail's event for an export or import the machine's operator ran; its
        outcome is the one REST records for the same status (outcome_of)."""
        if self.audit is None:
            return
        self.audit.record(
            AuditEvent(
                action=action,
                outcome=outcome_of(status),
                status=status,
                user_id=OPERATOR,
                library_id=library_id,
                object_kind="archive",
                object_id=archive_id,
                door="cli",
                at=utcnow(),
            )
        )


def model_name(parts: MovingParts, workspace_id: str) -> str:
    """The embedding model the library's documents are (or will be) searched with."""
    embedder = parts.ingest.generations.serving(workspace_id).embedder
    return embedder.name if embedder is not None else "none (keyword search only)"


def library_kind(parts: MovingParts, workspace_id: str) -> tuple[str, str, str | None]:
    """(kind, name, owner's username): "default", "shared" or "personal"."""
    if workspace_id == DEFAULT_WORKSPACE_ID or parts.libraries is None:
        return "default", "default", None
    shared = parts.libraries.store.get_library(workspace_id)
    if shared is not None:
        return "shared", shared.name, None
    owner = next(
        (
            u
            for u in (parts.users.list_users() if parts.users else [])
            if u.workspace_id == workspace_id
        ),
        None,
    )
    if owner is None:
        return "shared", workspace_id, None
    return "personal", owner.username, owner.username


# Settings of a source that could hold a secret are never exported; a URL loses its
# user:password part and any query value whose name says it is a secret.
_SECRET_WORDS = (
    "token",
    "secret",
    "password",
    "passwd",
    "key",
    "auth",
    "credential",
    "cookie",
    "signature",
)


def is_secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def public_url(url: str) -> str:
    """`url` without its credentials: userinfo and secret-named query values are dropped."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url  # a path on the machine (a local Git repository)
    host = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(
        pair for pair in parts.query.split("&") if pair and not is_secret_name(pair.split("=")[0])
    )
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))


def public_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """A source's settings fit to leave the machine: no secret-named setting, URLs clean."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if is_secret_name(key):
            continue
        out[key] = public_url(value) if isinstance(value, str) and "://" in value else value
    return out
