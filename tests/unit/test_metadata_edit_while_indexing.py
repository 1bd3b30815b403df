"""An edit of a document's metadata made while the pipeline embeds it: the stored metadata
keeps the edit (the pipeline's save of the copy it read first does not undo it), and the
entries the pipeline writes afterwards answer to the edited metadata in an engine that
filters by each entry's own terms."""

from __future__ import annotations

from bunko.domain.metadata import matches, parse_filter
from bunko.ports import SearchFilter
from tests.fakes import FakeEmbedder, PipelineWorld

WS = "ws-1"
WORDS = ["harbour", "lease", "fee"]


class EditingEmbedder(FakeEmbedder):
    """Edits the document's metadata while its chunks are being embedded."""

    def __init__(self, world_ref: list) -> None:
        super().__init__(WORDS)
        self.world_ref = world_ref

    def embed_documents(self, texts):
        world = self.world_ref[0]
        for doc in world.metadata.iter_documents(WS):
            world.ingest.set_metadata(WS, doc.id, {"team": "ops"})
        return super().embed_documents(texts)


def test_an_edit_during_indexing_is_kept_and_reaches_the_new_entries():
    ref: list = []
    world = PipelineWorld(EditingEmbedder(ref))
    ref.append(world)
    doc = world.ingest.submit_text(
        WS, path="a.txt", content="harbour lease fee. " * 5, metadata={"team": "legal"}
    )
    finished = world.pipeline.process(world.take_jobs())
    assert [d.id for d in finished] == [doc.id]
    assert world.metadata.get_document(WS, doc.id).metadata == {"team": "ops"}
    ops = parse_filter({"equals": {"key": "team", "value": "ops"}})
    entries = [e for e in world.index.entries.values() if e.document_id == doc.id]
    assert entries and all(matches(ops, e.metadata_terms) for e in entries)
    hits, _ = world.index.hybrid_search("harbour", None, SearchFilter(WS, metadata=ops), 10)
    assert {h.document_id for h in hits} == {doc.id}
