"""ResearchService: projects collect evidence at exact revisions; a seal freezes them into an
immutable corpus revision with its own copy of every passage (text and vector), so a sealed
corpus reads and searches the same after its documents are edited or deleted.

Every call takes the caller's workspace; an id from another workspace is simply not found.
"""

from __future__ import annotations

from dataclasses import dataclass

from bunko.domain import new_id, utcnow
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.domain.metadata import matches
from bunko.domain.research import (
    MAX_CORPUS_EVIDENCE,
    MAX_PROJECT_EVIDENCE,
    Corpus,
    Coverage,
    Evidence,
    EvidenceKind,
    EvidenceRef,
    ResearchProject,
)
from bunko.errors import NotFoundError, TooManyRequestsError, ValidationError
from bunko.ports import MetadataStore, PassageScorer, ResearchStore
from bunko.services.bounds import TokenBucket
from bunko.services.research import research_seal as seal_rules
from bunko.services.research.research_search import CorpusHit, rank_passages
from bunko.services.search import SearchService

MAX_NOTE_CHARS = 1_000
MAX_NAME_CHARS = 200
# Every seal keeps its own copy of each passage (text and vector), so the number of
# projects and of a corpus's revisions bound what one workspace can make the server store.
MAX_PROJECTS = 100
MAX_CORPUS_REVISIONS = 100
# Nothing but a deletion frees a place (as for conversations).
_FULL_RETRY_SECONDS = 86_400


@dataclass(frozen=True)
class EvidenceChange:
    evidence: Evidence
    project_revision: int


class ResearchService:
    def __init__(
        self,
        *,
        store: ResearchStore,
        metadata: MetadataStore,
        search: SearchService,
        scorer: PassageScorer,
        seal_rate: TokenBucket | None = None,
        max_corpus_revisions: int = MAX_CORPUS_REVISIONS,
    ) -> None:
        self.store = store
        self.metadata = metadata
        self.search_service = search
        self.scorer = scorer
        # seals per workspace (each re-embeds and copies its passages); None: not counted
        self.seal_rate = seal_rate
        self.max_corpus_revisions = max_corpus_revisions

    # projects
    def create_project(self, workspace_id: str, name: str) -> ResearchProject:
        if not name.strip() or len(name) > MAX_NAME_CHARS:
            raise ValidationError(f"name must have 1 to {MAX_NAME_CHARS} characters")
        if len(self.store.list_projects(workspace_id)) >= MAX_PROJECTS:
            raise TooManyRequestsError(
                f"this workspace has {MAX_PROJECTS} research projects, the most it may keep: "
                "delete one to create another",
                retry_after=_FULL_RETRY_SECONDS,
            )
        project = ResearchProject(id=new_id(), workspace_id=workspace_id, name=name.strip())
        self.store.add_project(project)
        return project

    def list_projects(self, workspace_id: str) -> list[ResearchProject]:
        return self.store.list_projects(workspace_id)

    def project(self, workspace_id: str, project_id: str) -> ResearchProject:
        project = self.store.get_project(workspace_id, project_id)
        if project is None:
            raise NotFoundError(f"research project {project_id} not found")
        return project

    def delete_project(self, workspace_id: str, project_id: str) -> bool:
        """The project, its evidence, its corpora and their retained passages."""
        return self.store.delete_project(workspace_id, project_id)

    def delete_workspace(self, workspace_id: str) -> int:
        """Every research project of a workspace (its owner was deleted)."""
        projects = self.store.list_projects(workspace_id)
        for project in projects:
            self.store.delete_project(workspace_id, project.id)
        return len(projects)

    # evidence
    def list_evidence(self, workspace_id: str, project_id: str) -> list[Evidence]:
        self.project(workspace_id, project_id)
        return self.store.list_evidence(workspace_id, project_id)

    def add_evidence(
        self,
        workspace_id: str,
        project_id: str,
        *,
        document_id: str,
        revision: int,
        chunk_id: str | None = None,
        note: str | None = None,
    ) -> EvidenceChange:
        """Add a document (every chunk) or one chunk at an exact revision. Adding the same
        source again returns the existing evidence and changes nothing."""
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise ValidationError(f"note holds at most {MAX_NOTE_CHARS} characters")
        project = self.project(workspace_id, project_id)
        self._check_source(workspace_id, document_id, revision, chunk_id)
        existing = self.store.list_evidence(workspace_id, project_id)
        for item in existing:
            if (item.document_id, item.revision, item.chunk_id) == (
                document_id,
                revision,
                chunk_id,
            ):
                return EvidenceChange(item, project.revision)
        if len(existing) >= MAX_PROJECT_EVIDENCE:
            raise ValidationError(f"a project holds at most {MAX_PROJECT_EVIDENCE} evidence items")
        evidence = Evidence(
            id=new_id(),
            workspace_id=workspace_id,
            project_id=project_id,
            kind=EvidenceKind.CHUNK if chunk_id else EvidenceKind.DOCUMENT,
            document_id=document_id,
            revision=revision,
            chunk_id=chunk_id,
            note=note,
        )
        bumped = self.store.add_evidence(evidence, project_revision=project.revision)
        return EvidenceChange(evidence, bumped)

    def remove_evidence(self, workspace_id: str, project_id: str, evidence_id: str) -> int:
        """Returns the project's new revision."""
        project = self.project(workspace_id, project_id)
        bumped = self.store.remove_evidence(
            workspace_id, project_id, evidence_id, project_revision=project.revision
        )
        if bumped is None:
            raise NotFoundError(f"evidence {evidence_id} not found in project {project_id}")
        return bumped

    def _check_source(
        self, workspace_id: str, document_id: str, revision: int, chunk_id: str | None
    ) -> None:
        """The source exists at that revision, in the documents or in a corpus's retained
        passages (a deleted document's sealed text can still be cited)."""
        pinned = {
            p.chunk_id for p in self.store.pinned_passages(workspace_id, document_id, revision)
        }
        known = self.metadata.get_revision(workspace_id, document_id, revision) is not None
        if not known and not pinned:
            raise NotFoundError(f"document {document_id} has no revision {revision}")
        if chunk_id is None:
            return
        chunk = self.metadata.get_chunk(workspace_id, chunk_id)
        current = chunk is not None and (chunk.document_id, chunk.revision) == (
            document_id,
            revision,
        )
        if not current and chunk_id not in pinned:
            raise NotFoundError(
                f"chunk {chunk_id} is not part of {document_id} revision {revision}"
            )

    # corpora
    def seal(
        self, workspace_id: str, project_id: str, *, sample_size: int | None = None, seed: int = 0
    ) -> Corpus:
        """Seal the project's evidence as its corpus's next revision (or return the latest
        revision unchanged when neither the evidence set nor the sampling changed)."""
        project = self.project(workspace_id, project_id)
        evidence = self.store.list_evidence(workspace_id, project_id)
        chosen, sampling = seal_rules.draw_sample(evidence, sample_size, seed)
        if len(chosen) > MAX_CORPUS_EVIDENCE:
            raise ValidationError(
                f"a corpus holds at most {MAX_CORPUS_EVIDENCE} evidence items and this project "
                f"has {len(chosen)}: seal a bounded sample (sample_size)"
            )
        latest = (
            self.store.get_corpus(workspace_id, project.corpus_id) if project.corpus_id else None
        )
        if latest is not None and (latest.project_revision, latest.sampling) == (
            project.revision,
            sampling,
        ):
            return latest
        most = self.max_corpus_revisions
        if latest is not None and latest.revision >= most:
            raise TooManyRequestsError(
                f"corpus {latest.id} has {most} revisions, the most one corpus "
                "may keep: create a new project to seal again",
                retry_after=_FULL_RETRY_SECONDS,
            )
        if self.seal_rate is not None:  # a seal that changes nothing (above) costs nothing
            self.seal_rate.take(workspace_id)
        resolved = seal_rules.resolve(chosen, metadata=self.metadata, store=self.store)
        coverage = (
            Coverage.PARTIAL
            if resolved.missing
            else (Coverage.BOUNDED_SAMPLE if sampling else Coverage.SUPPLIED_SET)
        )
        corpus = Corpus(
            id=project.corpus_id or new_id(),
            workspace_id=workspace_id,
            project_id=project_id,
            revision=latest.revision + 1 if latest else 1,
            project_revision=project.revision,
            evidence=tuple(EvidenceRef(e.id, e.revision) for e in resolved.held),
            sealed_at=utcnow(),
            coverage=coverage,
            missing_sources=seal_rules.missing_sources(resolved.missing),
            sampling=sampling,
        )
        embedder = self.search_service.generations.chosen(
            workspace_id
        ).embedder  # the workspace's model
        passages = seal_rules.with_vectors(resolved.passages, embedder)
        self.store.add_corpus(corpus, passages)
        return corpus

    def get_corpus(self, workspace_id: str, corpus_id: str, revision: int | None = None) -> Corpus:
        corpus = self.store.get_corpus(workspace_id, corpus_id, revision)
        if corpus is None:
            at = "" if revision is None else f" revision {revision}"
            raise NotFoundError(f"corpus {corpus_id}{at} not found")
        return corpus

    def list_corpora(self, workspace_id: str) -> list[Corpus]:
        return self.store.list_corpora(workspace_id)

    def search(
        self,
        workspace_id: str,
        corpus_id: str,
        query: str,
        *,
        revision: int | None = None,
        limit: int = 5,
        min_score: float = 0.0,
        metadata_filter: MetadataFilter | None = None,
    ) -> tuple[Corpus, list[CorpusHit], bool]:
        """Hybrid search over exactly the sealed passages: (corpus, hits, vector half used).
        Ranked by the search service's fusion with the corpus's own keyword statistics.
        `metadata_filter`: only passages whose document's metadata, as sealed, passes it
        (ranked among themselves)."""
        corpus = self.get_corpus(workspace_id, corpus_id, revision)
        passages = self.store.corpus_passages(workspace_id, corpus.id, corpus.revision)
        if metadata_filter is not None:
            passages = [p for p in passages if matches(metadata_filter, p.passage.metadata_terms)]
        hits, used = rank_passages(
            passages,
            query,
            search=self.search_service,
            scorer=self.scorer,
            limit=limit,
            min_score=min_score,
            embedder=self.search_service.generations.chosen(workspace_id).embedder,
        )
        return corpus, hits, used
