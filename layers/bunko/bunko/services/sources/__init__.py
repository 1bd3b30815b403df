"""Sources: a library's connectors (a website, a Git repository, a Confluence space, a
SharePoint or OneDrive drive, a Google Drive folder), each a source of its own that a sync
keeps in step with its place through the library's one mirror rule."""

from bunko.services.sources.records import KINDS, SourceRecord, SyncReport
from bunko.services.sources.schedule import DEFAULT_EVERY, format_every, parse_every
from bunko.services.sources.sources import DueSync, Sources, named_source
from bunko.services.sources.web import AGENT

__all__ = [
    "AGENT",
    "DEFAULT_EVERY",
    "KINDS",
    "DueSync",
    "SourceRecord",
    "Sources",
    "SyncReport",
    "format_every",
    "named_source",
    "parse_every",
]
