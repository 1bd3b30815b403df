"""One upload, one pass (issue 34): the door builds an Upload once and IngestService.submit
takes it whole, so the upload policy is asked once, the MIME type resolved once, the bytes
hashed once and the path looked up once per attempt, whichever door it came through. The
upload's options (mode, embeddingModelId) live on the document, so a listing reads them with
the documents: one metadata read, and no settings store to read at all."""

from __future__ import annotations

import hashlib
from collections import Counter
from types import SimpleNamespace

import pytest

import bunko.services.ingest.ingest as ingest_module
import bunko.services.ingest.knowledge_base as kb_module
from bunko.domain import Document, DocumentStatus, new_id
from bunko.domain.accounts import ModelConfig
from bunko.domain.ingest_options import IngestDefaults
from bunko.http.routes.knowledge_bases import KnowledgeBaseFile
from bunko.services.embedding import shared_generation
from bunko.services.ingest import KnowledgeBaseService, Upload
from bunko.services.ingest.ingest import IngestService
from bunko.services.ingest.upload_policy import UploadPolicy
from bunko.services.library import Library
from tests.fakes import FakeBlobStore, FakeMetadataStore, FakeQueue, FakeSearchIndex

WS = "ws-1"
_COUNTED = ("get_document", "get_document_by_path", "find_documents", "save_document")


class CountingMetadata:
    """The fake metadata store, counting the reads and saves a service makes (its own calls
    inside the fake are not counted). `racer`: a document another upload adds at the same
    path just before this upload's own add lands."""

    def __init__(self, counts: Counter) -> None:
        self.inner, self.counts = FakeMetadataStore(), counts
        self.racer: Document | None = None

    def add_document(self, document: Document) -> None:
        if self.racer is not None:
            racer, self.racer = self.racer, None
            self.inner.add_document(racer)
        self.inner.add_document(document)

    def __getattr__(self, name: str):
        attr = getattr(self.inner, name)
        if name not in _COUNTED:
            return attr

        def counted(*args, **kwargs):
            self.counts[name] += 1
            return attr(*args, **kwargs)

        return counted


class CountingPolicy(UploadPolicy):
    def __init__(self, counts: Counter) -> None:
        super().__init__(max_file_bytes=10_000)
        self.counts = counts

    def path(self, path: str) -> str:
        self.counts["policy.path"] += 1
        return super().path(path)

    def file_name(self, filename: str | None) -> str:
        self.counts["policy.file_name"] += 1
        return super().file_name(filename)

    def size(self, size: int, *, what: str = "file") -> None:
        self.counts["policy.size"] += 1
        super().size(size, what=what)

    def file_type(self, name: str, content_type: str | None) -> None:
        self.counts["policy.file_type"] += 1
        super().file_type(name, content_type)


class EmbeddingConfigs:
    """One embedding model config, of the model this knowledge base embeds with."""

    def get_model_config(self, workspace_id: str, config_id: str) -> ModelConfig | None:
        if config_id != "cfg-1":
            return None
        return ModelConfig(
            id="cfg-1", workspace_id=workspace_id, name="mine", provider="local",
            model_id="lsa", type="embedding",
        )  # fmt: skip


class World:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: Counter = Counter()
        self.metadata = CountingMetadata(self.counts)
        self.queue = FakeQueue()
        blobs = FakeBlobStore()
        self.ingest = IngestService(
            metadata=self.metadata, blobs=blobs, queue=self.queue,
            generations=shared_generation(FakeSearchIndex(), None),
            defaults=IngestDefaults(chunk_size=500, chunk_overlap=50),
            policy=CountingPolicy(self.counts),
        )  # fmt: skip
        self.kb = KnowledgeBaseService(
            ingest=self.ingest, library=Library(metadata=self.metadata, blobs=blobs),
            model_configs=EmbeddingConfigs(),
            embedding_models=frozenset({"lsa"}),
        )  # fmt: skip
        self._spy(monkeypatch, ingest_module, "guess_mime", "mime")
        self._spy(monkeypatch, kb_module, "resolve_mime", "mime")
        sha256 = self._count("sha256", hashlib.sha256)
        monkeypatch.setattr(ingest_module, "hashlib", SimpleNamespace(sha256=sha256))

    def _count(self, name: str, function):
        def counted(*args, **kwargs):
            self.counts[name] += 1
            return function(*args, **kwargs)

        return counted

    def _spy(self, monkeypatch: pytest.MonkeyPatch, module, name: str, counter: str) -> None:
        monkeypatch.setattr(module, name, self._count(counter, getattr(module, name)))

    def taken(self) -> Counter:
        """The counts so far, then zero."""
        counts = Counter(self.counts)
        self.counts.clear()
        return counts

    def complete(self, doc: Document) -> None:
        stored = self.metadata.inner.get_document(WS, doc.id)
        stored.status = DocumentStatus.COMPLETED
        self.metadata.inner.save_document(stored)


def rest_upload(name: str, data: bytes, **options) -> Upload:
    """What POST /upload builds from its form."""
    fields = {"mode": "fast", "source": "upload", "mime": "text/plain", **options}
    return Upload(WS, data, name=name, **fields)


@pytest.fixture
def upload_world(monkeypatch: pytest.MonkeyPatch) -> World:
    return World(monkeypatch)


def test_a_file_at_a_path_is_checked_typed_hashed_and_looked_up_once(upload_world):
    doc = upload_world.ingest.submit(Upload(WS, b"hello", path="/notes/a.txt", source="cli"))
    assert (doc.path, doc.mime, doc.source) == ("notes/a.txt", "text/plain", "cli")
    assert upload_world.taken() == {
        "policy.path": 1, "policy.size": 1, "mime": 1, "sha256": 1, "get_document_by_path": 1,
    }  # fmt: skip
    upload_world.complete(doc)
    again = upload_world.ingest.submit(Upload(WS, b"hello", path="notes/a.txt", source="cli"))
    assert again.id == doc.id and again.status is DocumentStatus.COMPLETED  # nothing to do
    assert upload_world.taken() == {
        "policy.path": 1, "policy.size": 1, "mime": 1, "sha256": 1, "get_document_by_path": 1,
    }  # fmt: skip


def test_text_is_checked_typed_hashed_and_looked_up_once(upload_world):
    doc = upload_world.ingest.submit_text(WS, path="notes/b.md", content="# heading")
    assert (doc.mime, doc.source) == ("text/markdown", "agent")
    assert upload_world.taken() == {
        "policy.path": 1, "policy.size": 1, "mime": 1, "sha256": 1, "get_document_by_path": 1,
    }  # fmt: skip


def test_an_upload_by_name_asks_the_policy_once_and_looks_once_per_name(upload_world):
    first = upload_world.kb.upload(rest_upload("report.txt", b"first report"))
    assert upload_world.taken() == {
        "policy.file_name": 1, "policy.file_type": 1, "policy.size": 1, "mime": 1,
        "sha256": 1, "get_document_by_path": 1,
    }  # fmt: skip
    # Another file of the same name: `report.txt` is taken, so `report (2).txt`.
    second = upload_world.kb.upload(rest_upload("report.txt", b"second report"))
    assert (second.path, second.name) == ("report (2).txt", "report.txt")
    assert upload_world.taken() == {
        "policy.file_name": 1, "policy.file_type": 1, "policy.size": 1, "mime": 1,
        "sha256": 1, "get_document_by_path": 2,
    }  # fmt: skip
    # The same bytes again: the document that holds them, no copy.
    assert upload_world.kb.upload(rest_upload("report.txt", b"second report")).id == second.id
    assert upload_world.taken()["get_document_by_path"] == 2
    assert first.id != second.id


def test_a_lost_race_looks_again_without_hashing_again(upload_world):
    # Another upload takes `a.txt` with other bytes between this one's look and its write.
    upload_world.metadata.racer = Document(
        id=new_id(), workspace_id=WS, path="a.txt", name="a.txt", mime="text/plain",
        content_hash="other",
    )  # fmt: skip
    doc = upload_world.kb.upload(rest_upload("a.txt", b"mine"))
    assert doc.path == "a (2).txt"
    counts = upload_world.taken()
    # a.txt (free), a.txt again after the conflict (taken), a (2).txt
    assert counts["get_document_by_path"] == 3
    assert (counts["sha256"], counts["mime"], counts["policy.size"]) == (1, 1, 1)


def test_a_replacement_reads_its_document_once_and_its_path_once(upload_world):
    doc = upload_world.kb.upload(rest_upload("r.txt", b"one", category="notes"))
    upload_world.taken()
    newer = upload_world.kb.upload(
        rest_upload("whatever.txt", b"two", replaces=doc.id, category="x")
    )
    assert (newer.id, newer.revision, newer.path, newer.category) == (doc.id, 2, "r.txt", "notes")
    assert newer.source == "upload"
    assert upload_world.taken() == {
        "policy.file_name": 1, "policy.file_type": 1, "policy.size": 1, "mime": 1,
        "sha256": 1, "get_document": 1, "get_document_by_path": 1, "save_document": 1,
    }  # fmt: skip


def test_the_upload_options_are_kept_on_the_document(upload_world):
    doc = upload_world.kb.upload(
        rest_upload("a.txt", b"text", mode="precise", embedding_model_id="cfg-1")
    )
    stored = upload_world.metadata.inner.get_document(WS, doc.id)
    assert (stored.mode, stored.embedding_model_id) == ("precise", "cfg-1")
    assert upload_world.queue.jobs[-1].mode == "precise"
    upload_world.complete(doc)
    # The same bytes with other options: nothing to index, the options are the new ones
    # (as /upload always reported the options of the last upload).
    again = upload_world.kb.upload(rest_upload("a.txt", b"text"))
    assert again.id == doc.id and again.status is DocumentStatus.COMPLETED
    stored = upload_world.metadata.inner.get_document(WS, doc.id)
    assert (stored.mode, stored.embedding_model_id) == ("fast", None)
    # A door that chooses no options (mode None) leaves the document's own.
    upload_world.kb.upload(rest_upload("a.txt", b"text", mode="precise"))
    upload_world.ingest.submit(Upload(WS, b"new text", path="a.txt"))
    stored = upload_world.metadata.inner.get_document(WS, doc.id)
    assert (stored.revision, stored.mode) == (2, "precise")
    assert upload_world.queue.jobs[-1].mode == "fast"


def test_a_listing_reads_the_options_with_the_documents_in_one_read(upload_world):
    precise = upload_world.kb.upload(
        rest_upload("p.txt", b"precise text", mode="precise", embedding_model_id="cfg-1")
    )
    upload_world.kb.upload(rest_upload("f.txt", b"fast text"))
    upload_world.ingest.submit(Upload(WS, b"dropped", path="d.txt"))
    upload_world.taken()
    page = upload_world.kb.list(WS, limit=10)
    files = {f.originalName: f for f in map(KnowledgeBaseFile.of, page.documents)}
    assert upload_world.taken() == {"find_documents": 1}  # and the service has no settings store
    assert (files["p.txt"].mode, files["p.txt"].embeddingModelId) == ("precise", "cfg-1")
    assert (files["f.txt"].mode, files["f.txt"].embeddingModelId) == ("fast", None)
    assert (files["d.txt"].mode, files["d.txt"].embeddingModelId) == ("fast", None)
    assert files["p.txt"].id == precise.id
