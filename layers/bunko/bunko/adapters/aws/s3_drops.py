"""S3 event notifications for the drop prefix: parsing, and mapping keys to Bunko paths.

A dropped object's key is `<drop_prefix><workspace>/<path>`: the first segment names the
workspace (its id, or `default` for the default workspace), the rest is the document's
logical path, and the path's first folder is its category, as in the local drop folder
(`drop/default/manuals/guide.pdf` → workspace default, path `manuals/guide.pdf`, category
`manuals`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, unquote, unquote_plus

from bunko.domain import DEFAULT_WORKSPACE_ID

DEFAULT_ALIAS = "default"
# Object metadata (x-amz-meta-bunko-category) that overrides the folder's category. S3
# metadata is ASCII, so the value is percent-encoded UTF-8.
CATEGORY_METADATA = "bunko-category"
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


def locate(key: str, *, drop_prefix: str) -> DropTarget | None:
    """Where a dropped key belongs, or None for keys Bunko ignores (folder markers, hidden and
    temporary files, keys outside the drop prefix)."""
    if not key.startswith(drop_prefix) or key.endswith("/"):
        return None
    parts = [p for p in key[len(drop_prefix) :].split("/") if p]
    if len(parts) < 2:
        return None
    if any(p.startswith((".", "~$")) for p in parts) or parts[-1].endswith(_IGNORED_SUFFIXES):
        return None
    workspace = DEFAULT_WORKSPACE_ID if parts[0] == DEFAULT_ALIAS else parts[0]
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
