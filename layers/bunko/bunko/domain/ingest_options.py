"""How a file is indexed: chunking bounds and defaults, and the parsing mode.

One place for every door (config, REST upload, MCP) and the services, so a bound or a mode
is never written twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from bunko.domain.documents import DocumentStatus
from bunko.errors import ValidationError

# Characters. Documented in README; overridable per upload.
DEFAULT_CHUNK_SIZE = 1000
DEFAULT_CHUNK_OVERLAP = 200
MIN_CHUNK_SIZE, MAX_CHUNK_SIZE = 50, 20000
MAX_CHUNK_OVERLAP = 10000

# fast: text as the file carries it; precise: also the text inside page images.
IngestMode = Literal["fast", "precise"]
MODES: tuple[str, ...] = get_args(IngestMode)

# A document's status as the doors spell it (the enum's values, for response schemas).
StatusName = Literal[tuple(s.value for s in DocumentStatus)]  # type: ignore[valid-type]


@dataclass(frozen=True)
class IngestDefaults:
    chunk_size: int
    chunk_overlap: int

    def chunking(self, chunk_size: int | None, chunk_overlap: int | None) -> tuple[int, int]:
        """The (size, overlap) a file is cut with, these defaults filling what is left out;
        ValidationError when the overlap is not below the size (every door asks here)."""
        size = chunk_size or self.chunk_size
        overlap = self.chunk_overlap if chunk_overlap is None else chunk_overlap
        if size <= 0 or not 0 <= overlap < size:
            default = f" (left out, it is {overlap})" if chunk_overlap is None else ""
            raise ValidationError(
                f"chunkOverlap{default} must be at least 0 and smaller than chunkSize"
            )
        return size, overlap
