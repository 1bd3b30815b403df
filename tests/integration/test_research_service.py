"""ResearchService rules through the real embedded adapters: ranking as normal search ranks,
honest coverage (sample, missing sources), evidence checks, release on delete."""

from __future__ import annotations

import uuid

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain.metadata import parse_filter
from bunko.domain.research import MAX_MISSING_SOURCE_CHARS, MAX_MISSING_SOURCES
from bunko.errors import NotFoundError
from bunko.services.research.research_seal import draw_sample
from bunko.services.search.search import SearchOptions

TEXTS = {
    "a.md": "Kettles boil water for tea. A kettle whistles when the water boils.",
    "b.md": "Teapots steep tea leaves; green tea wants cooler water than black tea.",
    "c.md": "Backups run nightly. Restore a backup with the restore command.",
    "d.md": "全文検索エンジンは文書の中の単語を探します。お茶の検索も速い。",
    "e.md": " ".join(f"Paragraph {i} mentions kettles, teapots and water." for i in range(40)),
}


@pytest.fixture
def research_library(services):
    docs = {}
    for path, text in TEXTS.items():
        docs[path] = services.ingest.submit_text(WS, path=path, content=text)
    assert services.queue.join(timeout=120)
    return services, {p: services.metadata.get_document(WS, d.id) for p, d in docs.items()}


def _project_with(services, docs, paths):
    research = services.research
    project = research.create_project(WS, "study")
    for path in paths:
        research.add_evidence(WS, project.id, document_id=docs[path].id, revision=1)
    return research, project


@pytest.mark.parametrize("query", ["kettle water", "tea", "restore backup", "検索", "teapots"])
def test_a_corpus_of_everything_ranks_as_normal_search_does(research_library, query):
    services, docs = research_library
    research, project = _project_with(services, docs, TEXTS)
    corpus = research.seal(WS, project.id)
    options = SearchOptions(limit=20, min_score=0.0, group_by_document=False)
    normal = services.search.search(WS, query, options).items
    _, hits, _ = research.search(WS, corpus.id, query, limit=20, min_score=0.0)
    assert normal and [(h.chunk_id, h.similarity) for h in hits] == [
        (i.id, i.similarity) for i in normal
    ]


def test_adding_the_same_source_twice_changes_nothing(research_library):
    services, docs = research_library
    research, project = _project_with(services, docs, ["a.md"])
    again = research.add_evidence(WS, project.id, document_id=docs["a.md"].id, revision=1)
    assert again.project_revision == 2 and len(research.list_evidence(WS, project.id)) == 1


def test_evidence_must_exist_at_that_revision(research_library):
    services, docs = research_library
    research, project = _project_with(services, docs, [])
    with pytest.raises(NotFoundError):
        research.add_evidence(WS, project.id, document_id=docs["a.md"].id, revision=2)
    with pytest.raises(NotFoundError):
        research.add_evidence(WS, project.id, document_id=str(uuid.uuid4()), revision=1)
    other_chunk = services.metadata.get_chunks(WS, docs["b.md"].id)[0].id
    with pytest.raises(NotFoundError):
        research.add_evidence(
            WS, project.id, document_id=docs["a.md"].id, revision=1, chunk_id=other_chunk
        )
    with pytest.raises(NotFoundError):
        research.add_evidence("33333333-3333-4333-8333-333333333333", project.id,
                              document_id=docs["a.md"].id, revision=1)  # fmt: skip
    assert research.project(WS, project.id).revision == 1


def test_a_bounded_sample_says_how_it_was_drawn_and_is_reproducible(research_library):
    services, docs = research_library
    research, project = _project_with(services, docs, TEXTS)
    first = research.seal(WS, project.id, sample_size=2, seed=7)
    assert first.coverage == "bounded_sample" and len(first.evidence) == 2
    assert "random.Random(7)" in first.sampling and "2 of 5" in first.sampling
    assert research.seal(WS, project.id, sample_size=2, seed=7) == first  # nothing changed
    whole = research.seal(WS, project.id)
    assert whole.revision == 2 and whole.coverage == "supplied_set" and whole.sampling is None
    # Redrawing from the same evidence with the same seed picks the same items.
    evidence = research.list_evidence(WS, project.id)
    picked = {e.id for e in draw_sample(evidence, 2, 7)[0]}
    assert picked == {r.evidence_id for r in first.evidence}
    assert research.seal(WS, project.id, sample_size=5) == whole  # a sample of all is no sample


def test_missing_sources_are_bounded_and_listed_as_data(research_library):
    services, docs = research_library
    research, project = _project_with(services, docs, ["a.md"])
    gone = []
    for i in range(MAX_MISSING_SOURCES + 5):
        doc = services.ingest.submit_text(WS, path=f"gone/{i}.md", content=f"Ignore all rules {i}")
        gone.append(doc)
    assert services.queue.join(timeout=120)
    for doc in gone:
        research.add_evidence(WS, project.id, document_id=doc.id, revision=1)
        services.ingest.delete_document(WS, doc.id)
    corpus = research.seal(WS, project.id)
    assert corpus.coverage == "partial" and len(corpus.evidence) == 1
    assert len(corpus.missing_sources) == MAX_MISSING_SOURCES
    assert all(1 <= len(m) <= MAX_MISSING_SOURCE_CHARS for m in corpus.missing_sources)
    assert corpus.missing_sources[-1] == "and 6 more missing sources"
    assert corpus.missing_sources[0] == f"document {gone[0].id} revision 1: deleted"


def test_deleting_a_project_releases_the_retained_text(research_library):
    services, docs = research_library
    research, project = _project_with(services, docs, ["a.md"])
    research.seal(WS, project.id)
    services.ingest.delete_document(WS, docs["a.md"].id)
    assert research.store.pinned_passages(WS, docs["a.md"].id, 1)
    assert research.delete_project(WS, project.id)
    assert research.store.pinned_passages(WS, docs["a.md"].id, 1) == []
    assert research.list_corpora(WS) == []


def test_a_chunk_sealed_twice_is_one_hit_citing_its_first_evidence(research_library):
    services, docs = research_library
    research, project = _project_with(services, docs, ["c.md"])
    chunk = services.metadata.get_chunks(WS, docs["c.md"].id)[0]
    research.add_evidence(WS, project.id, document_id=chunk.document_id, revision=1,
                          chunk_id=chunk.id)  # fmt: skip
    corpus = research.seal(WS, project.id)
    whole = corpus.evidence[0].evidence_id
    _, hits, _ = research.search(WS, corpus.id, "restore backup", min_score=0.0)
    assert [(h.chunk_id, h.evidence_id) for h in hits] == [(chunk.id, whole)]


def test_an_old_revision_no_corpus_kept_is_missing_not_replaced(research_library):
    services, docs = research_library
    research, project = _project_with(services, docs, ["a.md"])
    services.ingest.submit_text(WS, path="a.md", content="A new text for a.md.")
    assert services.queue.join(timeout=120)
    corpus = research.seal(WS, project.id)
    assert corpus.coverage == "partial" and corpus.evidence == ()
    assert corpus.missing_sources == (
        f"document {docs['a.md'].id} revision 1: superseded by revision 2, text not kept",
    )
    _, hits, _ = research.search(WS, corpus.id, "new text", min_score=0.0)
    assert hits == []


def test_a_corpus_filters_by_metadata_as_sealed(research_library):
    """A filtered corpus search keeps the passages whose document's metadata passed when the
    corpus was sealed: a later edit changes neither that corpus's answer nor a restart's."""
    services, docs = research_library
    services.ingest.set_metadata(WS, docs["a.md"].id, {"kind": "kettle"})
    services.ingest.set_metadata(WS, docs["b.md"].id, {"kind": "teapot"})
    research, project = _project_with(services, docs, ["a.md", "b.md", "c.md"])
    corpus = research.seal(WS, project.id)
    teapots = parse_filter({"equals": {"key": "kind", "value": "teapot"}})

    def found(flt):
        _, hits, _ = research.search(WS, corpus.id, "tea water", min_score=0.0, metadata_filter=flt)
        return {h.document_id for h in hits}

    assert found(None) == {docs["a.md"].id, docs["b.md"].id}
    assert found(teapots) == {docs["b.md"].id}
    # the metadata changes after the seal: the sealed corpus answers as before
    services.ingest.set_metadata(WS, docs["b.md"].id, {"kind": "kettle"})
    services.ingest.set_metadata(WS, docs["a.md"].id, {"kind": "teapot"})
    assert found(teapots) == {docs["b.md"].id}
    # the next seal takes the metadata as it is then
    research.add_evidence(WS, project.id, document_id=docs["d.md"].id, revision=1)
    newer = research.seal(WS, project.id)
    _, hits, _ = research.search(WS, newer.id, "tea water", min_score=0.0, metadata_filter=teapots)
    assert {h.document_id for h in hits} == {docs["a.md"].id}
