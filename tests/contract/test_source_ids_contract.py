"""source_document_ids over every MetadataStore (SQLite, DynamoDB on moto): the ids of the
documents a source owns, which a search's or chat's `source` filter hands the engine (issue
48, point 3); another source's and another library's documents are never among them."""

from __future__ import annotations

from bunko.domain import Workspace
from bunko.domain.sources import AGENT, UPLOAD, connector_source
from tests.contract.documents import OTHER_WS, WS, make_doc


def test_a_sources_document_ids_are_its_own_in_its_library(metadata_store):
    for ws in (WS, OTHER_WS):
        metadata_store.ensure_workspace(Workspace(id=ws, name=ws[:4]))
    site = connector_source("site-1")
    mine = [make_doc(f"site/{n}.md", source=site) for n in range(3)]
    others = [make_doc("hand.md", source=UPLOAD), make_doc("note.md", source=AGENT)]
    elsewhere = make_doc("site/0.md", workspace_id=OTHER_WS, source=site)
    for doc in (*mine, *others, elsewhere):
        metadata_store.add_document(doc)
    assert metadata_store.source_document_ids(WS, site) == {d.id for d in mine}
    assert metadata_store.source_document_ids(WS, UPLOAD) == {others[0].id}
    assert metadata_store.source_document_ids(OTHER_WS, site) == {elsewhere.id}
    assert metadata_store.source_document_ids(WS, connector_source("gone")) == frozenset()
