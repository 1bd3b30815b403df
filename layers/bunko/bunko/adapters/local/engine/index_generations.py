"""Index generations on one machine: `index/<model>/` holds one embedding model's index, so
switching models never mixes the vectors of two (DESIGN decision 6).

Only the generation in use follows metadata; the others fall behind it (a file replaced, an
item edited, a document deleted). Counting entries cannot see that when the number of chunks
stays the same, so every write through a generation first marks the others `stale`, and the
server's startup check rebuilds a stale generation before trusting it, then takes the mark
off (unless another process marked it again meanwhile).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path

from bunko.adapters.local.engine.search_index import LocalSearchIndex
from bunko.adapters.local.engine.tuning import MEASURED, EngineTuning
from bunko.ports import IndexEntry

STALE = "stale"  # a file in a generation's folder: it missed writes made through another
INDEX_FILE = "index.db"


class GenerationMarks:
    """The stale mark of one generation (`folder`), and marking its siblings. A mark holds a
    fresh token each time it is set (file times are too coarse to tell two marks apart)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.name = self.folder.name

    def stale(self) -> str | None:
        """The mark's token, or None if this generation is not stale."""
        try:
            return (self.folder / STALE).read_text(encoding="ascii") or "?"
        except FileNotFoundError:
            return None

    def mark(self) -> str:
        """Mark this generation stale (a rebuild starting: until it settles the mark, a kill
        leaves the generation to be rebuilt at the next start); returns the mark's token."""
        self.folder.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex
        (self.folder / STALE).write_text(token, encoding="ascii")
        return token

    def settle(self, seen: str) -> bool:
        """Take the mark off after a rebuild that started when it read `seen`; a mark set
        again since then stays (the rebuild may have missed that write)."""
        if self.stale() != seen:
            return False
        (self.folder / STALE).unlink(missing_ok=True)
        return True

    def mark_others(self) -> None:
        """Mark every other generation that has an index as stale."""
        for sibling in self.folder.parent.iterdir():
            if sibling != self.folder and (sibling / INDEX_FILE).exists():
                (sibling / STALE).write_text(uuid.uuid4().hex, encoding="ascii")


class GenerationIndex(LocalSearchIndex):
    """The local index of one generation: a write that follows metadata marks the other
    generations stale first, so a crash right after the write cannot leave them unmarked."""

    def __init__(
        self, directory: Path, dimension: int | None = None, *, tuning: EngineTuning = MEASURED
    ) -> None:
        self.marks = GenerationMarks(directory)
        super().__init__(directory, dimension, tuning=tuning)

    def index(self, entries: Sequence[IndexEntry]) -> None:
        if entries:
            self.marks.mark_others()
        super().index(entries)

    def delete_document(self, workspace_id: str, document_id: str) -> None:
        self.marks.mark_others()
        super().delete_document(workspace_id, document_id)

    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None:
        if chunk_ids:
            self.marks.mark_others()
        super().delete_chunks(workspace_id, chunk_ids)
