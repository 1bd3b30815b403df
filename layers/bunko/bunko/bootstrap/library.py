"""The library wing, wired: the read side every door uses (services/library)."""

from __future__ import annotations

from dataclasses import dataclass

from bunko.bootstrap.adapters import Adapters
from bunko.services.library import Library


@dataclass(frozen=True)
class LibraryWing:
    """Field names are the container's (`Services`)."""

    library: Library


def build_library(adapters: Adapters) -> LibraryWing:
    return LibraryWing(library=Library(metadata=adapters.metadata, blobs=adapters.blobs))
