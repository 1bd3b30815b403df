"""search_text semantics (TelosDB §3, §3.1) through real embedded adapters."""

from __future__ import annotations

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.ports import DEFAULT_MODEL, EmbeddingGeneration, IndexEntry
from bunko.services.search.search import SearchOptions, SearchService

OTHER_WS = "22222222-2222-4222-8222-222222222222"


@pytest.fixture
def search_library(services):
    docs = {
        "manuals/search.md": (
            "manuals",
            "全文検索エンジンは文書の中の単語を探します。ハイブリッド検索も使えます。",
        ),
        "manuals/backup.md": (
            "manuals",
            "Backups run nightly. Restore a backup with the restore command.",
        ),
        "notes/cooking.txt": ("notes", "Slow cooking keeps the stew tender. Add salt at the end."),
        "notes/long.txt": (
            "notes",
            " ".join(f"Paragraph {i} mentions kettles and teapots." for i in range(150)),
        ),
    }
    for path, (category, text) in docs.items():
        services.ingest.submit_text(WS, path=path, content=text, category=category)
    assert services.queue.join(timeout=120)
    return services


def search(services, query, **kw):
    return services.search.search(WS, query, SearchOptions(**kw))


def test_hit_shape_has_every_field(search_library):
    result = search(search_library, "backup restore")
    item = result.items[0].to_dict()
    for key in (
        "id",
        "document_id",
        "path",
        "mime",
        "category",
        "content",
        "similarity",
        "vector_score",
        "text_score",
    ):
        assert key in item
    assert item["path"] == "manuals/backup.md"
    assert item["mime"] == "text/markdown"
    assert 0.0 <= item["similarity"] <= 1.0
    assert result.to_dict()["vector_search_used"] is False  # keyword-only fixture


def test_japanese_word_is_found_inside_running_text(search_library):
    result = search(search_library, "検索")
    assert result.items and result.items[0].path == "manuals/search.md"
    assert search(search_library, "エンジン").items[0].path == "manuals/search.md"


def test_empty_query_returns_no_items(search_library):
    for q in ("", "   ", "\n"):
        result = search(search_library, q)
        assert result.items == [] and result.to_dict()["items"] == []


def test_category_filter(search_library):
    only = search(
        search_library, "restore backup salt stew", category="notes", min_score=0, limit=10
    )
    assert only.items and all(i.category == "notes" for i in only.items)
    assert search(search_library, "backup", category="nonexistent").items == []


def test_document_filter(search_library):
    target = search_library.metadata.get_document_by_path(WS, "notes/cooking.txt")
    result = search(search_library, "backup stew", document_ids=frozenset({target.id}), min_score=0)
    assert [i.document_id for i in result.items] == [target.id]


def test_limit_and_grouping(search_library):
    grouped = search(search_library, "kettles teapots", limit=5, min_score=0)
    assert [i.path for i in grouped.items].count("notes/long.txt") == 1
    ungrouped = search(
        search_library, "kettles teapots", limit=5, min_score=0, group_by_document=False
    )
    assert len(ungrouped.items) == 5
    assert {i.path for i in ungrouped.items} == {"notes/long.txt"}
    assert len({i.id for i in ungrouped.items}) == 5


def test_min_score_cuts_off(search_library):
    everything = search(search_library, "restore the backup salt", min_score=0, limit=10)
    assert len(everything.items) >= 2
    cut = everything.items[0].similarity
    strict = search(search_library, "restore the backup salt", min_score=cut, limit=10)
    assert all(i.similarity >= cut for i in strict.items)
    assert len(strict.items) < len(everything.items)
    assert search(search_library, "restore the backup salt", min_score=1.01).items == []


def test_no_match_returns_empty_items(search_library):
    assert search(search_library, "zyzzyva quixotic").items == []


def test_other_workspace_sees_nothing(search_library):
    assert search_library.search.search(OTHER_WS, "backup", SearchOptions(min_score=0)).items == []


def test_stale_index_entries_never_come_back(search_library):
    # An index entry whose chunk is gone from metadata (e.g. a crash mid-delete) is dropped.
    search_library.index.index(
        [
            IndexEntry(
                chunk_id="ghost",
                document_id="ghost-doc",
                workspace_id=WS,
                revision=1,
                text="phantom backup restore",
            )
        ]
    )
    result = search(search_library, "phantom backup", min_score=0, limit=10)
    assert all(i.id != "ghost" for i in result.items)


def test_search_safely_reports_errors_in_the_unified_shape(search_library):
    class Broken:
        def hybrid_search(self, *a, **k):
            raise RuntimeError("index offline")

    search_library.search.generation = lambda ws: EmbeddingGeneration(DEFAULT_MODEL, None, Broken())
    result = search_library.search.search_safely(WS, "backup", SearchOptions())
    assert result.to_dict()["items"] == []
    assert "index offline" in result.to_dict()["error"]


def test_hostile_queries_do_not_error(search_library):
    for q in [
        '"',
        "*",
        "NEAR(a b)",
        "backup AND -restore",
        "'; DROP TABLE chunks; --",
        "a" * 10000,
    ]:
        assert isinstance(search(search_library, q, min_score=0).items, list)
    assert search(search_library, "backup").items  # the store is intact


def test_left_out_options_come_from_the_workspaces_saved_settings(search_library):
    """Every door (REST, MCP, chat) searches alike: what a caller leaves out, the service
    takes from the workspace's saved /settings; what the caller gives wins."""
    search_library.accounts.workspace_settings.update(WS, {"limit": 1}, may_watch_folders=False)
    assert len(search(search_library, "backup restore kettles stew", min_score=0).items) == 1
    assert (
        len(search(search_library, "backup restore kettles stew", min_score=0, limit=3).items) == 3
    )
    search_library.accounts.workspace_settings.update(
        WS, {"min_score": 0.75}, may_watch_folders=False
    )
    resolved = search_library.search.resolve(WS, SearchOptions())
    assert (resolved.limit, resolved.min_score) == (1, 0.75)
    assert search_library.search.resolve(WS, SearchOptions(min_score=0.1)).min_score == 0.1


def test_fusion_weighs_the_cosine_as_the_serving_model_was_measured(search_library, monkeypatch):
    from bunko.services.search import search as search_module
    from tests.fakes import FakeEmbedder

    weights = []
    real_fuse = search_module.fuse
    monkeypatch.setattr(
        search_module,
        "fuse",
        lambda *a, **k: weights.append(k["vector_weight"]) or real_fuse(*a, **k),
    )
    index = search_library.search.generation(WS).index
    for name, expected in (("multilingual-e5-small-q4", 0.5), ("use-multilingual-v3", 0.3)):
        embedder = FakeEmbedder(["backup", "restore"])
        embedder.name = name
        search_library.search.generation = lambda ws, e=embedder: EmbeddingGeneration(
            "some-config", e, index
        )
        assert search(search_library, "backup restore", min_score=0.0).items
        assert weights[-1] == expected
    search_library.search.vector_weight = 0.7  # BUNKO_VECTOR_WEIGHT set: every model gets it
    search(search_library, "backup restore", min_score=0.0)
    assert weights[-1] == 0.7


class DocumentReads:
    """The SQLite store under a search, recording its batch reads of documents and refusing a
    read of one document alone."""

    def __init__(self, store) -> None:
        self.store, self.batches = store, []

    def get_documents_by_ids(self, workspace_id, document_ids):
        self.batches.append(list(document_ids))
        return self.store.get_documents_by_ids(workspace_id, document_ids)

    def get_document(self, workspace_id, document_id):
        raise AssertionError("a search read a document on its own")

    def __getattr__(self, name):
        return getattr(self.store, name)


def test_a_search_reads_its_hits_documents_in_one_call(services):
    """Up to ~100 candidate documents a search: one batch read (one BatchGetItem on AWS),
    not a read per hit (a round trip each there)."""
    for n in range(40):
        services.ingest.submit_text(WS, path=f"many/{n}.txt", content=f"shared word, file {n}")
    assert services.queue.join(timeout=120)
    reads = DocumentReads(services.metadata)
    searching = SearchService(metadata=reads, generations=services.search.generations)
    options = SearchOptions(limit=50, min_score=0)
    batches = reads.batches
    found = searching.search(WS, "shared word", options)
    assert len(found.items) == 40 and len({hit.document_id for hit in found.items}) == 40
    assert len(batches) == 1 and len(batches[0]) == 40

    services.metadata.delete_document(WS, found.items[0].document_id)  # the index is stale
    batches.clear()
    again = searching.search(WS, "shared word", options)
    assert len(again.items) == 39 and found.items[0].document_id not in {
        hit.document_id for hit in again.items
    }
