"""A connector: a source with its own id and settings (kind `web` or `git`), and what one
sync of it did."""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from bunko.domain.sources import connector_source
from bunko.errors import ValidationError
from bunko.services.sources.schedule import DEFAULT_EVERY, next_sync_at

KINDS = ("web", "git")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

# Bounds of one run, unless a source's settings say less (or more, up to the ceilings).
DEFAULTS: dict[str, dict[str, Any]] = {
    "web": {
        "max_pages": 500,
        "max_bytes": 200_000_000,
        "max_seconds": 900,
        "max_page_bytes": 10_000_000,
        "sitemap": None,
    },
    "git": {
        "branch": "main",
        "include": [],
        "exclude": [],
        "max_files": 5_000,
        "max_bytes": 500_000_000,
        "max_seconds": 900,
    },
}
CEILINGS = {
    "max_pages": 100_000,
    "max_files": 1_000_000,
    "max_bytes": 10_000_000_000,
    "max_seconds": 86_400,
    "max_page_bytes": 100_000_000,
}


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValidationError(
            "source name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


def check_settings(kind: str, given: dict[str, Any]) -> dict[str, Any]:
    """The source's settings: its kind's defaults with what was given, checked."""
    if kind not in KINDS:
        raise ValidationError(f"source kind: one of {', '.join(KINDS)}, not {kind!r}")
    settings = dict(DEFAULTS[kind])
    unknown = set(given) - set(settings) - {"url", "folder"}
    if unknown:
        raise ValidationError(f"{kind} source: unknown settings {', '.join(sorted(unknown))}")
    settings.update({k: v for k, v in given.items() if v is not None})
    if not isinstance(settings.get("url"), str) or not settings["url"].strip():
        what = "a start URL or a sitemap URL" if kind == "web" else "an https URL or a path"
        raise ValidationError(f"{kind} source: needs {what} (url)")
    for key, ceiling in CEILINGS.items():
        if key in settings:
            value = settings[key]
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= ceiling:
                raise ValidationError(f"{key}: a whole number from 1 to {ceiling:,}")
    for key in ("include", "exclude"):
        if key in settings:
            value = settings[key]
            if not isinstance(value, list) or not all(isinstance(g, str) and g for g in value):
                raise ValidationError(f"{key}: a list of glob patterns")
    return settings


@dataclass
class SourceRecord:
    """A connector as kept: `id` is fixed at creation; its documents' source is
    `connector:<id>`; `folder` is where its documents' paths start in the library."""

    id: str
    workspace_id: str
    name: str
    kind: str
    settings: dict[str, Any]
    created_at: float = field(default_factory=time.time)
    last_sync: dict[str, Any] | None = None
    # May its URLs reach loopback and private addresses: fixed when it is added, by who
    # added it (the operator, or a person over the network) and the deployment's setting.
    private: bool = False
    # Its schedule (services/sources/schedule.py): seconds between syncs (None: on demand
    # only), and paused (no sync by itself until resumed; on demand still works).
    every: int | None = DEFAULT_EVERY
    paused: bool = False

    @property
    def next_sync_at(self) -> float | None:
        return next_sync_at(
            every=self.every,
            paused=self.paused,
            created_at=self.created_at,
            last_sync=self.last_sync,
        )

    @property
    def source(self) -> str:
        return connector_source(self.id)

    @property
    def folder(self) -> str:
        return (self.settings.get("folder") or self.name).strip("/")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SourceRecord:
        return cls(**{k: raw[k] for k in cls.__dataclass_fields__ if k in raw})


@dataclass
class SyncReport:
    """What one sync changed and what it cost. Paths are library paths."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (old, new)
    unchanged: int = 0
    errors: dict[str, str] = field(default_factory=dict)  # path or URL → why
    requests: int = 0  # HTTP requests (web) or fetches (git)
    fetched: int = 0  # pages whose body was downloaded (web) or blobs read (git)
    not_modified: int = 0  # conditional requests answered 304 (web)
    bytes: int = 0
    seconds: float = 0.0
    complete: bool = True  # False: a bound stopped it; the next sync goes on
    stopped_by: str | None = None  # max_pages, max_files, max_bytes, max_seconds
    revision: str | None = None  # git: the commit synced
    failed: str | None = None  # the whole sync could not run (nothing was deleted)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["renamed"] = [list(pair) for pair in self.renamed]
        return out

    def summary(self) -> dict[str, Any]:
        """What a listing shows of the last sync: counts, errors, when."""
        return {
            "added": len(self.added),
            "changed": len(self.changed),
            "deleted": len(self.deleted),
            "renamed": len(self.renamed),
            "unchanged": self.unchanged,
            "errors": dict(list(self.errors.items())[:50]),
            "error_count": len(self.errors),
            "requests": self.requests,
            "fetched": self.fetched,
            "complete": self.complete,
            "stopped_by": self.stopped_by,
            "revision": self.revision,
            "failed": self.failed,
            "seconds": round(self.seconds, 3),
            "at": time.time(),
        }
