"""The research store contract, on SQLite and on DynamoDB (moto): projects and their
revisions, evidence, corpus revisions with their own passages, isolation, release."""

from __future__ import annotations

import uuid
from datetime import timedelta

import numpy as np
import pytest

from bunko.domain import utcnow
from bunko.domain.metadata import terms_of
from bunko.domain.research import (
    Corpus,
    CorpusPassage,
    Coverage,
    Evidence,
    EvidenceKind,
    EvidenceRef,
    Passage,
    ResearchProject,
)
from bunko.errors import ConflictError

WS, OTHER = str(uuid.uuid4()), str(uuid.uuid4())


def _project(research_store, ws: str = WS) -> ResearchProject:
    project = ResearchProject(id=str(uuid.uuid4()), workspace_id=ws, name="study")
    research_store.add_project(project)
    return project


def _evidence(project: ResearchProject, doc: str, rev: int = 1, **kw) -> Evidence:
    return Evidence(
        id=str(uuid.uuid4()), workspace_id=project.workspace_id, project_id=project.id,
        kind=EvidenceKind.CHUNK if kw.get("chunk_id") else EvidenceKind.DOCUMENT,
        document_id=doc, revision=rev, **kw,
    )  # fmt: skip


def _passage(doc: str, rev: int, index: int, text: str, terms: tuple = ()) -> Passage:
    vector = np.arange(4, dtype="<f4") / 10 + index
    return Passage(
        chunk_id=str(uuid.uuid4()), workspace_id=WS, document_id=doc, revision=rev,
        index=index, content=text, start=index * 10, end=index * 10 + len(text), page=None,
        of_chunks=2, vector=vector.tobytes(), embedder="test-model", metadata_terms=terms,
    )  # fmt: skip


def _corpus(project, revision: int, refs, *, when=None, cid=None) -> Corpus:
    return Corpus(
        id=cid or str(uuid.uuid4()), workspace_id=project.workspace_id, project_id=project.id,
        revision=revision, project_revision=revision + 1, evidence=tuple(refs),
        sealed_at=when or utcnow(), coverage=Coverage.PARTIAL,
        missing_sources=("document x revision 2: deleted",), sampling=None,
    )  # fmt: skip


def test_projects_are_per_workspace_and_evidence_bumps_the_revision(research_store):
    project = _project(research_store)
    _project(research_store, OTHER)
    assert [p.id for p in research_store.list_projects(WS)] == [project.id]
    assert research_store.get_project(OTHER, project.id) is None
    first = _evidence(project, "doc-a", note="why this matters")
    assert research_store.add_evidence(first, project_revision=1) == 2
    second = _evidence(project, "doc-b", 3, chunk_id="chunk-b")
    assert research_store.add_evidence(second, project_revision=2) == 3
    with pytest.raises(ConflictError):  # a stale revision: someone changed it meanwhile
        research_store.add_evidence(_evidence(project, "doc-c"), project_revision=2)
    assert research_store.list_evidence(WS, project.id) == [first, second]
    assert research_store.list_evidence(OTHER, project.id) == []
    assert research_store.remove_evidence(OTHER, project.id, first.id, project_revision=3) is None
    assert research_store.remove_evidence(WS, project.id, first.id, project_revision=3) == 4
    assert research_store.remove_evidence(WS, project.id, first.id, project_revision=4) is None
    assert research_store.get_project(WS, project.id).revision == 4
    assert research_store.list_evidence(WS, project.id) == [second]


def test_corpus_revisions_keep_their_own_passages(research_store):
    project = _project(research_store)
    terms = tuple(terms_of({"kind": "insect", "年": 2024.0}, "nature"))  # kept as sealed
    one = [_passage("doc-a", 1, 0, "bees make honey", terms), _passage("doc-a", 1, 1, "in hives")]
    cid = str(uuid.uuid4())
    when = utcnow()
    c1 = _corpus(project, 1, [EvidenceRef("ev-1", 1)], when=when, cid=cid)
    research_store.add_corpus(c1, [CorpusPassage("ev-1", p) for p in one])
    with pytest.raises(ConflictError):
        research_store.add_corpus(c1, [])
    c2 = _corpus(project, 2, [EvidenceRef("ev-2", 2)], when=when + timedelta(seconds=1), cid=cid)
    two = [_passage("doc-a", 2, 0, "wasps make no honey")]
    research_store.add_corpus(c2, [CorpusPassage("ev-2", p) for p in two])
    assert research_store.get_project(WS, project.id).corpus_id == cid
    assert research_store.get_corpus(WS, cid) == c2
    assert research_store.get_corpus(WS, cid, 1) == c1
    assert research_store.get_corpus(WS, cid, 3) is None
    assert research_store.get_corpus(OTHER, cid) is None
    assert research_store.list_corpora(WS) == [c2] and research_store.list_corpora(OTHER) == []
    held = research_store.corpus_passages(WS, cid, 1)
    assert [cp.passage for cp in held] == one and {cp.evidence_id for cp in held} == {"ev-1"}
    assert research_store.corpus_passages(OTHER, cid, 1) == []
    assert research_store.pinned_passages(WS, "doc-a", 1) == one
    assert research_store.pinned_passages(WS, "doc-a", 2) == two
    assert research_store.pinned_passages(OTHER, "doc-a", 1) == []


def test_deleting_a_project_releases_its_passages(research_store):
    project, keeper = _project(research_store), _project(research_store)
    mine = [_passage("doc-a", 1, 0, "only mine")]
    theirs = [_passage("doc-a", 1, 0, "kept by another corpus")]
    research_store.add_corpus(_corpus(project, 1, []), [CorpusPassage("e", p) for p in mine])
    research_store.add_corpus(_corpus(keeper, 1, []), [CorpusPassage("e", p) for p in theirs])
    research_store.add_evidence(_evidence(project, "doc-a"), project_revision=1)
    assert research_store.delete_project(OTHER, project.id) is False
    assert research_store.delete_project(WS, project.id) is True
    assert research_store.get_project(WS, project.id) is None
    assert research_store.list_evidence(WS, project.id) == []
    assert research_store.pinned_passages(WS, "doc-a", 1) == theirs
    assert [c.project_id for c in research_store.list_corpora(WS)] == [keeper.id]
    assert research_store.delete_project(WS, project.id) is False
