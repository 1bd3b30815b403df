"""A connector: a source with its own id and settings (kind `web`, `git`, `confluence`,
`sharepoint`, `gdrive`), and what one sync of it did."""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from bunko.domain.sources import connector_source
from bunko.errors import ValidationError
from bunko.services.sources.schedule import DEFAULT_EVERY, next_sync_at

KINDS = ("web", "git", "confluence", "sharepoint", "gdrive")
# Kinds that read a service in someone's name: they may keep a credential (encrypted at rest
# by the SecretCipher model configs' keys use, never returned by any door). A website and a
# Git remote are read anonymously, so a credential given them would be a promise not kept.
CREDENTIAL_KINDS = ("confluence", "sharepoint", "gdrive")
# The SecretCipher's own bound: KMS encrypts at most 4 KB directly.
MAX_CREDENTIAL = 4096
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# A Confluence space key: letters and digits (a personal space: `~` and a user's name or id).
_SPACE = re.compile(r"^~?[A-Za-z0-9][A-Za-z0-9_:-]{0,254}$")
# A drive's or an item's id (Graph: letters, digits, '!', '-', '_'; Drive: letters, digits,
# '-', '_'): it goes into request paths and queries, so nothing else.
_DRIVE_ID = re.compile(r"^[A-Za-z0-9!_.-]{1,400}$")
DOC_EXPORTS = ("text", "markdown", "docx")  # how a Google Doc is kept

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
    "confluence": {
        "space": None,
        "edition": None,  # cloud (REST v2) or datacenter (REST v1); None: by the URL's host
        "attachments": True,
        "max_pages": 500,
        "max_bytes": 200_000_000,  # held until the mirror has run, as a website's pages
        "max_seconds": 900,
    },
    "sharepoint": {
        "url": "https://graph.microsoft.com/v1.0",  # Graph's service root
        "drive_id": None,
        "item_id": None,  # the folder synced (None: the drive's root)
        "max_files": 5_000,
        "max_bytes": 500_000_000,
        "max_seconds": 900,
    },
    "gdrive": {
        "url": "https://www.googleapis.com",  # the Drive API's root
        "folder_id": None,
        "shared_drive_id": None,  # the folder is in this shared drive (None: the user's Drive)
        "export": "text",
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


# Query parameters that carry a credential (OAuth's access_token, S3's presigned signature,
# GitLab's private_token, an API key): a source's URL is shown to every member of its
# library, so one holding them is refused, as a URL's user:password is by the outbound guard.
_SECRET_PARAM = re.compile(
    r"^(key|sig|auth|code|pass|pwd|.*(token|secret|password|passwd|signature|credential|"
    r"api[_-]?key|access[_-]?key|auth[_-]?key))$",
    re.IGNORECASE,
)


def check_url_query(what: str, url: str) -> None:
    """Refuse a URL whose query names a credential (its name, never its value, is said)."""
    query = urlsplit(url).query
    for name, _ in parse_qsl(query, keep_blank_values=True):
        if _SECRET_PARAM.match(name.strip()):
            raise ValidationError(
                f"{what}: the query parameter {name!r} looks like a credential, and a "
                "source's URL is shown to everyone in its library; give the credential as "
                "the source's credential (kept encrypted, never shown), or a URL without it"
            )


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValidationError(
            "source name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


def check_credential(kind: str, credential: object) -> str:
    """A credential as given (surrounding blanks dropped), checked for the kind."""
    if kind not in CREDENTIAL_KINDS:
        raise ValidationError(f"a {kind} source is read without a credential")
    if not isinstance(credential, str) or not credential.strip():
        raise ValidationError("credential: a token or secret, not empty")
    credential = credential.strip()
    # Line breaks stay (a service account's JSON key has them); other controls do not.
    if len(credential) > MAX_CREDENTIAL or any(
        ord(c) < 32 and c not in "\n\r\t" for c in credential
    ):
        raise ValidationError(
            f"credential: at most {MAX_CREDENTIAL} characters, no control characters"
        )
    return credential


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
        what = {
            "web": "a start URL or a sitemap URL",
            "git": "an https URL or a path",
            "confluence": "the site's URL (https://TEAM.atlassian.net/wiki, or a Data Center's)",
            "sharepoint": "Graph's service root (https://graph.microsoft.com/v1.0)",
            "gdrive": "the Drive API's root (https://www.googleapis.com)",
        }[kind]
        raise ValidationError(f"{kind} source: needs {what} (url)")
    for key in ("url", "sitemap"):
        if isinstance(settings.get(key), str):
            check_url_query(key, settings[key])
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
    if kind == "confluence":
        space = settings["space"]
        if not isinstance(space, str) or not _SPACE.match(space.strip()):
            raise ValidationError("confluence source: needs the space's key (space)")
        settings["space"] = space.strip()
        if settings["edition"] not in (None, "cloud", "datacenter"):
            raise ValidationError("edition: cloud or datacenter")
        if not isinstance(settings["attachments"], bool):
            raise ValidationError("attachments: true or false")
    ids = {"sharepoint": ("drive_id", "item_id"), "gdrive": ("folder_id", "shared_drive_id")}
    ids = ids.get(kind, ())
    for n, key in enumerate(ids):
        value = settings[key]
        if value is None and n == 0:
            raise ValidationError(f"{kind} source: needs {key}")
        if value is not None and (not isinstance(value, str) or not _DRIVE_ID.match(value)):
            raise ValidationError(f"{key}: an id of letters, digits, '!', '.', '_' or '-'")
    if kind == "gdrive" and settings["export"] not in DOC_EXPORTS:
        raise ValidationError(f"export: one of {', '.join(DOC_EXPORTS)}")
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
    # Whether a credential is kept for it (the secret itself is kept apart, encrypted, under
    # the `source_credentials` scope by the source's id, so no listing can carry it).
    has_credential: bool = False
    # Its schedule (services/sources/schedule.py): seconds between syncs (None: on demand
    # only); paused: no sync runs, scheduled or on demand, until it is resumed (its
    # documents stay).
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
class ConnectionCheck:
    """What one request to a source's place said, before any sync: whether it answered as
    the kind expects (`ok`), its HTTP status, and a sentence for a person."""

    ok: bool
    message: str
    status: int | None = None
    url: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    throttled: int = 0  # answers 429/503 waited out (API connectors)

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
            "throttled": self.throttled,
            "seconds": round(self.seconds, 3),
            "at": time.time(),
        }
