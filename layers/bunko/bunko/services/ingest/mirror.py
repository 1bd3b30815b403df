"""mirror(source, seen): a library kept in step with a place a source watches (the drop
folder, S3 drops, a connector), the one rule every such source follows.

What the source put here and no longer sees is deleted; a document another source owns
(domain/sources.py) is never touched, whatever its path. A renamed file keeps its document
(its id, its revisions, its metadata) where the source can tell the rename: the source says
so (`moved`: new path → old path, as a Git diff or a delta API reports it), or the bytes tell
it (`fingerprint`: a gone document's content hash is the bytes at a path it sees that holds no
document yet, as a file moved in the drop folder). A document still being indexed is not
renamed (the indexer saves the copy it read, old path and all): it goes, and the file at its
new path is ingested as a new document.

`within` narrows what the source looks at now: one path, or a folder as `path/` (a file or
folder the drop folder's watcher saw deleted, an S3 key removed); None is the whole library.
A path seen outside it is still a rename's possible target.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from bunko.domain import Document
from bunko.domain.sources import within as in_scope
from bunko.errors import ConflictError, StaleError, ValidationError
from bunko.ports import DocumentStore
from bunko.services.ingest.upload_policy import normalise_path


@dataclass
class Mirrored:
    """What one mirror changed."""

    deleted: list[Document] = field(default_factory=list)
    renamed: list[tuple[str, Document]] = field(default_factory=list)  # (old path, document)


def _normalised(path: str) -> str | None:
    """`path` as documents keep it; None when no document can be at it."""
    try:
        return normalise_path(path)
    except ValidationError:
        return None


def _scopes(paths: Iterable[str] | None) -> tuple[str, ...] | None:
    if paths is None:
        return None
    scopes = []
    for path in paths:
        clean = _normalised(path.rstrip("/"))
        if clean is not None:
            scopes.append(clean + "/" if path.endswith("/") else clean)
    return tuple(scopes)


def gone_and_renamed(
    store: DocumentStore,
    workspace_id: str,
    source: str,
    seen: Iterable[str],
    *,
    within: Iterable[str] | None,
    moved: Mapping[str, str] | None,
    fingerprint: Callable[[str], str | None] | None,
) -> tuple[list[Document], list[tuple[Document, str]]]:
    """The source's documents it no longer sees, and of those the ones renamed (the document
    and its new path): the plan of a mirror, read from the store, nothing written."""
    raw = {}
    for path in seen:
        clean = _normalised(path)
        if clean is not None:
            raw[clean] = path  # the source's own spelling, which `fingerprint` is asked for
    scopes = _scopes(within)
    owned = list(store.iter_source_documents(workspace_id, source))
    owned_paths = {d.path for d in owned}
    gone = [d for d in owned if d.path not in raw and in_scope(d.path, scopes)]
    if not gone:
        return [], []
    # Where a rename can land: a seen path that holds none of this source's documents (one
    # another source holds is checked when the move is written: it is refused).
    free = sorted(p for p in raw if p not in owned_paths)
    renames: list[tuple[Document, str]] = []
    by_path = {d.path: d for d in gone}
    for new, old in (moved or {}).items():
        new_clean, old_clean = _normalised(new), _normalised(old)
        doc = by_path.get(old_clean or "")
        if doc is not None and new_clean in free:
            renames.append((doc, new_clean))
            del by_path[doc.path]
            free.remove(new_clean)
    if fingerprint is not None and by_path and free:
        by_hash: dict[str, list[Document]] = {}
        for doc in by_path.values():
            if doc.content_hash:
                by_hash.setdefault(doc.content_hash, []).append(doc)
        for path in free:
            if not by_hash:
                break
            digest = fingerprint(raw[path])
            twins = by_hash.get(digest or "")
            if twins:
                doc = twins.pop(0)
                if not twins:
                    del by_hash[digest or ""]
                renames.append((doc, path))
                del by_path[doc.path]
    return gone, renames


def move(store: DocumentStore, doc: Document, path: str) -> Document | None:
    """Give the settled document `doc` the path `path` (and its name), nothing else changed;
    None when it cannot move: it is being indexed, it went meanwhile, or `path` is taken."""
    for _ in range(4):
        current = store.get_document(doc.workspace_id, doc.id)
        if current is None or not current.settled:
            return None
        current.move_to(path)
        try:
            store.save_document(current, if_revision=current.revision)
        except ConflictError:
            return None  # another document took the path meanwhile
        except StaleError:
            continue  # a new revision meanwhile: look again
        return current
    return None
