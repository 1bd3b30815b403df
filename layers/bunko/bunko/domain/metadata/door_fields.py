"""Metadata as the doors carry it: a dropped file's sidecar, JSON text fields of forms and query
strings, and the summary of a library's keys a person builds a filter from."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from bunko.domain.metadata.values import Value, is_date, shown
from bunko.errors import ValidationError

# A dropped file's metadata sidecar: `<file name>.metadata.json`, holding
# {"metadataAttributes": {...}} (Amazon Bedrock Knowledge Bases' convention; drops/sidecars.py).
SIDECAR_SUFFIX = ".metadata.json"


def sidecar_json(metadata: Mapping[str, Value]) -> bytes:
    """A sidecar's bytes for checked metadata (what the drops read back unchanged)."""
    return json.dumps({"metadataAttributes": shown(metadata)}, ensure_ascii=False).encode()


def decode_json(text: str | None, field: str) -> object:
    """A JSON text field of a form or query string (`metadata`, `filter`), decoded; None when
    left out or blank."""
    if text is None or not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValidationError(
            f"{field}: not valid JSON ({exc.msg} at character {exc.pos})"
        ) from exc


def summarise(
    metadatas: Iterable[Mapping[str, Value]], *, values: int = 50
) -> list[dict[str, Any]]:
    """The keys a library's documents use, for a person building a filter: each key's value
    types (string, number, date, list) and its most common text values (at most `values`)."""
    types: dict[str, set[str]] = {}
    counts: dict[str, dict[str, int]] = {}
    for metadata in metadatas:
        for key, value in metadata.items():
            seen = counts.setdefault(key, {})
            if isinstance(value, float):
                types.setdefault(key, set()).add("number")
                continue
            kind = "list" if isinstance(value, list) else "date" if is_date(value) else "string"
            types.setdefault(key, set()).add(kind)
            for item in value if isinstance(value, list) else [value]:
                seen[item] = seen.get(item, 0) + 1
    return [
        {
            "key": key,
            "types": sorted(types[key]),
            "values": [v for v, _ in sorted(counts[key].items(), key=lambda kv: (-kv[1], kv[0]))][
                :values
            ],
        }
        for key in sorted(types)
    ]
