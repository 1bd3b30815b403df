"""How a file is indexed: chunking bounds and defaults, and the parsing mode.

One place for every door (config, REST upload, MCP) and the services, so a bound or a mode
is never written twice.
"""

from __future__ import annotations

from typing import Literal, get_args

from bunko.domain.documents import DocumentStatus

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
