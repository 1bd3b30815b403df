"""Where dropped files go (issue 49): the whole drop folder fills one library (the default
library unless an admin chose another), and an admin may point a sub-folder of it at any
library. Files in an unmapped sub-folder go to the folder's library.

A mapped sub-folder changes only the library: a file keeps the path and category it would
have had (`drop/legal/lease.pdf` → path `legal/lease.pdf`, category `legal`). On AWS the
sub-folder is the key's first segment under the drop prefix (`drop/legal/lease.pdf`), beside
`default` (the folder's library) and a library's id (presigned uploads)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from bunko.errors import ValidationError

MAX_SUBFOLDERS = 64
MAX_SUBFOLDER_LENGTH = 100
# On AWS `drop/default/` is the folder's library itself, so no sub-folder may take its name.
RESERVED = frozenset({"default"})


@dataclass(frozen=True)
class DropRoutes:
    library: str | None = None  # the library the folder fills; None: the default one
    subfolders: Mapping[str, str] = field(default_factory=dict)  # name → library id

    def folder_library(self, default: str) -> str:
        return self.library or default

    def library_of(self, subfolder: str | None, default: str) -> str:
        """The library a file in `subfolder` (None: at the folder's top) goes to."""
        mapped = self.subfolders.get(subfolder) if subfolder else None
        return mapped or self.folder_library(default)

    def record(self) -> dict[str, object]:
        return {"workspace_id": self.library, "subfolders": dict(self.subfolders)}


def check_subfolder(name: str) -> str:
    """A sub-folder's name as it is kept (NFC, as dropped paths are): one folder of the drop
    folder's top level; ValidationError otherwise."""
    clean = unicodedata.normalize("NFC", name.strip())
    if (
        not clean
        or len(clean) > MAX_SUBFOLDER_LENGTH
        or any(c in clean for c in "/\\\0")
        or clean.startswith((".", "~$"))
        or clean.lower() in RESERVED
        or any(unicodedata.category(c) == "Cc" for c in clean)
    ):
        raise ValidationError(
            f"subfolder: one folder name of 1 to {MAX_SUBFOLDER_LENGTH} characters, without / "
            "or a leading dot, other than 'default'"
        )
    return clean
