"""S3 event notifications for the drop prefix: parsing, and mapping keys to Bunko paths.

A dropped object's key is `<drop_prefix><workspace>/<path>`: the first segment names the
workspace (its id, or `default` for the default workspace), the rest is the document's
logical path, and the path's first folder is its category, as in the local drop folder
(`drop/default/manuals/guide.pdf` → workspace default, path `manuals/guide.pdf`, category
`manuals`).

An upload's options travel as object metadata (`x-amz-meta-bunko-*`), signed into a presigned
PUT: the category, and /upload's chunkSize, chunkOverlap and mode. S3 lowercases metadata
names, so they are spelled in kebab case (`bunko-chunk-size` for `chunkSize`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, unquote, unquote_plus

from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.drop_routes import DropRoutes
from bunko.domain.ingest_options import MAX_CHUNK_OVERLAP, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE, MODES
from bunko.errors import ValidationError
from bunko.ports.uploads import DropOptions

DEFAULT_ALIAS = "default"
# Object metadata (x-amz-meta-bunko-category) that overrides the folder's category. S3
# metadata is ASCII, so the value is percent-encoded UTF-8.
CATEGORY_METADATA = "bunko-category"
CHUNK_SIZE_METADATA = "bunko-chunk-size"
CHUNK_OVERLAP_METADATA = "bunko-chunk-overlap"
MODE_METADATA = "bunko-mode"
# Set on a presigned upload (signed, so the uploader cannot drop it): its ingest applies the
# uploader's storage quota, which an operator's drop does not.
PRESIGNED_METADATA = "bunko-presigned"
_IGNORED_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", "~")


@dataclass(frozen=True)
class DropEvent:
    kind: Literal["created", "removed"]
    bucket: str
    key: str
    version_id: str | None = None
    sequencer: str | None = None


@dataclass(frozen=True)
class DropTarget:
    workspace_id: str
    path: str
    category: str | None


def parse_notifications(body: dict[str, Any]) -> list[DropEvent] | None:
    """The object events in an S3 notification body; [] for S3's test event; None if the body
    is not an S3 notification at all."""
    if body.get("Event") == "s3:TestEvent":
        return []
    records = body.get("Records")
    if not isinstance(records, list):
        return None
    events = []
    for record in records:
        name = str(record.get("eventName", ""))
        if name.startswith("ObjectCreated:"):
            kind: Literal["created", "removed"] = "created"
        elif name.startswith("ObjectRemoved:"):
            kind = "removed"
        else:
            continue
        s3 = record["s3"]
        obj = s3["object"]
        events.append(
            DropEvent(
                kind=kind,
                bucket=s3["bucket"]["name"],
                # Keys arrive URL-encoded, spaces as '+'.
                key=unquote_plus(obj["key"]),
                version_id=obj.get("versionId"),
                sequencer=obj.get("sequencer"),
            )
        )
    return events


def locate(key: str, *, drop_prefix: str, routes: DropRoutes | None = None) -> DropTarget | None:
    """Where a dropped key belongs, or None for keys Bunko ignores (folder markers, hidden and
    temporary files, keys outside the drop prefix). With `routes` (what an admin chose:
    services/settings/drop_routes.py), `default` is the drop folder's library and a mapped
    first segment goes to its library, keeping its path and category as in the local folder
    (`drop/legal/lease.pdf` → path `legal/lease.pdf`, category `legal`)."""
    if not key.startswith(drop_prefix) or key.endswith("/"):
        return None
    parts = [p for p in key[len(drop_prefix) :].split("/") if p]
    if len(parts) < 2:
        return None
    if any(p.startswith((".", "~$")) for p in parts) or parts[-1].endswith(_IGNORED_SUFFIXES):
        return None
    routes = routes or DropRoutes()
    mapped = routes.subfolders.get(unicodedata.normalize("NFC", parts[0]))
    if mapped:
        return DropTarget(workspace_id=mapped, path="/".join(parts), category=parts[0])
    if parts[0] == DEFAULT_ALIAS:
        workspace = routes.folder_library(DEFAULT_WORKSPACE_ID)
    else:
        workspace = parts[0]
    relative = parts[1:]
    category = relative[0] if len(relative) > 1 else None
    return DropTarget(workspace_id=workspace, path="/".join(relative), category=category)


def drop_key(*, drop_prefix: str, workspace_id: str, path: str) -> str:
    """The key a client uploads to so that the file is ingested at `path` (the inverse of
    `locate`)."""
    return f"{drop_prefix}{workspace_id}/{path.lstrip('/')}"


def category_metadata(category: str) -> dict[str, str]:
    return {CATEGORY_METADATA: quote(category, safe="")}


def category_from_metadata(metadata: dict[str, str]) -> str | None:
    value = metadata.get(CATEGORY_METADATA)
    return unquote(value) if value else None


def drop_metadata(options: DropOptions) -> dict[str, str]:
    """The object metadata that carries `options` to the drop's ingest (the options left at
    their default are left out)."""
    metadata = category_metadata(options.category) if options.category else {}
    if options.chunk_size is not None:
        metadata[CHUNK_SIZE_METADATA] = str(options.chunk_size)
    if options.chunk_overlap is not None:
        metadata[CHUNK_OVERLAP_METADATA] = str(options.chunk_overlap)
    if options.mode is not None:
        metadata[MODE_METADATA] = options.mode
    if options.presigned:
        metadata[PRESIGNED_METADATA] = "1"
    return metadata


def drop_options(metadata: Mapping[str, str]) -> DropOptions:
    """The options an object's metadata carries (the inverse of `drop_metadata`).
    ValidationError for a value /upload would refuse: presign signs none, but anyone who may
    write to the drop prefix can set metadata by hand."""
    mode = metadata.get(MODE_METADATA) or None
    if mode is not None and mode not in MODES:
        raise ValidationError(f"x-amz-meta-{MODE_METADATA}: {' or '.join(MODES)}, not {mode!r}")
    return DropOptions(
        category=category_from_metadata(metadata),
        chunk_size=_count(metadata, CHUNK_SIZE_METADATA, MIN_CHUNK_SIZE, MAX_CHUNK_SIZE),
        chunk_overlap=_count(metadata, CHUNK_OVERLAP_METADATA, 0, MAX_CHUNK_OVERLAP),
        mode=mode,
        presigned=metadata.get(PRESIGNED_METADATA) == "1",
    )


def _count(metadata: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    """A whole number of characters within /upload's bounds for the same field."""
    raw = metadata.get(name)
    if raw is None or raw == "":
        return None
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise ValidationError(
            f"x-amz-meta-{name}: a whole number from {low} to {high}, not {raw!r}"
        )
    return int(raw)
