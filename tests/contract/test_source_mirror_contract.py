"""mirror(source, seen) over every MetadataStore (SQLite, DynamoDB on moto): the one rule the
drop folder, S3 drops and connectors keep a library in step with (issue 48).

A file deleted at the source disappears at the next mirror, with its revisions, chunks and
index entries; a file uploaded by hand into the same library survives every mirror; a
renamed file keeps its document (id, revisions, metadata) when the source or the bytes tell
the rename. Real stores, a real blob folder, the real indexing pipeline and local index."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from bunko.adapters.collecting_queue import CollectingQueue
from bunko.adapters.local.engine import LocalSearchIndex
from bunko.adapters.local.files import FileBlobStore
from bunko.domain import Document, DocumentStatus, Workspace
from bunko.domain.document_query import DocumentQuery
from bunko.domain.ingest_options import IngestDefaults
from bunko.domain.sources import DROP_FOLDER, S3_DROP, UPLOAD, connector_source
from bunko.ports import MetadataStore, SearchFilter
from bunko.services.embedding import shared_generation
from bunko.services.ingest import IndexingPipeline, IngestService, Upload, UploadPolicy
from tests.contract.documents import WS


@dataclass
class Library:
    store: MetadataStore
    ingest: IngestService
    pipeline: IndexingPipeline
    queue: CollectingQueue
    index: LocalSearchIndex

    def put(self, path: str, text: str, source: str, **kw) -> Document:
        """`text` at `path` from `source`, indexed before this returns."""
        doc = self.ingest.submit(Upload(WS, text.encode(), path=path, source=source, **kw))
        self.pipeline.process(self.queue.take())
        found = self.store.get_document(WS, doc.id)
        assert found is not None and found.status is DocumentStatus.COMPLETED, found
        return found

    def paths(self) -> dict[str, str]:
        return {d.path: d.source for d in self.store.iter_documents(WS)}

    def hits(self, word: str) -> set[str]:
        found = self.index.keyword_search(word, SearchFilter(workspace_id=WS), 10)
        return {h.document_id for h in found}


@pytest.fixture
def library(metadata_store: MetadataStore, tmp_path: Path) -> Library:
    metadata_store.ensure_workspace(Workspace(id=WS, name="team"))
    blobs, queue = FileBlobStore(tmp_path / "blobs"), CollectingQueue()
    index = LocalSearchIndex(tmp_path / "index", dimension=None)
    generations = shared_generation(index, None)
    ingest = IngestService(
        metadata=metadata_store,
        blobs=blobs,
        queue=queue,
        generations=generations,
        defaults=IngestDefaults(chunk_size=200, chunk_overlap=0),
        policy=UploadPolicy(max_file_bytes=1_000_000),
    )
    pipeline = IndexingPipeline(metadata=metadata_store, blobs=blobs, generations=generations)
    return Library(metadata_store, ingest, pipeline, queue, index)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_file_deleted_at_the_source_disappears_at_the_next_mirror(library):
    kept = library.put("manuals/kept.txt", "the pump manual", DROP_FOLDER)
    gone = library.put("manuals/gone.txt", "the valve handbook", DROP_FOLDER)
    assert library.hits("valve") == {gone.id}

    done = library.ingest.mirror(WS, DROP_FOLDER, ["manuals/kept.txt"])

    assert [d.id for d in done.deleted] == [gone.id] and done.renamed == []
    assert library.paths() == {"manuals/kept.txt": DROP_FOLDER}
    assert library.store.list_revisions(WS, gone.id) == []
    assert library.store.get_chunks(WS, gone.id) == []
    assert library.hits("valve") == set() and library.hits("pump") == {kept.id}
    # The next mirror with the same view changes nothing.
    again = library.ingest.mirror(WS, DROP_FOLDER, ["manuals/kept.txt"])
    assert again.deleted == [] and again.renamed == []


def test_a_file_uploaded_by_hand_survives_every_mirror(library):
    hand = library.put("manuals/hand.txt", "notes typed by hand", UPLOAD)
    # A dropped file at the hand upload's path is a new revision of that document: it stays
    # the upload's, so the drop going takes nothing.
    library.put("manuals/hand.txt", "a dropped copy, newer", DROP_FOLDER)
    library.put("manuals/drop.txt", "a dropped file", DROP_FOLDER)

    for source in (DROP_FOLDER, S3_DROP, connector_source("wiki")):
        library.ingest.mirror(WS, source, [])
        library.ingest.mirror(WS, source, [], within=["manuals/"])
        library.ingest.mirror(WS, source, [], within=["manuals/hand.txt"])

    assert library.paths() == {"manuals/hand.txt": UPLOAD}
    survivor = library.store.get_document(WS, hand.id)
    assert survivor is not None and survivor.revision == 2
    assert library.hits("newer") == {hand.id}


def test_a_renamed_file_keeps_its_history(library):
    first = library.put("drafts/plan.txt", "plan, first draft", DROP_FOLDER)
    second = library.put("drafts/plan.txt", "plan, second draft", DROP_FOLDER)
    assert (second.id, second.revision) == (first.id, 2)
    library.ingest.set_metadata(WS, first.id, {"owner": "ada"})
    # The drop folder tells a rename by the bytes: the new path holds the gone file's.
    on_disk = {"final/plan.txt": "plan, second draft", "other.txt": "something else"}

    done = library.ingest.mirror(
        WS, DROP_FOLDER, list(on_disk), fingerprint=lambda p: sha(on_disk[p])
    )

    assert done.deleted == [] and [(old, d.path) for old, d in done.renamed] == [
        ("drafts/plan.txt", "final/plan.txt")
    ]
    moved = library.store.get_document_by_path(WS, "final/plan.txt")
    assert moved is not None and moved.id == first.id and moved.name == "plan.txt"
    assert library.store.get_document_by_path(WS, "drafts/plan.txt") is None
    assert [r.revision for r in library.store.list_revisions(WS, first.id)] == [1, 2]
    assert moved.metadata == {"owner": "ada"} and moved.status is DocumentStatus.COMPLETED
    # A listing by name or path finds it at its new path only (DynamoDB's name catalog too).
    for word, found in (("final", [first.id]), ("drafts", [])):
        page = library.store.find_documents(WS, DocumentQuery(name=word), limit=10)
        assert [d.id for d in page.documents] == found
    # The file at its new path is the same bytes: its submit adds nothing.
    again = library.put("final/plan.txt", "plan, second draft", DROP_FOLDER)
    assert (again.id, again.revision) == (first.id, 2)
    assert library.hits("draft") == {first.id}


def test_a_rename_the_source_reports_keeps_the_document_with_new_bytes(library):
    # A connector (a Git diff, a delta API) names the rename; the bytes may have changed too.
    source = connector_source("repo")
    doc = library.put("docs/old.md", "# Old\nsetup steps", source)

    done = library.ingest.mirror(WS, source, ["docs/new.md"], moved={"docs/new.md": "docs/old.md"})

    assert [d.id for _, d in done.renamed] == [doc.id] and done.deleted == []
    changed = library.put("docs/new.md", "# New\nsetup steps, revised", source)
    assert (changed.id, changed.revision) == (doc.id, 2)


def test_a_rename_it_cannot_tell_is_a_delete_and_a_new_file(library):
    doc = library.put("a.txt", "alpha", DROP_FOLDER)
    # Renamed and edited in one go: the bytes no longer tell it.
    on_disk = {"b.txt": "alpha, edited"}
    done = library.ingest.mirror(
        WS, DROP_FOLDER, list(on_disk), fingerprint=lambda p: sha(on_disk[p])
    )
    assert [d.id for d in done.deleted] == [doc.id] and done.renamed == []


def test_a_rename_onto_a_path_another_source_holds_is_refused(library):
    hand = library.put("b.txt", "typed by hand", UPLOAD)
    dropped = library.put("a.txt", "typed by hand", DROP_FOLDER)  # the same bytes
    done = library.ingest.mirror(
        WS, DROP_FOLDER, ["b.txt"], fingerprint=lambda p: sha("typed by hand")
    )
    assert [d.id for d in done.deleted] == [dropped.id] and done.renamed == []
    assert library.paths() == {"b.txt": UPLOAD} and library.store.get_document(WS, hand.id)


def test_two_sources_in_one_library_never_delete_each_others_files(library):
    wiki, repo = connector_source("wiki"), connector_source("repo")
    library.put("guide.md", "from the wiki", wiki)
    library.put("readme.md", "from the repo", repo)
    library.ingest.mirror(WS, wiki, [])
    assert library.paths() == {"readme.md": repo}


def test_within_is_one_path_or_a_folder(library):
    # S3 keys `a` and `a/b.txt` can both exist: removing `a` is that key only.
    library.put("a", "key a", S3_DROP)
    library.put("a/b.txt", "key a/b", S3_DROP)
    library.put("c/d.txt", "key c/d", S3_DROP)
    library.ingest.mirror(WS, S3_DROP, [], within=["a"])
    assert set(library.paths()) == {"a/b.txt", "c/d.txt"}
    # A folder the drop folder saw deleted: everything under it, unless seen again.
    library.put("c/e.txt", "key c/e", S3_DROP)
    library.ingest.mirror(WS, S3_DROP, ["c/e.txt"], within=["c", "c/"])
    assert set(library.paths()) == {"a/b.txt", "c/e.txt"}


def test_a_document_still_being_indexed_is_deleted_not_renamed(library):
    doc = library.ingest.submit(Upload(WS, b"in flight", path="x.txt", source=DROP_FOLDER))
    assert doc.status is DocumentStatus.PENDING
    done = library.ingest.mirror(WS, DROP_FOLDER, ["y.txt"], fingerprint=lambda p: sha("in flight"))
    assert [d.id for d in done.deleted] == [doc.id] and done.renamed == []
    # Its job, run late, finds no document and leaves nothing behind.
    library.pipeline.process(library.queue.take())
    assert library.paths() == {}
