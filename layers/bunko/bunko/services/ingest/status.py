"""What a client may ask about the server itself: edition, model, indexing progress; and
the server's model warmed up at start.

TelosDB's /edition, /model_name and /indexing_status (and the web app's status line) read
these, so every door reports the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bunko.domain import DocumentStatus
from bunko.ports import DocumentStore, Embedder, LoadsLazily, TrainableEmbedder


@dataclass(frozen=True)
class IndexingProgress:
    status: str  # "idle" | "indexing"
    pending: int  # this workspace's documents waiting or being indexed
    queued: int  # jobs in this server's ingest queue (all workspaces)
    documents: int
    completed: int
    failed: int


class StatusService:
    def __init__(
        self,
        *,
        documents: DocumentStore,
        embedder: Embedder | None,
        queue_depth: Callable[[], int] = lambda: 0,
    ) -> None:
        self.documents = documents
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

    def indexing(self, workspace_id: str) -> IndexingProgress:
        counts = dict.fromkeys(DocumentStatus, 0)
        for doc in self.documents.iter_documents(workspace_id):
            counts[doc.status] += 1
        pending = counts[DocumentStatus.PENDING] + counts[DocumentStatus.INDEXING]
        return IndexingProgress(
            status="indexing" if pending else "idle",
            pending=pending,
            queued=self.queue_depth(),
            documents=sum(counts.values()),
            completed=counts[DocumentStatus.COMPLETED],
            failed=counts[DocumentStatus.FAILED],
        )
