"""The library wing, wired: the read side every door uses (services/library), and a file's
original where the shape can link to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bunko.bootstrap.adapters import Adapters
from bunko.services.library import Library, OriginalFiles


@dataclass(frozen=True)
class LibraryWing:
    """Field names are the container's (`Services`)."""

    library: Library
    originals: OriginalFiles | None  # None where the shape has no links to originals


def build_library(adapters: Adapters, queue_depth: Callable[[], int]) -> LibraryWing:
    """`queue_depth`: this server's ingest queue (the ingest work's), for indexing progress."""
    library = Library(metadata=adapters.metadata, blobs=adapters.blobs, queue_depth=queue_depth)
    links = adapters.original_links
    originals = OriginalFiles(library=library, blobs=adapters.blobs, links=links) if links else None
    return LibraryWing(library=library, originals=originals)
