"""The research store (projects, evidence, sealed corpora, pinned passages) and the scorer
that ranks a corpus's own passages by keywords."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bunko.domain.research import (
        Corpus,
        CorpusPassage,
        Evidence,
        Passage,
        ResearchProject,
    )


class ResearchStore(Protocol):
    """Every read and write is keyed by workspace: another workspace's id finds nothing."""

    def add_project(self, project: ResearchProject) -> None: ...
    def get_project(self, workspace_id: str, project_id: str) -> ResearchProject | None: ...
    def list_projects(self, workspace_id: str) -> list[ResearchProject]:
        """Oldest first."""

    def add_evidence(self, evidence: Evidence, *, project_revision: int) -> int:
        """Add evidence and bump the project's revision from `project_revision`; returns
        the new revision. ConflictError if the revision moved meanwhile."""

    def remove_evidence(
        self, workspace_id: str, project_id: str, evidence_id: str, *, project_revision: int
    ) -> int | None:
        """Remove evidence and bump the revision; None if it was not there."""

    def list_evidence(self, workspace_id: str, project_id: str) -> list[Evidence]:
        """Oldest first."""

    def add_corpus(self, corpus: Corpus, passages: Sequence[CorpusPassage]) -> None:
        """Write a corpus revision with its own copy of its passages; ConflictError if that
        revision exists already. The project records the corpus id."""

    def get_corpus(
        self, workspace_id: str, corpus_id: str, revision: int | None = None
    ) -> Corpus | None:
        """The given revision, or the latest when `revision` is None."""

    def list_corpora(self, workspace_id: str) -> list[Corpus]:
        """Each corpus's latest revision, oldest corpus first."""

    def corpus_passages(
        self, workspace_id: str, corpus_id: str, revision: int
    ) -> list[CorpusPassage]: ...
    def pinned_passages(self, workspace_id: str, document_id: str, revision: int) -> list[Passage]:
        """Every corpus's copies of one document revision's passages, the most recently
        sealed corpus first (a revision's text outlives its chunks while a corpus holds it)."""

    def delete_project(self, workspace_id: str, project_id: str) -> bool:
        """The project, its evidence and its corpora with their passages (released)."""


class PassageScorer(Protocol):
    """BM25 over a closed set of texts (a corpus's passages), with the same analysis as the
    workspace's keyword index."""

    def keyword_scores(
        self, query: str, texts: Sequence[str], limit: int
    ) -> tuple[list[tuple[int, float]], float]:
        """(position in `texts`, BM25 score) of the best `limit` matches, best first, and the
        query's Σ idf over `texts` (SearchIndex.keyword_weight's measure): one analysis."""
