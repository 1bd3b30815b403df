"""What a client may ask about the server itself: edition, model, its ingest queue's depth;
and the server's model warmed up at start (a library's indexing progress is the library's).

TelosDB's /edition, /model_name and /indexing_status (and the web app's status line) read
these, so every door reports the same thing.
"""

from __future__ import annotations

from collections.abc import Callable

from bunko.ports import Embedder, LoadsLazily, TrainableEmbedder


class StatusService:
    def __init__(
        self,
        *,
        embedder: Embedder | None,
        queue_depth: Callable[[], int] = lambda: 0,
    ) -> None:
        self.embedder = embedder
        self.queue_depth = queue_depth

    @property
    def edition(self) -> str:
        """TelosDB's rule: pro when a neural embedding model is loaded; community for LSA
        (fitted on the corpus) or keyword-only."""
        neural = self.embedder is not None and not self.retrains
        return "pro" if neural else "community"

    @property
    def retrains(self) -> bool:
        """The server's model is fitted on the corpus (LSA): a reindex retrains it first."""
        return isinstance(self.embedder, TrainableEmbedder)

    @property
    def model_warm_up(self) -> Callable[[], None] | None:
        """What loads the server's model now, when it would load on first use (seconds)."""
        return self.embedder.warm_up if isinstance(self.embedder, LoadsLazily) else None

    @property
    def model_name(self) -> str | None:
        return self.embedder.name if self.embedder else None

    @property
    def dimension(self) -> int | None:
        return self.embedder.dimension if self.embedder else None
