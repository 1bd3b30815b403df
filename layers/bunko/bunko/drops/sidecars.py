"""Metadata sidecars: `<file name>.metadata.json` beside a dropped file, in the format of
Amazon Bedrock Knowledge Bases' metadata files, so a folder prepared for one serves the other.

    {"metadataAttributes": {"team": "legal", "year": 2024, "tags": ["a", "b"]}}

A value is a string, a number, a yes/no (kept as the text "true" or "false") or a list of
strings; date text stays text and filters as a date. The typed form is read too, its
`includeForEmbedding` ignored:

    {"metadataAttributes": {"team": {"value": {"type": "STRING", "stringValue": "legal"},
                                     "includeForEmbedding": true}}}

Other top-level fields (a CSV's `documentStructureConfiguration`) are ignored. A sidecar is
never a document itself. A sidecar that is not valid (not JSON, over 64 KiB, a key or a value
Bunko's metadata refuses) raises ValidationError saying why: the door logs it and leaves the
document's metadata as it was.

A Markdown file's front matter (domain/front_matter.py) adds the keys its sidecar does not give.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from bunko.domain.front_matter import front_matter
from bunko.domain.metadata import SIDECAR_SUFFIX, Metadata, check_metadata
from bunko.errors import ValidationError

log = logging.getLogger(__name__)

MAX_SIDECAR_BYTES = 64 * 1024

# Bedrock's typed values: the type → the field that holds the value.
_TYPED_FIELDS = {
    "STRING": "stringValue",
    "NUMBER": "numberValue",
    "BOOLEAN": "booleanValue",
    "STRING_LIST": "stringListValue",
}


def is_sidecar(name: str) -> bool:
    """Whether a file (or key) name is a metadata sidecar, never ingested as a document."""
    return name.endswith(SIDECAR_SUFFIX) and len(name) > len(SIDECAR_SUFFIX)


def sidecar_name(name: str) -> str:
    """The sidecar's name for the file `name` (a path or a key works the same)."""
    return name + SIDECAR_SUFFIX


def subject_name(sidecar: str) -> str:
    """The file a sidecar describes (the inverse of `sidecar_name`)."""
    return sidecar[: -len(SIDECAR_SUFFIX)]


def log_refused(path: str, exc: Exception) -> None:
    """The warning for a refused sidecar: which, why, and that the document keeps its
    metadata."""
    log.warning(
        "metadata sidecar %s not used: %s; %s keeps the metadata it had",
        sidecar_name(path),
        exc,
        path,
    )


def parse_sidecar(data: bytes) -> Metadata:
    """The metadata a sidecar's bytes give, checked and in canonical form; ValidationError
    saying why the sidecar is refused."""
    if len(data) > MAX_SIDECAR_BYTES:
        raise ValidationError(f"the file is over {MAX_SIDECAR_BYTES // 1024} KiB")
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ValidationError("not UTF-8 text") from exc
    except ValueError as exc:
        raise ValidationError(f"not valid JSON ({exc})") from exc
    except RecursionError as exc:  # a JSON nested past Python's stack: not a sidecar either
        raise ValidationError("not valid JSON (nested too deep)") from exc
    attributes = raw.get("metadataAttributes") if isinstance(raw, dict) else None
    if not isinstance(attributes, dict):
        raise ValidationError('needs a JSON object {"metadataAttributes": {key: value, ...}}')
    return check_metadata({key: _plain(key, value) for key, value in attributes.items()})


def _plain(key: str, value: Any) -> Any:
    """A Bedrock attribute's value as Bunko's metadata takes it (checked afterwards)."""
    if isinstance(value, Mapping):
        typed = value.get("value")
        kind = typed.get("type") if isinstance(typed, Mapping) else None
        field = _TYPED_FIELDS.get(kind) if isinstance(kind, str) else None
        if field is None:
            raise ValidationError(
                f"metadataAttributes.{key}: a typed value is "
                '{"value": {"type": "STRING" | "NUMBER" | "BOOLEAN" | "STRING_LIST", ...}}'
            )
        if field not in typed:
            raise ValidationError(f"metadataAttributes.{key}: a {kind} value needs {field}")
        value = typed[field]
        if kind == "BOOLEAN" and not isinstance(value, bool):
            raise ValidationError(f"metadataAttributes.{key}: booleanValue is true or false")
        if kind == "NUMBER" and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValidationError(f"metadataAttributes.{key}: numberValue is a number")
        if kind == "STRING" and not isinstance(value, str):
            raise ValidationError(f"metadataAttributes.{key}: stringValue is a string")
        if kind == "STRING_LIST" and not isinstance(value, list):
            raise ValidationError(f"metadataAttributes.{key}: stringListValue is a list")
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def dropped_metadata(
    name: str, data: bytes, sidecar: bytes | None, *, where: str
) -> Metadata | None:
    """The metadata a dropped file brings: its sidecar's (the bytes of `<name>.metadata.json`,
    None when there is none) over its front matter's (a Markdown `name`, `data` its bytes or
    their head). None when it brings none (no sidecar, no front matter): the document keeps
    what it has. ValidationError when the sidecar is refused."""
    given = None if sidecar is None else parse_sidecar(sidecar)
    front = front_matter(name, data, where=where)
    if given is None and front is None:
        return None
    merged = dict(given or {})
    for key, value in (front or {}).items():
        if key in merged:
            continue  # the sidecar wins
        try:  # past the limits of keys or size, the sidecar's keys come first
            merged = check_metadata({**merged, key: value})
        except ValidationError as exc:
            log.warning("front matter of %s: key %r skipped: %s", where, key, exc)
    return merged
