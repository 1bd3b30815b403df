"""Research records: projects collect evidence; sealing freezes it into a corpus revision.

A corpus keeps its own copy of every evidence passage (text and vector), so editing or
deleting a document never changes what a sealed corpus says or how it is searched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from bunko.domain.documents import utcnow

METHOD_VERSION = "research-corpus/v1"
MAX_CORPUS_EVIDENCE = 500  # the contract's evidence maxItems
MAX_MISSING_SOURCES = 20
MAX_MISSING_SOURCE_CHARS = 100
MAX_PROJECT_EVIDENCE = 5_000  # beyond 500 a seal must draw a bounded sample


class EvidenceKind(StrEnum):
    DOCUMENT = "document"  # every chunk of the document at that revision
    CHUNK = "chunk"  # one chunk (chunk ids are per revision)


class Coverage(StrEnum):
    SUPPLIED_SET = "supplied_set"
    BOUNDED_SAMPLE = "bounded_sample"
    PARTIAL = "partial"


@dataclass
class ResearchProject:
    id: str
    workspace_id: str
    name: str
    revision: int = 1  # project_revision: bumped whenever the evidence set changes
    corpus_id: str | None = None  # set by the first seal; reseals add corpus revisions
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


@dataclass(frozen=True)
class Evidence:
    id: str
    workspace_id: str
    project_id: str
    kind: EvidenceKind
    document_id: str
    revision: int
    chunk_id: str | None = None
    note: str | None = None
    added_at: datetime = field(default_factory=utcnow)


@dataclass(frozen=True)
class EvidenceRef:
    evidence_id: str
    revision: int


@dataclass(frozen=True)
class Corpus:
    """One immutable revision of a corpus (the contract's `snapshot`, plus its revision)."""

    id: str
    workspace_id: str
    project_id: str
    revision: int
    project_revision: int
    evidence: tuple[EvidenceRef, ...]
    sealed_at: datetime
    coverage: Coverage
    missing_sources: tuple[str, ...] = ()
    method_version: str = METHOD_VERSION
    sampling: str | None = None  # how a bounded sample was drawn


@dataclass(frozen=True)
class Passage:
    """A chunk's text at an exact revision, pinned while a corpus holds it."""

    chunk_id: str
    workspace_id: str
    document_id: str
    revision: int
    index: int
    content: str
    start: int = 0
    end: int = 0
    page: int | None = None
    of_chunks: int = 1  # how many chunks the revision had when pinned (is a set whole?)
    vector: bytes | None = None  # float32 little-endian, unit length
    embedder: str | None = None  # the model that made `vector`
    # Its document's metadata terms (domain/metadata.terms_of) when the corpus was sealed: a
    # corpus search filters by these, so it answers alike however the metadata changes.
    metadata_terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class CorpusPassage:
    """Which evidence item a pinned passage was sealed for (what a search hit cites)."""

    evidence_id: str
    passage: Passage


def sealed_at_text(when: datetime) -> str:
    """RFC 3339 in UTC with a `Z`, as the contract's sealed_at pattern accepts."""
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
