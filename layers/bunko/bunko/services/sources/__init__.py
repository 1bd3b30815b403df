"""Sources: a library's connectors (a website, a Git repository, a Confluence space), each a
source of its own that a sync keeps in step with its place through the library's one mirror
rule."""

from bunko.services.sources.records import KINDS, SourceRecord, SyncReport
from bunko.services.sources.sources import Sources, named_source
from bunko.services.sources.web import AGENT

__all__ = ["AGENT", "KINDS", "SourceRecord", "Sources", "SyncReport", "named_source"]
